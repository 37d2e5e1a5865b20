import { describe, expect, it } from 'vitest';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { requestDetailsSchema } from '../../shared/messages/approvals.ts';
import { pushSubscriptionSchema } from '../../shared/messages/common.ts';
import { hostEventSchema } from '../../shared/messages/events.ts';
import { fleetStateSchema } from '../../shared/messages/killSwitch.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { MAX_BODY_BYTES, parse, parseJson } from '../../shared/schema/parse.ts';
import { pairedFleet, requestDetails } from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';

const fleet = await pairedFleet();
const details = requestDetails(fleet);
const json = (value: unknown) => JSON.stringify(value);

describe('message parsers', () => {
  it('accept a well-formed message from text or bytes', () => {
    expect(parseJson(requestDetailsSchema, json(details))).toEqual({ ok: true, value: details });
    expect(parseJson(requestDetailsSchema, utf8(json(details)))).toEqual({ ok: true, value: details });
  });

  it('refuse a body over the size limit before parsing it', () => {
    expectRefused(parseJson(requestDetailsSchema, ' '.repeat(MAX_BODY_BYTES + 1)), 'body_too_large');
    expectRefused(parseJson(requestDetailsSchema, new Uint8Array(MAX_BODY_BYTES + 1)), 'body_too_large');
    expectRefused(parseJson(requestDetailsSchema, '€'.repeat(MAX_BODY_BYTES / 3 + 1)), 'body_too_large');
  });

  it.each(['', '{', '{"v":1,}', 'undefined', "{'v':1}"])('refuse malformed JSON %j', (text) => {
    expectRefused(parseJson(requestDetailsSchema, text), 'malformed_json');
  });

  it('refuse bytes that are not UTF-8', () => {
    expectRefused(parseJson(requestDetailsSchema, Uint8Array.of(0x7b, 0xff, 0x7d)), 'malformed_json');
  });

  it('refuse a JSON value that is not an object', () => {
    for (const value of ['[]', '"text"', '1', 'null', 'true'])
      expectRefused(parseJson(requestDetailsSchema, value), 'invalid_field');
  });

  it('refuse another version before anything else', () => {
    expectRefused(parse(requestDetailsSchema, { ...details, v: 2, extra: 1 }), 'unknown_version');
    expectRefused(parse(requestDetailsSchema, { ...details, v: '1' }), 'unknown_version');
  });

  it('refuse a missing member, and name it', () => {
    const { title: _title, ...withoutTitle } = details;
    const result = parse(requestDetailsSchema, withoutTitle);
    expectRefused(result, 'missing_field');
    expect(!result.ok && result.error.message).toContain('title');
  });

  it('refuse an unknown member', () => {
    expectRefused(parse(requestDetailsSchema, { ...details, approved: true }), 'unknown_field');
  });

  it('refuse text that cleaning would change, instead of cleaning it again', () => {
    expectRefused(parse(requestDetailsSchema, { ...details, title: 'rm\u202e -rf' }), 'unclean_text');
    expectRefused(parse(requestDetailsSchema, { ...details, title: 'two\nlines' }), 'unclean_text');
    expect(parse(requestDetailsSchema, { ...details, detail: 'two\nlines' }).ok).toBe(true);
  });

  it('refuse an oversized text', () => {
    expectRefused(
      parse(requestDetailsSchema, { ...details, title: 'x'.repeat(LIMITS.titleBytes + 1) }),
      'field_too_large',
    );
  });

  it('refuse a bad id', () => {
    expectRefused(parse(requestDetailsSchema, { ...details, requestId: '../etc' }), 'invalid_id');
  });

  it('refuse an unknown risk level', () => {
    expectRefused(parse(requestDetailsSchema, { ...details, risk: 'extreme' }), 'invalid_field');
  });

  it('refuse a timestamp in seconds', () => {
    expectRefused(
      parse(requestDetailsSchema, { ...details, createdAt: Math.floor(details.createdAt / 1000) }),
      'invalid_field',
    );
  });

  it('refuse a nonce of the wrong size', () => {
    expectRefused(parse(requestDetailsSchema, { ...details, nonce: 'AAAA' }), 'invalid_field');
  });

  it('refuse an array over its item cap', () => {
    const state = {
      v: 1,
      fleet: 'f',
      frozen: true,
      epoch: 1,
      votes: Array.from({ length: LIMITS.votesPerFreeze + 1 }, (_, i) => `d${i}`),
      needed: 2,
    };
    expectRefused(parse(fleetStateSchema, state), 'field_too_large');
  });

  it.each([
    ['http on a public host', 'http://push.example/x'],
    ['credentials', 'https://user:pw@push.example/x'],
    ['an unnormalised URL', 'https://PUSH.example/x'],
    ['not a URL', 'push service'],
  ])('refuse a push endpoint with %s', (_what, endpoint) => {
    expectRefused(
      parse(pushSubscriptionSchema, { endpoint, keys: { p256dh: 'A'.repeat(87), auth: 'A'.repeat(22) } }),
      'invalid_field',
    );
  });

  it('accept a loopback http push endpoint, where the local push stand-in lives', () => {
    const keys = { p256dh: `B${'A'.repeat(86)}`, auth: 'A'.repeat(22) };
    expect(parse(pushSubscriptionSchema, { endpoint: 'http://127.0.0.1:9000/push/abc', keys }).ok).toBe(true);
  });

  it('tell events apart by type, and refuse an unknown type', () => {
    expect(parse(hostEventSchema, { v: 1, type: 'expired', requestId: 'r1', at: details.createdAt })).toEqual(
      {
        ok: true,
        value: { v: 1, type: 'expired', requestId: 'r1', at: details.createdAt },
      },
    );
    expectRefused(
      parse(hostEventSchema, { v: 1, type: 'approved-by-relay', requestId: 'r1' }),
      'invalid_field',
    );
    expectRefused(parse(hostEventSchema, { v: 1, requestId: 'r1' }), 'missing_field');
    expectRefused(parse(hostEventSchema, { v: 9, type: 'teleport' }), 'unknown_version');
  });
});
