import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import type { CapabilityToken } from '../shared/messages/approvals.ts';
import type { RequestView } from '../shared/messages/relayViews.ts';
import { gateCall } from '../daemon/socket/gateClient.ts';
import { decideAtRelay, openAtRelay, tokenFor } from '../tests/support/phoneAtRelay.ts';
import type { BenchEnvironment } from './environment.ts';
import { median, ms, now, percentile, type BenchRow } from './stats.ts';

/** An agent's request, asked through the daemon's socket; resolves its id once a phone is asked. */
export function ask(env: BenchEnvironment, title: string, detail?: string) {
  let pending: (value: string) => void;
  const requestId = new Promise<string>((resolve) => (pending = resolve));
  const answer = gateCall(
    {
      agent: 'bench',
      tool: 'bench',
      title,
      ...(detail ? { detail } : {}),
      interactive: false,
      canDefer: false,
    },
    { socketPath: env.machine.socket, onPending: ({ requestId: id }) => pending(id) },
  );
  return { requestId, answer };
}

/** The phone's part: fetch the request, open its box, sign the approval. Not timed. */
async function tokenForRequest(env: BenchEnvironment, requestId: string): Promise<CapabilityToken> {
  const { details } = await openAtRelay(env.driver, env.phone, env.fleet, requestId);
  return tokenFor(env.driver, env.phone, details);
}

const decide = (env: BenchEnvironment, token: CapabilityToken) => decideAtRelay(env.driver, env.phone, token);

/** One bare loopback HTTP request and one WebSocket message between two Node processes. */
async function loopbackBaseline(samples: number): Promise<number[]> {
  const peer = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./loopbackPeer.ts', import.meta.url).pathname],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve) =>
    peer.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
  );
  const socket = new WebSocket(`ws://127.0.0.1:${port}`);
  await new Promise((resolve) => socket.once('open', resolve));
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const received = new Promise((resolve) => socket.once('message', resolve));
    const start = now();
    await fetch(`http://127.0.0.1:${port}/decide`, { method: 'POST', body: 'x' });
    await received;
    times.push(now() - start);
  }
  socket.close();
  peer.kill();
  return times;
}

/**
 * tap→unblocked (from the phone's token POST to the daemon answering the agent) and
 * request→push (from the agent's request to the push reaching the push service), over the same
 * requests.
 */
export async function approvalLatency(env: BenchEnvironment, samples: number): Promise<BenchRow[]> {
  const tap: number[] = [];
  const toPush: number[] = [];
  for (let i = 0; i < samples; i++) {
    const askedAt = now();
    const { requestId, answer } = ask(env, `bench ${i}`);
    const id = await requestId;
    const token = await tokenForRequest(env, id);
    const tappedAt = now();
    await decide(env, token);
    const answered = await answer;
    if (answered.decision !== 'allow') throw new Error(`the daemon did not allow: ${answered.reason}`);
    tap.push(now() - tappedAt);
    const pushed = (await env.push.waitForMessages(env.pushId, i + 1)).find((message) =>
      message.payload.includes(id),
    );
    if (pushed) toPush.push(pushed.receivedAt - askedAt);
  }
  const baseline = await loopbackBaseline(Math.max(20, samples));
  return [
    {
      name: 'tap→unblocked',
      figure: `p50 ${ms(median(tap))}, p99 ${ms(percentile(tap, 99))}`,
      baseline: `loopback HTTP + WS p50 ${ms(median(baseline))}, p99 ${ms(percentile(baseline, 99))}`,
      goal: 'p99 ≤ 15 ms',
      met: percentile(tap, 99) <= 15,
      data: {
        samples: tap.length,
        p50: median(tap),
        p99: percentile(tap, 99),
        baselineP50: median(baseline),
        baselineP99: percentile(baseline, 99),
      },
    },
    {
      name: 'request→push',
      figure: `p50 ${ms(median(toPush))}, p99 ${ms(percentile(toPush, 99))}`,
      baseline: `loopback HTTP + WS p50 ${ms(median(baseline))}`,
      goal: 'p99 ≤ 15 ms',
      met: percentile(toPush, 99) <= 15,
      data: { samples: toPush.length, p50: median(toPush), p99: percentile(toPush, 99) },
    },
  ];
}

/** The peers' design: a hook that polls for the decision every `intervalMs`. */
export async function pollingPeer(
  env: BenchEnvironment,
  intervalMs: number,
  samples: number,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const { requestId, answer } = ask(env, `poll ${i}`);
    const id = await requestId;
    const token = await tokenForRequest(env, id);
    let seenAt = 0;
    let decidedAt = 0;
    const poller = (async () => {
      for (;;) {
        const view = (
          await env.driver.phoneCall<RequestView>(env.phone, 'GET', `/v1/fleets/${env.fleet}/requests/${id}`)
        ).body;
        if (view.state !== 'pending') return (seenAt = now());
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    })();
    // The tap lands anywhere in the polling cycle.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * intervalMs));
    decidedAt = now();
    await decide(env, token);
    await poller;
    await answer;
    times.push(seenAt - decidedAt);
  }
  return times;
}
