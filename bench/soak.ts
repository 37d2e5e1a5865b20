import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gateCall } from '../daemon/socket/gateClient.ts';
import type { GateAnswer } from '../daemon/socket/localApi.ts';
import { initMachine, newMachine, startDaemon, type LatchMachine } from '../tests/support/latchMachine.ts';
import { decideAtRelay, openAtRelay, tokenFor } from '../tests/support/phoneAtRelay.ts';
import { pairSoftwarePhone } from '../tests/support/softwarePairing.ts';
import type { TestPhone } from '../scripts/lib/softwarePhone.ts';
import { rssMb } from './daemonMemory.ts';
import type { BenchEnvironment } from './environment.ts';
import type { BenchRow } from './stats.ts';

export interface SoakScale {
  calls: number;
  /** Of `calls`, how many a phone approves; the rest alternate policy allows and denies. */
  approvals: number;
  /** Calls in flight at once, as several agents on one machine. */
  lanes: number;
  sampleEveryMs: number;
  /**
   * Samples before this are left out of the comparison: the time state takes to fill up to its
   * bound (a retention's worth of requests, keep_files of audit), which is what is measured.
   */
  warmUpMs: number;
}

const SOAK_POLICY = `
default = "ask"
[[rule]]
name = "reads"
tool = "Read"
action = "allow"
[[rule]]
name = "no deletes"
tool = "Delete"
action = "deny"
[[rule]]
name = "soak"
tool = "soak"
action = "ask"
risk = "low"
`;

/**
 * State is bounded by pruning and rotation, so the soak makes both happen while it runs: settled
 * requests kept 0.001 day (86 s), audit.log rotated at 256 KiB with 3 old files kept. No burst
 * hold: a soak approves far faster than a person.
 */
const soakConfig = (text: string) =>
  text
    .replace(/^burst_window_seconds = \d+$/m, 'burst_window_seconds = 1')
    .replace(/^rotate_bytes = \d+$/m, `rotate_bytes = ${256 * 1024}`)
    .replace(/^keep_files = \d+$/m, 'keep_files = 3')
    .replace(/^requests_days = [\d.]+$/m, 'requests_days = 0.001');

/** A phone approval that takes longer than this is a hang, counted as an error. */
const APPROVAL_DEADLINE_MS = 60_000;

type CallKind = 'allow' | 'deny' | 'approval';
interface Sample {
  /** ms since the soak began */
  at: number;
  rssMb: number;
  fds: number;
  stateBytes: number;
  auditBytes: number;
}
interface SoakError {
  call: number;
  kind: CallKind;
  error: string;
}

/**
 * 100,000 gated calls through a daemon's socket, as hooks make them, against the real relay: policy
 * allows, policy denies, and phone approvals signed by a software passkey. Samples the daemon's
 * RSS, open descriptors and files over the run and compares the last tenth with the first.
 */
