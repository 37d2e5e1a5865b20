import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { USAGE_EXIT } from '../../daemon/cli/exitCodes.ts';
import { newMachine, runLatch } from '../support/latchMachine.ts';

describe('latch completion', () => {
  const machine = newMachine();
  let commands: string[];
  beforeAll(async () => {
    // The commands as `latch --help` lists them: the script must offer every one.
    const help = (await runLatch(machine, ['--help'])).stdout;
    commands = [...help.split('Commands:\n')[1]!.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!);
    expect(commands).toEqual(expect.arrayContaining(['init', 'request', 'exec', 'completion', 'help']));
  });

  it.each(['bash', 'zsh', 'fish'])('prints a %s script with every command and option', async (shell) => {
    const ran = await runLatch(machine, ['completion', shell]);
    expect(ran.code).toBe(0);
    for (const word of [
      ...commands,
      'verify',
      'deploy',
      'claude-code',
      'codex',
      '--json',
      '--quorum',
      '--timeout',
      '--risk',
      '--dry-run',
      '--wrangler',
    ])
      expect(ran.stdout).toContain(shell === 'fish' ? word.replace(/^--/, '-l ') : word);
  });

  it('refuses a shell it has no script for, as a usage error', async () => {
    expect((await runLatch(machine, ['completion', 'tcsh'])).code).toBe(USAGE_EXIT);
  });

  it('completes commands, subcommands, options and their values in bash', async () => {
    const script = join(mkdtempSync(join(tmpdir(), 'latch-completion-')), 'latch.bash');
    writeFileSync(script, (await runLatch(machine, ['completion', 'bash'])).stdout);
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _latch; echo "\${COMPREPLY[*]}"`,
          script,
          ...words,
        ],
        { encoding: 'utf8' },
      ).trim();
    expect(complete('latch', 're')).toBe('request relay');
    expect(complete('latch', 'audit', '')).toBe('verify help -h --help');
    expect(complete('latch', 'relay', '')).toBe('deploy help -h --help');
    expect(complete('latch', 'relay', 'deploy', '--d')).toBe('--dry-run');
    expect(complete('latch', 'install', 'c')).toBe('claude-code codex');
    expect(complete('latch', 'request', '--risk', 'h')).toBe('high');
    expect(complete('latch', 'request', '--title', 'init', '--j')).toBe('--json');
    // After --, the words are the command latch exec runs: Latch offers nothing of its own.
    expect(complete('latch', 'exec', '--', 'ls', '--')).toBe('');
  });
});
