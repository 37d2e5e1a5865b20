import { basename } from 'node:path';
import { ASSIGNMENT, literalText, type SimpleCommand } from './commandWords.ts';
import { WRAPPERS } from './scriptNames.ts';

/** Options with which crontab, at and batch only list, show or remove what is scheduled. */
const ONLY_LISTS: Record<string, RegExp> = {
  crontab: /^-[eiu]*[lr][eiu]*$/,
  at: /^-[lrdc]$/,
  batch: /^-[lrdc]$/,
};
/** systemd-run's options that make a timer, a path or a socket unit, and launchctl's that load a job. */
const MAKES_A_TIMER = /^--(on-|timer-property|path-property|socket-property)/;
const LAUNCHCTL_LOADS = /^(load|bootstrap|submit)$/;

/**
 * A command that schedules code to run later as the user, outside any gate: a crontab put in
 * place (`crontab -`, `crontab file`, `crontab -e`), a job for `at` or `batch`, a timer
 * `systemd-run` makes (`--on-calendar`, `--on-active`), a job `launchctl` loads; run as the
 * program or behind wrappers (`sudo crontab -`). What it runs is read, if at all, when the call
 * is judged; it runs whatever the file holds then, later and again. The answer is the command
 * as a person reads it.
 */
export function schedulesCode(command: SimpleCommand): string | undefined {
  const texts = command.map(literalText);
  let wrapped = false;
  for (let at = 0; at < texts.length; at++) {
    const program = basename(texts[at] ?? '');
    const args = texts.slice(at + 1);
    const some = (pattern: RegExp) => args.findIndex((text) => text === undefined || pattern.test(text));
    const only = ONLY_LISTS[program];
    if (only) return args.some((text) => text !== undefined && only.test(text)) ? undefined : program;
    if (program === 'systemd-run' && some(MAKES_A_TIMER) !== -1) return 'systemd-run --on-…';
    const loads = program === 'launchctl' ? some(LAUNCHCTL_LOADS) : -1;
    if (loads !== -1) return `launchctl ${args[loads] ?? '…'}`;
    const text = texts[at];
    if (text === undefined) return undefined;
    if (WRAPPERS.has(program)) {
      wrapped = true;
      continue;
    }
    if (ASSIGNMENT.test(text)) continue;
    // Past a wrapper, its options and their values, to the program it runs: a number, a path, a
    // word after an option (`sudo -u me`, `strace -o /tmp/t`, `chroot /`, `timeout -s KILL 60`).
    const optionOrValue =
      text.startsWith('-') ||
      /^\d[\d.]*[smhd]?$/.test(text) ||
      text.includes('/') ||
      (texts[at - 1]?.startsWith('-') ?? false);
    if (!wrapped || !optionOrValue) return undefined;
  }
  return undefined;
}
