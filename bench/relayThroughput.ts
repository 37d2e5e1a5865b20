import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvalBinding } from '../shared/approvals/approvalBinding.ts';
import { approvalChallenge } from '../shared/approvals/approvalChallenge.ts';
import { toBase64url } from '../shared/encoding/base64url.ts';
import { randomBytes } from '../shared/encoding/bytes.ts';
import type { ApprovalRequest } from '../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../shared/version.ts';
import { startRelay } from '../scripts/lib/relayProcess.ts';
import { bearer } from '../tests/support/relayDriver.ts';
import { pairSoftwarePhone } from '../tests/support/softwarePairing.ts';
import type { BenchEnvironment } from './environment.ts';
import type { BenchRow } from './stats.ts';

const CONCURRENCY = 8;

async function forDuration(durationMs: number, work: () => Promise<void>): Promise<number> {
  const end = performance.now() + durationMs;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await work();
        done++;
      }
    }),
  );
  return done / (durationMs / 1000);
}

/**
 * Create + decide per second on one fleet: the host posts a sealed request, the phone posts a
 * passkey-signed decision, which the relay verifies. Against the same two calls on a Hono
 * in-memory Worker in workerd.
 */
export async function relayThroughput(env: BenchEnvironment, durationMs: number): Promise<BenchRow> {
  const { driver, fleet, hostToken, hostId: host } = env;
  // Eight decisions in flight at once arrive out of signing order; a synced passkey (counter
  // always 0) is what allows that, as real phones never sign eight at once.
  const { phone } = await pairSoftwarePhone(env.machine, driver, {
    name: 'Throughput phone',
    counter: 'zero',
    admittedBy: { phone: env.phone, decision: 'approve' },
  });
  const now = Date.now();
  const relayRate = await forDuration(durationMs, async () => {
    const requestId = toBase64url(randomBytes(12));
    const request: ApprovalRequest = {
      v: PROTOCOL_VERSION,
      fleet,
      host,
      requestId,
      conversation: 'bench',
      dedupKey: requestId,
      risk: 'low',
      createdAt: now,
      exp: Date.now() + 300_000,
      requestHash: toBase64url(randomBytes(32)),
      nonce: toBase64url(randomBytes(16)),
      sealed: [{ device: phone.id, box: toBase64url(randomBytes(200)) }],
    };
    const created = await driver.call('POST', `/v1/fleets/${fleet}/requests`, {
      json: request,
      headers: bearer(hostToken),
    });
    if (created.status !== 201) throw new Error(`create refused: ${JSON.stringify(created.body)}`);
    const binding = approvalBinding(request);
    const assertion = await phone.authenticator.assert({
      rpId: driver.rpId,
      origin: driver.origin,
      challenge: await approvalChallenge(binding),
    });
    const decided = await driver.phoneCall(
      phone,
      'POST',
      `/v1/fleets/${fleet}/requests/${requestId}/decision`,
      { v: PROTOCOL_VERSION, fleet, host, requestId, decision: 'approve', device: phone.id, assertion },
    );
    if (decided.status !== 200) throw new Error(`decide refused: ${JSON.stringify(decided.body)}`);
  });

  const state = mkdtempSync(join(tmpdir(), 'latch-bench-baseline-'));
  writeFileSync(join(state, 'empty.env'), '');
  const baseline = await startRelay({
    persistTo: state,
    envFile: join(state, 'empty.env'),
    config: new URL('./baseline.wrangler.toml', import.meta.url).pathname,
  });
  const baselineRate = await forDuration(durationMs, async () => {
    const requestId = toBase64url(randomBytes(12));
    const post = (path: string, body: unknown) =>
      fetch(`${baseline.origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await (await post('/v1/requests', { requestId })).text();
    await (await post(`/v1/requests/${requestId}/decision`, {})).text();
  });
  await baseline.stop();
  rmSync(state, { recursive: true, force: true });
  return {
    name: 'relay throughput',
    figure: `${relayRate.toFixed(0)} create+decide/s`,
    baseline: `Hono in-memory in workerd: ${baselineRate.toFixed(0)}/s (${(relayRate / baselineRate).toFixed(2)}×)`,
    goal: '(no goal; compare)',
    met: undefined,
    data: { concurrency: CONCURRENCY, durationMs, relayRate, baselineRate },
  };
}
