import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { approvalBinding } from '../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../shared/approvals/approvalChallenge.ts';
import { signDeviceRequest } from '../shared/device-auth/deviceRequest.ts';
import { toBase64url } from '../shared/encoding/base64url.ts';
import { randomBytes, utf8 } from '../shared/encoding/bytes.ts';
import type { ApprovalRequest } from '../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { ensureRelayEnvFile } from '../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../scripts/lib/relayProcess.ts';
import { createHost, createPhone, type TestPhone } from '../scripts/lib/softwarePhone.ts';
import { bearer, RelayDriver } from '../tests/support/relayDriver.ts';
import type { BenchEnvironment } from './environment.ts';
import type { BenchRow } from './stats.ts';

const CONCURRENCY = 8;
/** Pairs signed ahead of the timed loop: more than any run has reached (the baseline's best is 306/s). */
const MOST_PAIRS_PER_SECOND = 500;

/** One create and its decision, as the host and the phone send them. */
interface Pair {
  request: ApprovalRequest;
  decision: { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> };
}

/**
 * Runs `work` on CONCURRENCY clients until the time is up or `pairs` run out; returns pairs a
 * second over the time taken.
 */
async function forDuration<T>(
  durationMs: number,
  pairs: T[],
  work: (pair: T) => Promise<void>,
): Promise<number> {
  const start = performance.now();
  const end = start + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let pair = pairs.pop(); pair && performance.now() < end; pair = pairs.pop()) {
        await work(pair);
        done++;
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/**
 * What the phone does on its own device, done before the clock starts: the passkey's assertion
 * over the request's challenge (the request id, hash, nonce and exp are the host's own) and the
 * device key's signature of the decision request (good for 60 s either side of the relay's clock).
 */
async function signedPairs(
  count: number,
  fleet: string,
  host: string,
  phone: TestPhone,
  driver: RelayDriver,
) {
  const pairs: Pair[] = [];
  for (let i = 0; i < count; i++) {
    const requestId = toBase64url(randomBytes(12));
    const now = Date.now();
    const request: ApprovalRequest = {
      v: PROTOCOL_VERSION,
      fleet,
      host,
      requestId,
      conversation: 'bench',
      dedupKey: requestId,
      risk: 'low',
      createdAt: now,
      exp: now + 300_000,
      requestHash: toBase64url(randomBytes(32)),
      nonce: toBase64url(randomBytes(16)),
      sealed: [{ device: phone.id, box: toBase64url(randomBytes(200)) }],
    };
    const assertion = await phone.authenticator.assert({
      rpId: driver.rpId,
      origin: driver.origin,
      challenge: await approvalChallenge(approvalBinding(request)),
    });
    const path = `/v1/fleets/${fleet}/requests/${requestId}/decision`;
    const token = {
      v: PROTOCOL_VERSION,
      fleet,
      host,
      requestId,
      decision: 'approve',
      device: phone.id,
      assertion,
    };
    const body = utf8(JSON.stringify(token));
    const headers = await signDeviceRequest(
      { method: 'POST', path, body },
      { id: phone.id, privateKey: phone.deviceKeys.privateKey },
    );
    pairs.push({ request, decision: { body, headers } });
  }
  return pairs;
}

/** A relay of its own, with the design's push caps (bench/environment.ts raises them for the rest). */
async function relayWithDesignCaps(): Promise<{ relay: RelayProcess; state: string }> {
  const state = mkdtempSync(join(tmpdir(), 'latch-bench-throughput-'));
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  return { relay: await startRelay({ persistTo: join(state, 'relay'), envFile }), state };
}

/**
 * Pairs a host and a phone (subscribed at the push stand-in) on a fresh fleet, connects the
 * host's WebSocket as its daemon does (the frames are the daemon's to verify, not timed here),
 * and runs the pairs.
 */
async function createAndDecide(port: number, env: BenchEnvironment, durationMs: number) {
  const driver = new RelayDriver(`http://localhost:${port}`, (url, init) => fetch(url, init), env.push);
  const fleet = `fleet-${toBase64url(randomBytes(9))}`;
  const host = await createHost();
  // Eight decisions in flight at once arrive out of signing order; a synced passkey (counter
  // always 0) is what allows that, as real phones never sign eight at once.
  const phone = await createPhone('Throughput phone', { counter: 'zero' });
  const { paired, hostToken } = await driver.pairPhone(fleet, host, { phone });
  if (!hostToken || !paired.pushId) throw new Error('the throughput fleet was not paired');
  const daemon = new WebSocket(`ws://localhost:${port}/v1/fleets/${fleet}/connect`, {
    headers: bearer(hostToken),
    perMessageDeflate: false,
  });
  await new Promise((resolve, reject) => daemon.once('open', resolve).once('error', reject));
  try {
    const signedAhead = Math.ceil((MOST_PAIRS_PER_SECOND * durationMs) / 1000);
    const pairs = await signedPairs(signedAhead, fleet, host.id, phone, driver);
    const pushedBefore = (await env.push.messages(paired.pushId)).length;
    const rate = await forDuration(durationMs, pairs, async ({ request, decision }) => {
      const created = await driver.call('POST', `/v1/fleets/${fleet}/requests`, {
        json: request,
        headers: bearer(hostToken),
      });
      if (created.status !== 201) throw new Error(`create refused: ${JSON.stringify(created.body)}`);
      const decided = await driver.call(
        'POST',
        `/v1/fleets/${fleet}/requests/${request.requestId}/decision`,
        decision,
      );
      if (decided.status !== 200) throw new Error(`decide refused: ${JSON.stringify(decided.body)}`);
    });
    const pushes = (await env.push.messages(paired.pushId)).length - pushedBefore;
    return { rate, pushes, signedAhead };
  } finally {
    daemon.close();
  }
}

/** The same two calls on a Hono Worker that keeps a Map, in its own `wrangler dev`. */
async function inMemoryBaseline(durationMs: number): Promise<number> {
  const state = mkdtempSync(join(tmpdir(), 'latch-bench-baseline-'));
  writeFileSync(join(state, 'empty.env'), '');
  const baseline = await startRelay({
    persistTo: state,
    envFile: join(state, 'empty.env'),
    config: new URL('./baseline.wrangler.toml', import.meta.url).pathname,
  });
  try {
    const ids = Array.from({ length: Math.ceil((MOST_PAIRS_PER_SECOND * durationMs) / 1000) }, () =>
      toBase64url(randomBytes(12)),
    );
    return await forDuration(durationMs, ids, async (requestId) => {
      const post = (path: string, body: unknown) =>
        fetch(`${baseline.origin}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      await (await post('/v1/requests', { requestId })).text();
      await (await post(`/v1/requests/${requestId}/decision`, {})).text();
    });
  } finally {
    await baseline.stop();
    rmSync(state, { recursive: true, force: true });
  }
}

/**
 * Create + decide per second on one fleet: the host posts a sealed request, the phone posts a
 * passkey-signed decision, which the relay verifies and sends down the host's WebSocket. Against
 * the same two calls on a Hono in-memory Worker in workerd.
 */
export async function relayThroughput(env: BenchEnvironment, durationMs: number): Promise<BenchRow> {
  const { relay, state } = await relayWithDesignCaps();
  let measured: Awaited<ReturnType<typeof createAndDecide>>;
  try {
    measured = await createAndDecide(relay.port, env, durationMs);
  } finally {
    await relay.stop();
    rmSync(state, { recursive: true, force: true });
  }
  const baselineRate = await inMemoryBaseline(durationMs);
  const ratio = measured.rate / baselineRate;
  return {
    name: 'relay throughput',
    figure: `${measured.rate.toFixed(0)} create+decide/s`,
    baseline: `Hono in-memory in workerd: ${baselineRate.toFixed(0)}/s (${ratio.toFixed(2)}×)`,
    goal: '≥ 0.5× the in-memory baseline',
    met: ratio >= 0.5,
    data: {
      concurrency: CONCURRENCY,
      durationMs,
      relayRate: measured.rate,
      baselineRate,
      pushes: measured.pushes,
      signedAhead: measured.signedAhead,
    },
  };
}