export async function soak(env: BenchEnvironment, scale: SoakScale): Promise<BenchRow[]> {
  const machine = newMachine();
  await initMachine(machine, { relay: env.origin, policy: SOAK_POLICY, config: soakConfig });
  const daemon = await startDaemon(machine);
  try {
    const { phone, fleet } = await pairSoftwarePhone(machine, env.driver, {
      push: (await env.push.subscribe()).subscription,
    });
    const pid = daemon.child.pid!;
    const samples: Sample[] = [];
    const startedAt = Date.now();
    const sample = () => samples.push({ at: Date.now() - startedAt, ...sampleDaemon(pid, machine) });
    sample();
    const sampler = setInterval(sample, scale.sampleEveryMs);
    const errors: SoakError[] = [];
    // One phone signs one approval at a time, as a person taps: its passkey's counter must rise
    // in the order the relay sees the tokens.
    // A turn that hangs (a relay call without an answer) fails, not every approval after it.
    let lastTurn: Promise<unknown> = Promise.resolve();
    const phoneTurn = <T>(work: () => Promise<T>): Promise<T> => {
      const turn = lastTurn.then(() => withinMs(APPROVAL_DEADLINE_MS, work()));
      lastTurn = turn.catch(() => {});
      return turn;
    };
    let next = 0;
    const approvalEvery = Math.floor(scale.calls / scale.approvals);
    const lane = async () => {
      for (let call = next++; call < scale.calls; call = next++) {
        const kind: CallKind = call % approvalEvery === 0 ? 'approval' : call % 2 ? 'allow' : 'deny';
        try {
          const wrong = await gatedCall(kind, call, { env, machine, phone, fleet, phoneTurn });
          if (wrong) errors.push({ call, kind, error: wrong });
        } catch (error) {
          errors.push({ call, kind, error: error instanceof Error ? error.message : String(error) });
        }
        if ((call + 1) % 10_000 === 0) {
          const { rssMb, fds, stateBytes, auditBytes } = samples.at(-1)!;
          process.stderr.write(
            `bench: soak ${call + 1} calls, ${errors.length} errors, ${((Date.now() - startedAt) / 1000).toFixed(0)} s; ` +
              `RSS ${rssMb.toFixed(1)} MB, ${fds} fds, state ${kib(stateBytes)}, audit ${kib(auditBytes)}\n`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: scale.lanes }, lane));
    clearInterval(sampler);
    sample();
    const seconds = (Date.now() - startedAt) / 1000;
    const settled = samples.filter(({ at }) => at >= scale.warmUpMs);
    const compared = settled.length >= 10 ? settled : samples;
    for (const { call, kind, error } of errors.slice(0, 20))
      process.stderr.write(`bench: soak error, call ${call} (${kind}): ${error}\n`);
    return [
      flatness(
        'soak: rss',
        compared,
        (s) => s.rssMb,
        (v) => `${v.toFixed(1)} MB`,
      ),
      flatness(
        'soak: open fds',
        compared,
        (s) => s.fds,
        (v) => v.toFixed(1),
      ),
      flatness('soak: state size', compared, (s) => s.stateBytes, kib),
      flatness('soak: audit size', compared, (s) => s.auditBytes, kib),
      {
        name: 'soak: errors',
        figure: `${errors.length} in ${scale.calls} calls (${scale.approvals} approved on a phone), ${seconds.toFixed(0)} s`,
        baseline: `${(scale.calls / seconds).toFixed(0)} calls/s, ${scale.lanes} at a time`,
        goal: '0',
        met: errors.length === 0,
        data: {
          calls: scale.calls,
          approvals: scale.approvals,
          errors: errors.length,
          seconds,
          samples: samples.length,
          warmUpMs: scale.warmUpMs,
          firstErrors: JSON.stringify(errors.slice(0, 20)),
        },
      },
    ];
  } finally {
    await daemon.stop();
    rmSync(dirname(machine.home), { recursive: true, force: true });
  }
}

/**
 * One call as a hook makes it, and its answer checked: undefined when right, else what was wrong.
 * A phone approval is the phone's whole part: fetch the request, open its box, sign, post.
 */
async function gatedCall(
  kind: CallKind,
  call: number,
  at: {
    env: BenchEnvironment;
    machine: LatchMachine;
    phone: TestPhone;
    fleet: string;
    phoneTurn: <T>(work: () => Promise<T>) => Promise<T>;
  },
): Promise<string | undefined> {
  const socketPath = at.machine.socket;
  const ask = { agent: 'soak', interactive: false, canDefer: false };
  if (kind === 'approval') {
    let pending: (requestId: string) => void;
    const requestId = new Promise<string>((resolve) => (pending = resolve));
    const answer = gateCall(
      { ...ask, tool: 'soak', title: `soak ${call}` },
      {
        socketPath,
        deadline: Date.now() + APPROVAL_DEADLINE_MS,
        onPending: ({ requestId: id }) => pending(id),
      },
    );
    const approved = (async () => {
      // An answer before any phone is asked (a deny) leaves nothing for the phone to do.
      const id = await Promise.race([
        requestId,
        answer.then(
          () => undefined,
          () => undefined,
        ),
      ]);
      if (id === undefined) return;
      await at.phoneTurn(async () => {
        const { details } = await openAtRelay(at.env.driver, at.phone, at.fleet, id);
        const token = await tokenFor(at.env.driver, at.phone, details);
        const decided = await decideAtRelay(at.env.driver, at.phone, token);
        if (decided.status >= 300) throw new Error(`the relay refused the approval: ${decided.status}`);
      });
    })();
    const [answered] = await Promise.all([answer, approved]);
    return unexpected(answered, 'allow', 'phone');
  }
  const answer = await gateCall(
    { ...ask, tool: kind === 'allow' ? 'Read' : 'Delete', paths: [`/srv/soak/${call}`] },
    { socketPath },
  );
  return kind === 'allow'
    ? unexpected(answer, 'allow', 'policy')
    : unexpected(answer, 'deny', 'policy_violation');
}

function unexpected(answer: GateAnswer, decision: 'allow' | 'deny', why: string): string | undefined {
  const got = answer.decision === 'allow' ? answer.via : answer.decision === 'deny' ? answer.blockReason : '';
  return answer.decision === decision && got === why
    ? undefined
    : `expected ${decision} (${why}), got ${answer.decision} (${got}): ${answer.reason}`;
}

function sampleDaemon(pid: number, machine: LatchMachine): Omit<Sample, 'at'> {
  const files = readdirSync(machine.home);
  const bytes = (names: string[]) =>
    names.reduce((sum, name) => sum + statSync(join(machine.home, name)).size, 0);
  return {
    rssMb: rssMb(pid),
    fds: readdirSync(`/proc/${pid}/fd`).length,
    stateBytes: bytes(files.filter((name) => name === 'state.db' || name === 'state.db-wal')),
    auditBytes: bytes(files.filter((name) => name.startsWith('audit.log'))),
  };
}

/** `work`, or an error once `ms` have passed without its answer. */
function withinMs<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The mean of the last tenth of the samples against that of the first: flat is within 10%. */
function flatness(
  name: string,
  samples: Sample[],
  pick: (sample: Sample) => number,
  format: (value: number) => string,
): BenchRow {
  const tenth = Math.max(1, Math.floor(samples.length / 10));
  const first = mean(samples.slice(0, tenth).map(pick));
  const last = mean(samples.slice(-tenth).map(pick));
  const ratio = last / first;
  return {
    name,
    figure: `last tenth ${format(last)} (${ratio.toFixed(2)}×)`,
    baseline: `first tenth ${format(first)}`,
    goal: '≤ 1.10×',
    met: ratio <= 1.1,
    data: { first, last, ratio, samples: samples.length },
  };
}

/**
 * The soak is never part of the full run, so its rows join those of the last full run in
 * bench.json (the previous soak's replaced), with the date they were measured.
 */
export function recordSoakRows(benchJson: URL, rows: BenchRow[]): void {
  const soakRows = rows.filter((row) => row.name.startsWith('soak: '));
  const record = existsSync(benchJson)
    ? (JSON.parse(readFileSync(benchJson, 'utf8')) as { rows: BenchRow[] } & Record<string, unknown>)
    : { rows: [] };
  record.rows = [
    ...record.rows.filter((row) => !row.name.startsWith('soak: ')),
    ...soakRows.map((row) => ({ ...row, data: { ...row.data, measured: new Date().toISOString() } })),
  ];
  writeFileSync(benchJson, JSON.stringify(record, null, 2));
}
