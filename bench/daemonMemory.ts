import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gateCall } from '../daemon/socket/gateClient.ts';
import type { BenchEnvironment } from './environment.ts';
import type { BenchRow } from './stats.ts';

export const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** The daemon's resident memory while idle, after `requests` more gated calls. */
export async function daemonMemory(env: BenchEnvironment, requests: number): Promise<BenchRow> {
  process.stderr.write(`bench: daemon RSS before: ${rssMb(env.daemon.child.pid!).toFixed(1)} MB\n`);
  for (let i = 0; i < requests; i++) {
    await gateCall(
      { agent: 'bench', tool: 'Read', paths: [`/srv/file-${i}`], interactive: false, canDefer: false },
      { socketPath: env.machine.socket },
    );
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const daemon = rssMb(env.daemon.child.pid!);
  const idle = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const bare = rssMb(idle.pid!);
  idle.kill();
  return {
    name: 'daemon RSS (idle)',
    figure: `${daemon.toFixed(1)} MB after ${requests}+ calls`,
    baseline: `an idle node process: ${bare.toFixed(1)} MB`,
    goal: '≤ 50 MB',
    met: daemon <= 50,
    data: { requests, daemonMb: daemon, nodeMb: bare },
  };
}
