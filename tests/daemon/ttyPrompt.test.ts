import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/buildStamp.ts';

/**
 * The terminal fallback asks on /dev/tty only from the terminal's foreground process group: a
 * hook in another group that read the terminal or set its mode would be stopped by the kernel
 * (SIGTTIN, SIGTTOU), never reach its own deadline, and be killed at the agent's timeout, after
 * which the tool runs. Shown under a real pseudo-terminal (`script`), with the probe in the
 * group the terminal runs, then in a group of its own (perl's setpgrp), as an agent that starts
 * its hooks in their own group, or was itself started with `&`, would run it.
 */
const folder = mkdtempSync(join(tmpdir(), 'latch-tty-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const probe = join(folder, 'probe.mjs');
writeFileSync(
  probe,
  `import { canPromptOnTty } from ${JSON.stringify(join(ROOT, 'daemon/fallback/ttyPrompt.ts'))};\n` +
    `process.stdout.write('can prompt: ' + canPromptOnTty() + '\\n');\n`,
);
const run = join(folder, 'run.sh');
writeFileSync(
  run,
  [
    'if [ "$1" = own-group ]; then',
    `  perl -e 'setpgrp(0, 0); exec @ARGV' "$NODE" --import tsx "$PROBE"`,
    'else',
    '  "$NODE" --import tsx "$PROBE"',
    'fi',
    // The shell stays, so that the probe is its child rather than the session's leader.
    'true',
    '',
  ].join('\n'),
);

/** What the probe says under a terminal of its own, in its process group or `own-group`. */
const underTerminal = (group: 'foreground' | 'own-group') =>
  execFileSync('script', ['-qec', `sh ${run} ${group}`, '/dev/null'], {
    cwd: ROOT,
    env: { ...process.env, NODE: process.execPath, PROBE: probe },
    encoding: 'utf8',
    timeout: 30_000,
  });

describe('the terminal fallback', () => {
  it('asks on the terminal from its foreground process group', () => {
    expect(underTerminal('foreground')).toMatch(/can prompt: true/);
  });

  it('does not from a process group of its own, which the terminal would stop', () => {
    expect(underTerminal('own-group')).toMatch(/can prompt: false/);
  });
});
