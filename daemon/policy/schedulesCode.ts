import { basename } from 'node:path';
import { literalText, type SimpleCommand } from './commandWords.ts';

/** Options after which crontab, at and batch only list or remove what is scheduled. */
const ONLY_LISTS = /^-[a-zA-Z]*[lrdc]/;
/** systemd-run's options that make a timer, and launchctl's commands that load a job. */
const MAKES_A_TIMER = /^--(on-|timer-property)/;
const LAUNCHCTL_LOADS = /^(load|bootstrap|submit)$/;

/**
 * A command that schedules code to run later as the user, outside any gate: a crontab put in
 * place (`crontab -`, `crontab file`, `crontab -e`), a job for `at` or `batch`, a timer
 * `systemd-run` makes (`--on-calendar`, `--on-active`), a job `launchctl` loads. What it runs is
 * read, if at all, when the call is judged; it runs whatever the file holds then, later and
 * again. The answer is the command as a person reads it.
 */
export function schedulesCode(command: SimpleCommand): string | undefined {
  const texts = command.map(literalText);
  const program = basename(texts[0] ?? '');
  const args = texts.slice(1);
  const some = (pattern: RegExp) => args.findIndex((text) => text === undefined || pattern.test(text));
  if (['crontab', 'at', 'batch'].includes(program))
    return args.some((text) => text !== undefined && ONLY_LISTS.test(text)) ? undefined : program;
  if (program === 'systemd-run' && some(MAKES_A_TIMER) !== -1) return 'systemd-run --on-…';
  const loads = program === 'launchctl' ? some(LAUNCHCTL_LOADS) : -1;
  return loads === -1 ? undefined : `launchctl ${args[loads] ?? '…'}`;
}
