import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXEC_DENIED } from '../../daemon/cli/commands/exec.ts';
import { USAGE_EXIT } from '../../daemon/cli/exitCodes.ts';
import { newMachine, runLatch } from '../support/latchMachine.ts';

describe('usage errors', () => {
  const machine = newMachine();

  it.each([
    ['an unknown command', ['deploy'], /^latch: unknown command 'deploy'/],
    ['an unknown option', ['status', '--verbose'], /^latch: unknown option '--verbose'/],
    ['a missing required option', ['request'], /^latch: required option '--title <title>' not specified/],
    ['a missing argument', ['exec'], /^latch: missing required argument 'command'/],
    // `latch daemon` alone runs the daemon's own bundle; anything after it goes to the parser.
    ['an argument the daemon does not take', ['daemon', 'now'], /^latch: too many arguments for 'daemon'/],
    ['a value not among the choices', ['install', 'vim'], /^latch: .*'vim' is invalid .*claude-code, codex/],
    ['a command group without its command', ['audit'], /Usage: latch audit/],
    [
      'a bad value Latch itself checks',
      ['init', '--fleet', 'not an id'],
      /^latch: --fleet is not a valid fleet id/,
    ],
  ])('exits 2 on %s, whether commander or Latch found it', async (_what, args, message) => {
    const ran = await runLatch(machine, args);
    expect(ran.code).toBe(USAGE_EXIT);
    expect(ran.stderr).toMatch(message);
    expect(ran.stdout).toBe('');
  });

  it.each([['--help'], ['--version'], ['request', '--help'], ['help', 'exec'], ['daemon', '--help']])(
    'exits 0 for %s',
    async (...args) => {
      expect((await runLatch(machine, args)).code).toBe(0);
    },
  );

  // An option's value may come from an agent (`--title "$DESCRIPTION"`): `-V` there printed the
  // version and exited 0, which a script reads as approved, and nobody was asked.
  it.each(['-V', '--version', '-h', '--help'])(
    'takes %s after a command as an option’s value: the call is judged, not answered 0',
    async (value) => {
      const asked = await runLatch(machine, ['request', '--title', value, '--json']);
      expect(asked.code).toBe(3);
      expect(JSON.parse(asked.stdout)).toMatchObject({ decision: 'unavailable' });
      expect((await runLatch(machine, ['exec', '--title', value, '--', 'true'])).code).toBe(EXEC_DENIED);
    },
  );

  it.each([
    ['request', '--timeout', 'abc', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '-5', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '0', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '1.5', 'whole seconds from 1 to 86400'],
    ['request', '--timeout', '86401', 'whole seconds from 1 to 86400'],
    ['request', '--risk', 'extreme', 'low, medium, high, critical'],
    ['exec', '--risk', 'extreme', 'low, medium, high, critical'],
    ['init', '--quorum', '0', 'a whole number from 1 to 16'],
    ['init', '--quorum', 'two', 'a whole number from 1 to 16'],
    ['init', '--quorum', '17', 'a whole number from 1 to 16'],
    ['pair', '--timeout', 'abc', 'whole seconds from 60 to 3600'],
    ['pair', '--timeout', '59', 'whole seconds from 60 to 3600'],
  ])('refuses latch %s %s %s as a usage error naming the option', async (command, option, value, range) => {
    const rest = command === 'request' ? ['--title', 'x'] : command === 'exec' ? ['--', 'true'] : [];
    const ran = await runLatch(machine, [command, option, value, ...rest]);
    expect(ran.code).toBe(USAGE_EXIT);
    expect(ran.stderr).toContain(`latch: option '${option} <`);
    expect(ran.stderr).toContain(`argument '${value}' is invalid`);
    expect(ran.stderr).toContain(range);
    // Refused before anything was done: no config written, nothing asked.
    expect(existsSync(machine.files.config)).toBe(false);
    expect(ran.stdout).toBe('');
  });
});
