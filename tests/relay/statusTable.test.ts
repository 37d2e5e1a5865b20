import { describe, expect, it } from 'vitest';
import { refusal, STATUS_BY_CODE } from '../../relay/http/relayError.ts';
import { LATCH_ERROR_CODES, type RelayErrorCode } from '../../shared/errors.ts';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';
import { completePairing, createHost, createOffer, createPhone } from '../../scripts/lib/softwarePhone.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import {
  bearer,
  call,
  fileOffer,
  fleetForTheseTests,
  sendCompletion,
  submitRequest,
  type Reply,
} from './harness.ts';

const { fleet, path } = fleetForTheseTests();

/** An offer from a stranger host whose id is another's, and so not the id of its key. */
async function offerUnderAnotherId(): Promise<Reply> {
  const stranger = await createHost();
  const { offer } = await createOffer({ ...stranger, id: fleet().host.id }, { fleet: fleet().fleet });
  return call('POST', path('/pairing'), { json: offer, headers: bearer(fleet().hostToken) });
}

/** A completion whose device id is not the id of the device key it carries. */
async function completionUnderAnotherId(): Promise<Reply> {
  const { offer, secret } = await fileOffer(fleet());
  const newcomer = await createPhone();
  const completion = await completePairing(newcomer, offer, secret);
  const mislabelled = { ...completion, device: { ...completion.device, id: (await createPhone()).id } };
  return sendCompletion(newcomer, fleet().fleet, offer.offerId, offer.offerToken, mislabelled);
}

describe('the code → status table', () => {
  it('gives every protocol code a client-error status, and refusals take it from there', () => {
    for (const code of LATCH_ERROR_CODES) {
      expect(STATUS_BY_CODE[code]).toBeGreaterThanOrEqual(400);
      expect(STATUS_BY_CODE[code]).toBeLessThan(500);
    }
    for (const code of Object.keys(STATUS_BY_CODE) as RelayErrorCode[]) {
      expect(refusal(code, 'refused').status).toBe(STATUS_BY_CODE[code]);
    }
  });

  it('answers each refusal the routes make with the status the table gives its code', async () => {
    const oversized = new Uint8Array(MAX_BODY_BYTES + 1).fill(0x20);
    const withdrawn = await submitRequest(fleet());
    const withdraw = () =>
      call('POST', path(`/requests/${withdrawn.request.requestId}/withdraw`), {
        headers: bearer(fleet().hostToken),
      });
    expect((await withdraw()).status).toBe(200);
    const refusals: [RelayErrorCode, Reply][] = [
      ['invalid_id', await call('GET', '/v1/fleets/a%20b/state')],
      ['not_found', await call('GET', '/v1/nothing-here')],
      ['method_not_allowed', await call('POST', '/', { body: '{}' })],
      ['not_found', await call('GET', path('/pairing/no-such-offer'))],
      [
        'unsupported_media_type',
        await call('POST', path('/freeze'), { headers: { 'content-type': 'text/plain' } }),
      ],
      ['body_too_large', await call('POST', path('/freeze'), { body: oversized })],
      ['malformed_json', await call('POST', path('/freeze'), { body: '{' })],
      ['invalid_field', await call('GET', path('/requests?state=someday'))],
      ['unauthorized', await call('GET', path('/state'), { headers: bearer('A'.repeat(43)) })],
      [
        'host_token_required',
        await call('POST', path('/pairing'), {
          json: (await createOffer(fleet().host, { fleet: fleet().fleet })).offer,
        }),
      ],
      ['expired', (await submitRequest(fleet(), { now: Date.now() - 3600_000 })).reply],
      ['withdrawn', await withdraw()],
      // These two once had statuses of their own in pairing; the table's are the only ones now.
      ['wrong_signer', await offerUnderAnotherId()],
      ['device_mismatch', await completionUnderAnotherId()],
    ];
    // The refusal's code is the expected one, and its status the table's for that code.
    for (const [code, reply] of refusals) expectRefusedReply(reply, STATUS_BY_CODE[code], code);
  });

  it('refuses a request whose device signature fails 401, whatever check failed', async () => {
    const unsigned = await call('GET', path('/members'));
    expectRefusedReply(unsigned, 401, 'missing_field');
    expect(STATUS_BY_CODE.missing_field).toBe(400);
  });
});
