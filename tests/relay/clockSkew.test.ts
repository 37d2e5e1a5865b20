import { describe, expect, it } from 'vitest';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { newFleet, phoneCall, setClock, submitRequest, type TestFleet } from './harness.ts';

/**
 * The relay's side of a clock 5 minutes off (docs/security.md#clocks). The fleet object's clock
 * is set from the test; the host's and the phone's are the times the test signs with. The
 * host's side, where the deadline is decided, is in tests/e2e/clockSkew.test.ts.
 */
const SKEW_MS = 5 * 60_000;

const decisionPath = (test: TestFleet, requestId: string) =>
  `/v1/fleets/${test.fleet}/requests/${requestId}/decision`;

describe('a relay whose clock is 5 minutes off the host’s', () => {
  it('ahead: refuses the host’s fresh 5-minute request as already expired, so nothing is asked', async () => {
    const test = await newFleet();
    const hostNow = Date.now();
    await setClock(test.fleet, hostNow + SKEW_MS);
    const { reply } = await submitRequest(test, { now: hostNow, exp: hostNow + SKEW_MS });
    expectRefusedReply(reply, 410, 'expired');
  });

  it('behind: holds the request open past the host’s deadline and takes an approval, which the host then refuses', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const hostNow = Date.now();
    await setClock(test.fleet, hostNow - SKEW_MS);
    const { details } = await submitRequest(test, { now: hostNow, exp: hostNow + SKEW_MS });
    // The host's deadline has come; by the relay's clock it is 5 minutes away.
    const relayNow = details.exp - SKEW_MS;
    await setClock(test.fleet, relayNow);
    const token = await signToken(phone, await bindingFor(details));
    expect(await phoneCall(phone, 'POST', decisionPath(test, details.requestId), token, relayNow)).toEqual({
      status: 200,
      body: { v: 1, state: 'approved' },
    });
  });
});

describe('a phone whose clock is 5 minutes off the relay’s', () => {
  for (const [name, skew] of [
    ['ahead', SKEW_MS],
    ['behind', -SKEW_MS],
  ] as const) {
    it(`${name}: every signed call is refused, the approval too (stale_timestamp)`, async () => {
      const test = await newFleet();
      const { phone } = test.phones[0]!;
      const { details } = await submitRequest(test);
      const phoneNow = Date.now() + skew;
      expectRefusedReply(
        await phoneCall(phone, 'GET', `/v1/fleets/${test.fleet}/requests`, undefined, phoneNow),
        401,
        'stale_timestamp',
      );
      const token = await signToken(phone, await bindingFor(details));
      expectRefusedReply(
        await phoneCall(phone, 'POST', decisionPath(test, details.requestId), token, phoneNow),
        401,
        'stale_timestamp',
      );
    });
  }
});
