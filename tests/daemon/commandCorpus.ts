import type { CorpusEntry } from './commandCorpus/corpusEntry.ts';
import { DESTRUCTIVE_OR_PUBLISHING } from './commandCorpus/destructiveOrPublishing.ts';
import { EVASIVE } from './commandCorpus/evasive.ts';
import { READ_ONLY_LOOKING } from './commandCorpus/readOnlyLooking.ts';

/** Every entry of the corpus, kept in three modules by kind of command. */
export const COMMAND_CORPUS: CorpusEntry[] = [...READ_ONLY_LOOKING, ...DESTRUCTIVE_OR_PUBLISHING, ...EVASIVE];
