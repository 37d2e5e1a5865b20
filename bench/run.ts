/**
 * `npm run bench`: every benchmark against the real system (relay in workerd, daemon, push
 * stand-in, Chromium), each figure beside a baseline measured in the same run. `--smoke` runs
 * each with a handful of samples, to check the scripts still work (the test suite does this).
 * `--only approvals,memory` runs some of them (cost, approvals, polling, hook, throughput, pwa,
 * memory, freeze, freeze10k, soak), for profiling one figure. The soak (minutes) and the freeze
 * to 10,000 daemons run only with `--only=soak` / `--only=freeze10k`, and small in `--smoke`. Writes the figures to
 * test-output/bench.json for docs/benchmarks.md.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { approvalLatency, pollingPeer } from './approvals.ts';
import { approvalCost } from './cost.ts';
import { daemonMemory } from './daemonMemory.ts';
import { benchEnvironment } from './environment.ts';
import { freezeFanout } from './freezeFanout.ts';
import { guardCost, hookOverhead } from './hookOverhead.ts';
import { pwaStartup } from './pwaStartup.ts';
import { relayThroughput } from './relayThroughput.ts';
import { recordSoakRows, soak } from './soak.ts';
import { median, ms, type BenchRow } from './stats.ts';
import { stopOnSignal } from './stopOnSignal.ts';

const smoke = process.argv.includes('--smoke');
const scale = smoke
  ? {
      approvals: 5,
      pollSamples: 1,
      pollScale: 0.1,
      daemons: 50,
      manyDaemons: 200,
      freezePoll: 500,
      freezePolls: 1,
      freezes: 2,
      hookRuns: 3,
      guardCalls: 10_000,
      throughputMs: 1000,
      pwa: 1,
      memory: 50,
      cost: { approvals: 2, idleSeconds: 2 },
      soak: { calls: 400, approvals: 20, lanes: 4, sampleEveryMs: 100, warmUpMs: 0 },
    }
  : {
      approvals: 500,
      pollSamples: 20,
      pollScale: 1,
      daemons: 1000,
      manyDaemons: 10_000,
      freezePoll: 5000,
      freezePolls: 3,
      freezes: 5,
      hookRuns: 20,
      guardCalls: 200_000,
      throughputMs: 10_000,
      pwa: 10,
      memory: 1000,
      cost: { approvals: 20, idleSeconds: 60 },
      soak: { calls: 100_000, approvals: 5000, lanes: 8, sampleEveryMs: 1000, warmUpMs: 120_000 },
    };

const only = process.argv
  .find((argument) => argument.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const selected = (name: string) => !only || only.includes(name);
const soakSelected = only ? only.includes('soak') : smoke;

const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
const rows: BenchRow[] = [];
let env: Awaited<ReturnType<typeof benchEnvironment>> | undefined;
stopOnSignal(async () => env?.stop());
env = await benchEnvironment();
try {
  // First, while nothing else has run: the meter counts the whole relay, alarms of other fleets too.
  if (selected('cost')) {
    log(
      `cost: billable requests over ${scale.cost.approvals} approvals and ${scale.cost.idleSeconds} s idle`,
    );
    rows.push(...(await approvalCost(env, scale.cost.approvals, scale.cost.idleSeconds)));
  }
  if (selected('approvals')) {
    log(`tap→unblocked and request→push, ${scale.approvals} requests`);
    rows.push(...(await approvalLatency(env, scale.approvals)));
  }
  for (const seconds of selected('polling') ? [1, 3] : []) {
    log(`the peers' design: a hook polling every ${seconds} s`);
    const polled = await pollingPeer(env, seconds * 1000 * scale.pollScale, scale.pollSamples);
    rows.push({
      name: `peer: poll every ${(seconds * scale.pollScale).toFixed(1)} s`,
      figure: `median ${ms(median(polled))} tap→seen`,
      baseline: 'tap→unblocked above',
      goal: '(reference)',
      met: undefined,
      data: { samples: polled.length, median: median(polled) },
    });
  }
  if (selected('hook')) {
    log('hook overhead');
    rows.push(hookOverhead(env, scale.hookRuns));
    rows.push(guardCost(scale.guardCalls));
  }
  if (selected('throughput')) {
    log('relay throughput');
    rows.push(await relayThroughput(env, scale.throughputMs));
  }
  if (selected('pwa')) {
    log('PWA');
    rows.push(...(await pwaStartup(env, scale.pwa)));
  }
  if (selected('memory')) {
    log('daemon memory');
    rows.push(await daemonMemory(env, scale.memory));
  }
  if (selected('freeze')) {
    log(`freeze fan-out to ${scale.daemons} WebSockets`);
    rows.push(
      await freezeFanout(env, {
        count: scale.daemons,
        freezes: scale.freezes,
        pollIntervalMs: scale.freezePoll,
        pollSamples: scale.freezePolls,
      }),
    );
  }
  if (soakSelected) {
    log(`soak: ${scale.soak.calls} gated calls, ${scale.soak.approvals} approved on a phone`);
    rows.push(...(await soak(env, scale.soak)));
  }
  // Last, and only when asked for (or small, in --smoke): past 2,000-3,000 WebSockets on one
  // fleet the local relay (wrangler dev) slows to a crawl, grows to gigabytes and resets them.
  if (only ? only.includes('freeze10k') : smoke) {
    log(`freeze fan-out to ${scale.manyDaemons} WebSockets`);
    rows.push(
      await freezeFanout(env, { count: scale.manyDaemons, freezes: 1, pollIntervalMs: 0, pollSamples: 0 }),
    );
  }
} finally {
  await env.stop();
}

const width = (pick: (row: BenchRow) => string) => Math.max(...rows.map((row) => pick(row).length));
const columns: [string, (row: BenchRow) => string][] = [
  ['benchmark', (row) => row.name],
  ['figure', (row) => row.figure],
  ['baseline (same run)', (row) => row.baseline],
  ['goal', (row) => row.goal],
  ['met', (row) => (row.met === undefined ? '' : row.met ? 'yes' : 'NO')],
];
const line = (cells: string[]) =>
  cells.map((cell, i) => cell.padEnd(Math.max(columns[i]![0].length, width(columns[i]![1])))).join('  ');
console.log(
  `\n${smoke ? 'SMOKE RUN (few samples; figures not meaningful)\n' : ''}${line(columns.map(([title]) => title))}`,
);
for (const row of rows) console.log(line(columns.map(([, pick]) => pick(row))));
mkdirSync(new URL('../test-output/', import.meta.url), { recursive: true });
writeFileSync(
  new URL(`../test-output/bench${smoke ? '-smoke' : only ? '-partial' : ''}.json`, import.meta.url),
  JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      smoke,
      rows,
    },
    null,
    2,
  ),
);
if (soakSelected && !smoke) recordSoakRows(new URL('../test-output/bench.json', import.meta.url), rows);
