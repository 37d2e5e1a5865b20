import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import { approvalChallenge } from '../shared/approvals/approvalChallenge.ts';
import { requestHash } from '../shared/approvals/requestHash.ts';
import { openRequestDetails } from '../shared/e2e/requestDetailsBox.ts';
import type { CapabilityToken } from '../shared/messages/approvals.ts';
import type { RequestView } from '../shared/messages/relayViews.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { gateCall } from '../daemon/socket/daemonClient.ts';
import type { GateAnswer } from '../daemon/socket/localApi.ts';
import type { BenchEnvironment } from './environment.ts';
import { median, ms, now, percentile, type BenchRow } from './stats.ts';

/** An agent's request, asked through the daemon's socket; resolves its id once a phone is asked. */
function ask(env: BenchEnvironment, title: string) {
  let pending: (value: string) => void;
  const requestId = new Promise<string>((resolve) => (pending = resolve));
  const answer = gateCall<GateAnswer>(
    { agent: 'bench', tool: 'bench', title, interactive: false, canDefer: false },
    { socketPath: env.machine.socket, onPending: ({ requestId: id }) => pending(id) },
  );
  return { requestId, answer };
}

/** The phone's part: fetch the request, open its box, sign the approval. Not timed. */
async function tokenFor(env: BenchEnvironment, requestId: string): Promise<CapabilityToken> {
  const { phone, fleet, driver } = env;
  const view = (
    await driver.phoneCall<RequestView>(phone, 'GET', `/v1/fleets/${fleet}/requests/${requestId}`)
  ).body;
  const opened = await openRequestDetails(
    view.box!,
    { privateKey: phone.ecdhKeys.privateKey, publicKeyRaw: phone.ecdhKeyRaw },
    { fleet, host: view.host, requestId, device: phone.id },
  );
  if (!opened.ok) throw opened.error;
  const details = opened.value;
  const binding = {
    fleet,
    host: view.host,
    requestId,
    requestHash: await requestHash(details),
    decision: 'approve' as const,
    nonce: details.nonce,
    exp: details.exp,
  };
  const assertion = await phone.authenticator.assert({
    rpId: driver.rpId,
    origin: driver.origin,
    challenge: await approvalChallenge(binding),
  });
  return {
    v: PROTOCOL_VERSION,
    fleet,
    host: view.host,
    requestId,
    decision: 'approve',
    device: phone.id,
    assertion,
  };
}

const decide = (env: BenchEnvironment, token: CapabilityToken) =>
  env.driver.phoneCall(
    env.phone,
    'POST',
    `/v1/fleets/${env.fleet}/requests/${token.requestId}/decision`,
    token,
  );

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
    const token = await tokenFor(env, id);
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
      goal: 'p99 ≤ 25 ms',
      met: percentile(tap, 99) <= 25,
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
      goal: 'p99 ≤ 25 ms',
      met: percentile(toPush, 99) <= 25,
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
    const token = await tokenFor(env, id);
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
