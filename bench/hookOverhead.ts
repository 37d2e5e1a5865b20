import { spawnSync } from 'node:child_process';
import { DEFAULT_POLICY } from '../daemon/policy/defaultPolicy.ts';
import { evaluatePolicy, parsePolicy } from '../daemon/policy/policy.ts';
import type { BenchEnvironment } from './environment.ts';
import { median, ms, percentile, type BenchRow } from './stats.ts';

const LATCH = new URL('../daemon/bin/latch.cjs', import.meta.url).pathname;

function wallTime(command: string, args: string[], env: NodeJS.ProcessEnv, input?: string): number {
  const start = performance.now();
  const ran = spawnSync(command, args, { env, input, encoding: 'utf8' });
  const elapsed = performance.now() - start;
  if (ran.status !== 0) throw new Error(`${args.join(' ')} failed: ${ran.stderr}`);
  return elapsed;
}

/** `latch hook claude-code` for a call the policy allows locally, whole process, against `node -e 0`. */
export function hookOverhead(env: BenchEnvironment, runs: number): BenchRow {
  const input = JSON.stringify({
    session_id: 's',
    hook_event_name: 'PreToolUse',
    tool_name: 'Read',
    tool_input: { file_path: '/etc/hosts' },
    cwd: '/',
    tool_use_id: 't',
  });
  // Without the extra CA certificates a machine's environment may name (this one's does, for its
  // npm registry): Node parses them at every start, 40 ms here, which flattered the ratio, and
  // the hook makes no TLS connection of its own.
  const processEnv = { ...env.machine.env, NODE_EXTRA_CA_CERTS: undefined };
  const hook: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < runs; i++) {
    bare.push(wallTime(process.execPath, ['-e', '0'], processEnv));
    hook.push(wallTime(process.execPath, [LATCH, 'hook', 'claude-code'], processEnv, input));
  }
  const ratio = median(hook) / median(bare);
  return {
    name: 'hook overhead',
    figure: `${ms(median(hook))} median (${ratio.toFixed(2)}× bare node)`,
    baseline: `node -e 0: ${ms(median(bare))} median`,
    goal: '≤ 1.15× bare node',
    met: ratio <= 1.15,
    data: { runs, hookMedian: median(hook), nodeMedian: median(bare), ratio },
  };
}

/** The in-process guard: a policy decision for one call, per call, against an empty call. */
export function guardCost(calls: number): BenchRow {
  const policy = parsePolicy(DEFAULT_POLICY);
  const call = {
    tool: 'Bash',
    command: 'git push --force origin main',
    paths: [] as string[],
    cwd: '/srv/app',
  };
  const guard: number[] = [];
  const empty: number[] = [];
  const nothing = () => undefined;
  for (let i = 0; i < calls; i++) {
    let start = process.hrtime.bigint();
    evaluatePolicy(policy, call);
    guard.push(Number(process.hrtime.bigint() - start) / 1e6);
    start = process.hrtime.bigint();
    nothing();
    empty.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return {
    name: 'in-process guard',
    figure: `p50 ${ms(median(guard))}, p99 ${ms(percentile(guard, 99))}`,
    baseline: `an empty call p99 ${ms(percentile(empty, 99))}`,
    goal: 'p99 ≤ 50 µs',
    met: percentile(guard, 99) <= 0.05,
    data: { calls, p50: median(guard), p99: percentile(guard, 99), emptyP99: percentile(empty, 99) },
  };
}
