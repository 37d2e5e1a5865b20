import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newHost, readJson } from '../support/agentHooks.ts';
import { hookInput } from '../support/latchMachine.ts';
import { runToEnd } from '../support/processes.ts';

const HANGING_FUSE = new URL('../support/hangingFuse.py', import.meta.url).pathname;
/** Mounting needs root and /dev/fuse (fusermount3 is not on every machine): elsewhere, skipped. */
const canMount =
  process.getuid?.() === 0 && existsSync('/dev/fuse') && spawnSync('python3', ['-V']).status === 0;

/** A FUSE mount whose server never answers, until it is ended (unmounted, its server killed). */
async function hangingMount(mountPoint: string) {
  mkdirSync(mountPoint, { recursive: true });
  const server = spawn('python3', [HANGING_FUSE, mountPoint], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [said] = (await once(server.stdout, 'data')) as [Buffer];
  if (!said.toString().includes('mounted')) throw new Error(`no mount: ${said.toString()}`);
  return () => {
    server.kill('SIGKILL');
    spawnSync('umount', ['-l', mountPoint]);
  };
}

describe.skipIf(!canMount)('a hook asked about a file on a file system whose server never answers', () => {
  it('answers before the agent’s timeout, without looking there, also through a link (review ha)', async () => {
    const host = await newHost();
    await host.run(['install', 'claude-code']);
    const installed = (
      readJson(join(host.claude, 'settings.json')) as {
        hooks: Record<string, { hooks: { command: string }[] }[]>;
      }
    ).hooks['PreToolUse']![0]!.hooks[0]!.command;
    // The agent's timeout, short for the test: the agent kills the hook at 12 s and runs the tool.
    const command = installed.replace(/--timeout \d+/, '--timeout 12');
    const mountPoint = join(host.user, 'mount');
    const end = await hangingMount(mountPoint);
    symlinkSync(mountPoint, join(host.project, 'linked'));
    try {
      for (const [tool, input] of [
        ['Write', { file_path: join(mountPoint, 'notes.txt'), content: 'x' }],
        ['Edit', { file_path: 'linked/notes.txt', old_string: 'a', new_string: 'b' }],
      ] as const) {
        // No daemon here: a hook that did not wait on the mount answers at once.
        const ran = await runToEnd(['/bin/sh', '-c', command], {
          env: host.machine.env,
          input: hookInput('PreToolUse', tool, input, { cwd: host.project }),
          timeoutMs: 12_000,
        });
        expect(ran.code, tool).toBe(2);
        expect(ran.stderr, tool).toMatch(/^latch: daemon_unreachable/);
      }
    } finally {
      end();
      rmSync(mountPoint, { recursive: true, force: true });
    }
  });
});
