import { LIMITS } from '../../shared/messages/limits.ts';
import { sanitizeText } from '../../shared/text/sanitizeText.ts';

const asOneLine = { maxBytes: LIMITS.nameBytes, multiline: false } as const;

/**
 * A host's name as a phone shows it and a terminal prints it: config.toml is the user's to edit,
 * and a terminal acts on escapes.
 */
export const shownHostName = (name: string): string => sanitizeText(name, asOneLine).text;

/** A name `latch init` takes: what the wire carries as it is, nothing a phone would show otherwise. */
export const isHostName = (name: string): boolean =>
  name.trim() !== '' && !sanitizeText(name, asOneLine).changed;
