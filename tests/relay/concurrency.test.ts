import { describe, expect, it } from 'vitest';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { refusalCodeOf } from '../support/expectRefused.ts';
import { newFleet, phoneCall, submitRequest } from './harness.ts';

describe('concurrent decisions', () => {
  it('gives exactly one 200 to 100 concurrent decide calls for one request', async () => {
    const test = await newFleet({ push: false });
    const { phone } = test.phones[0]!;
    const { details } = await submitRequest(test);
    const token = await signToken(phone, await bindingFor(details));
    const replies = await Promise.all(
      Array.from({ length: 100 }, () =>
        phoneCall(phone, 'POST', `/v1/fleets/${test.fleet}/requests/${details.requestId}/decision`, token),
      ),
    );
    const statuses = replies.map((reply) => reply.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(99);
    expect(new Set(replies.filter((reply) => reply.status === 409).map(refusalCodeOf))).toEqual(
      new Set(['already_decided']),
    );
  });

  it('lets only the first of two phones decide', async () => {
    const test = await newFleet({ phones: 2, push: false });
    const [first, second] = test.phones as [(typeof test.phones)[0], (typeof test.phones)[0]];
    const { details } = await submitRequest(test);
    const binding = await bindingFor(details);
    const replies = await Promise.all([
      phoneCall(
        first.phone,
        'POST',
        `/v1/fleets/${test.fleet}/requests/${details.requestId}/decision`,
        await signToken(first.phone, binding),
      ),
      phoneCall(
        second.phone,
        'POST',
        `/v1/fleets/${test.fleet}/requests/${details.requestId}/decision`,
        await signToken(second.phone, binding),
      ),
    ]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409]);
  });
});
