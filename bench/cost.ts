import WebSocket from 'ws';
import { callDaemon } from '../daemon/socket/daemonClient.ts';
import type { DaemonStatus } from '../daemon/socket/localApi.ts';
import { parseJson } from '../shared/schema/index.ts';
import { pushMessageSchema } from '../shared/messages/pushMessages.ts';
import type { MeterReading } from '../relay/billing/billableMeter.ts';
import { decideAtRelay, openAtRelay, openBox, tokenFor } from '../tests/support/phoneAtRelay.ts';
import { ask } from './approvals.ts';
import type { BenchEnvironment } from './environment.ts';
import type { BenchRow } from './stats.ts';

const DAY_S = 86_400;
/** A person's answer takes this long, for the peers' polls per approval (an assumption, stated). */
const ASSUMED_WAIT_S = 30;
/** The peers' designs: a waiting hook polls the relay every 1 s or every 10 s. */
const PEER_POLLS_S = [1, 10] as const;

type Billable = MeterReading['billable'];

/**
 * `wrangler dev` reloads the relay when a source file changes, and the new isolate counts from 0:
 * a measurement that spans a reload is taken again.
 */
const ATTEMPTS = 3;

async function readMeter(env: BenchEnvironment): Promise<MeterReading> {
  const response = await fetch(`${env.origin}/v1/meter`);
  if (!response.ok) throw new Error(`the relay's meter answered ${response.status}: is BILLABLE_METER on?`);
  return (await response.json()) as MeterReading;
}

/** The billable requests counted while `action` ran (reading the meter counts nothing). */
async function billedDuring(env: BenchEnvironment, action: () => Promise<void>): Promise<Billable> {
  for (let attempt = 1; ; attempt++) {
    const before = await readMeter(env);
    await action();
    const after = await readMeter(env);
    if (after.isolate === before.isolate)
      return {
        workerRequests: after.billable.workerRequests - before.billable.workerRequests,
        objectRequests: after.billable.objectRequests - before.billable.objectRequests,
        total: after.billable.total - before.billable.total,
      };
    if (attempt === ATTEMPTS) throw new Error(`the relay reloaded during each of ${ATTEMPTS} measurements`);
  }
}

/** A detail this long seals into a box that no longer fits in a push (3993 bytes): the app fetches it. */
const TOO_LARGE_FOR_A_PUSH = 'x'.repeat(3000);

/**
 * One approval, from the agent's call to its decision, as the app makes it: the daemon asks, the
 * phone opens the box that rode in the push (the service worker, then the request's screen, use
 * it: pwa/src/actions.ts tappedRequest), or fetches it when it did not fit, signs and decides, and
 * the daemon answers the agent.
 */
async function approveOnce(env: BenchEnvironment, title: string, detail?: string): Promise<void> {
  const pushedBefore = (await env.push.messages(env.pushId)).length;
  const { requestId, answer } = ask(env, title, detail);
  const id = await requestId;
  const pushes = await env.push.waitForMessages(env.pushId, pushedBefore + 1);
  const pushed = pushes
    .map((push) => parseJson(pushMessageSchema, push.payload))
    .find((message) => message.ok && message.value.type === 'request' && message.value.requestId === id);
  if (!pushed?.ok || pushed.value.type !== 'request') throw new Error('no push named the request');
  if (Boolean(pushed.value.box) === Boolean(detail))
    throw new Error(
      `the push ${detail ? 'carried a box meant not to fit' : 'did not carry the request box'}`,
    );
  const request = { fleet: env.fleet, host: env.hostId, requestId: id };
  const details = pushed.value.box
    ? await openBox(env.phone, request, pushed.value.box)
    : (await openAtRelay(env.driver, env.phone, env.fleet, id)).details;
  const decided = await decideAtRelay(env.driver, env.phone, await tokenFor(env.driver, env.phone, details));
  if (decided.status !== 200)
    throw new Error(`the relay refused the decision: ${JSON.stringify(decided.body)}`);
  const answered = await answer;
  if (answered.decision !== 'allow') throw new Error(`the daemon did not allow: ${answered.reason}`);
}

/**
 * Resolves once the daemon holds its WebSocket: it connects once after pairing, a Worker request
 * and an object call that belong to no approval, and the first approval must not carry them.
 */
