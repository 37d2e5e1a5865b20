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

/**
 * A FUSE mount whose server never answers, until it is ended (unmounted, its server killed);
 * with `ownNamespace`, in a mount namespace of its own, which only its /proc/<pid>/root shows.
 */
async function hangingMount(mountPoint: string, { ownNamespace = false } = {}) {
  mkdirSync(mountPoint, { recursive: true });
  const argv = ['python3', HANGING_FUSE, mountPoint];
  const [program, ...args] = ownNamespace ? ['unshare', '-m', '--propagation', 'private', ...argv] : argv;
  const server = spawn(program!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const [said] = (await once(server.stdout, 'data')) as [Buffer];
  if (!said.toString().includes('mounted')) throw new Error(`no mount: ${said.toString()}`);
  return {
    pid: server.pid!,
    end: () => {
      server.kill('SIGKILL');
      spawnSync('umount', ['-l', mountPoint]);
    },
  };
}

describe.skipIf(!canMount)('a hook asked about a file on a file system whose server never answers', () => {
  it('answers before the agent’s timeout, without looking there, also through a link or another mount namespace (reviews ha, rv6)', async () => {
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
    // Review rv6: a mount in another namespace, reached through its process's root.
    const elsewhere = join(host.user, 'elsewhere');
    const ends: (() => void)[] = [];
    try {
      const mounted = await hangingMount(mountPoint);
      ends.push(mounted.end);
      const mountedElsewhere = await hangingMount(elsewhere, { ownNamespace: true });
      ends.push(mountedElsewhere.end);
      symlinkSync(mountPoint, join(host.project, 'linked'));
      for (const [tool, input] of [
        ['Write', { file_path: join(mountPoint, 'notes.txt'), content: 'x' }],
        ['Edit', { file_path: 'linked/notes.txt', old_string: 'a', new_string: 'b' }],
        ['Write', { file_path: `/proc/${mountedElsewhere.pid}/root${elsewhere}/notes.txt`, content: 'x' }],
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
      for (const end of ends) end();
      for (const folder of [mountPoint, elsewhere]) rmSync(folder, { recursive: true, force: true });
    }
  });
});