async function daemonConnected(env: BenchEnvironment): Promise<void> {
  for (;;) {
    const status = await callDaemon<DaemonStatus>('GET', '/v1/status', undefined, {
      socketPath: env.machine.socket,
    });
    if (status.relay === 'connected') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function perApproval(env: BenchEnvironment, approvals: number, detail?: string): Promise<Billable> {
  const billed = await billedDuring(env, async () => {
    for (let i = 0; i < approvals; i++)
      await approveOnce(env, `cost ${detail ? 'fetched' : 'pushed'} ${i}`, detail);
  });
  return {
    workerRequests: billed.workerRequests / approvals,
    objectRequests: billed.objectRequests / approvals,
    total: billed.total / approvals,
  };
}

/**
 * The daemon connected and idle for `seconds`, keeping its connection alive as it always does; a
 * second socket of the same host pings every second meanwhile, so that the keep-alive path is
 * crossed many times in a short window. Answers the billable requests counted and the pongs.
 */
async function idle(env: BenchEnvironment, seconds: number): Promise<{ billed: Billable; pongs: number }> {
  const probe = new WebSocket(`${env.origin.replace(/^http/, 'ws')}/v1/fleets/${env.fleet}/connect`, {
    headers: { authorization: `Bearer ${env.hostToken}` },
    perMessageDeflate: false,
  });
  let pongs = 0;
  probe.on('message', (data) => {
    if (data.toString() === 'pong') pongs++;
  });
  await new Promise((resolve, reject) => probe.once('open', resolve).once('error', reject));
  try {
    const billed = await billedDuring(env, async () => {
      for (let second = 0; second < seconds; second++) {
        probe.send('ping');
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    });
    return { billed, pongs };
  } finally {
    probe.close();
  }
}

const split = (billed: Billable) =>
  `Worker ${billed.workerRequests.toFixed(1)}, Durable Object ${billed.objectRequests.toFixed(1)}`;

/** Billable requests per approval and per idle day, counted by the relay's meter, beside the peers' polls. */
export async function approvalCost(
  env: BenchEnvironment,
  approvals: number,
  idleSeconds: number,
): Promise<BenchRow[]> {
  await daemonConnected(env);
  const fromPush = await perApproval(env, approvals);
  const fetched = await perApproval(env, approvals, TOO_LARGE_FOR_A_PUSH);
  const { billed: idleBilled, pongs } = await idle(env, idleSeconds);
  const perDay = (idleBilled.total / idleSeconds) * DAY_S;
  const polls = PEER_POLLS_S.map((interval) => ({
    interval,
    perApproval: ASSUMED_WAIT_S / interval,
    perDay: DAY_S / interval,
  }));
  const peersPerApproval = `${polls
    .map((poll) => `${poll.interval} s poll ${poll.perApproval}`)
    .join(', ')} polls alone in a ${ASSUMED_WAIT_S} s wait`;
  const peersPerDay = polls
    .map((poll) => `${poll.interval} s poll ${poll.perDay.toLocaleString('en')}`)
    .join(', ');
  return [
    {
      name: 'cost: requests per approval',
      figure: `${fromPush.total.toFixed(1)} (${split(fromPush)})`,
      baseline: `peers: ${peersPerApproval}`,
      goal: '≤ 4',
      met: fromPush.total <= 4,
      data: {
        approvals,
        workerRequests: fromPush.workerRequests,
        objectRequests: fromPush.objectRequests,
        total: fromPush.total,
        assumedWaitSeconds: ASSUMED_WAIT_S,
        ...Object.fromEntries(polls.map((poll) => [`poll${poll.interval}sPerApproval`, poll.perApproval])),
      },
    },
    {
      name: 'cost: requests per approval, box too large for the push',
      figure: `${fetched.total.toFixed(1)} (${split(fetched)})`,
      baseline: 'the box from the push, above',
      goal: '(reference)',
      met: undefined,
      data: {
        approvals,
        workerRequests: fetched.workerRequests,
        objectRequests: fetched.objectRequests,
        total: fetched.total,
      },
    },
    {
      name: 'cost: idle day',
      figure: `${perDay.toFixed(0)} requests a day (${idleSeconds} s idle, ${pongs} pings answered)`,
      baseline: `peers, per waiting hook: ${peersPerDay}`,
      goal: '0',
      met: perDay === 0,
      data: {
        idleSeconds,
        pongs,
        billedInWindow: idleBilled.total,
        perDay,
        ...Object.fromEntries(polls.map((poll) => [`poll${poll.interval}sPerDay`, poll.perDay])),
      },
    },
  ];
}
