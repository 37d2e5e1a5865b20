import { beforeEach, describe, expect, it } from 'vitest';
import {
  DEVICE_AUTH_HEADERS,
  signDeviceRequest,
  verifyDeviceRequest,
  type DeviceRequest,
} from '../../shared/device-auth/deviceRequest.ts';
import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import { NOW } from '../../scripts/lib/approvalFixture.ts';
import { expectRefused } from '../support/expectRefused.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';

let phone: TestPhone;
let request: DeviceRequest;
let headers: Headers;

beforeEach(async () => {
  phone = await createPhone();
  request = { method: 'POST', path: '/v1/fleets/f1/freeze', body: utf8('{"reason":"incident"}') };
  headers = new Headers(
    await signDeviceRequest(request, { id: phone.id, privateKey: phone.deviceKeys.privateKey }, NOW),
  );
});

const lookup = (device: string) => (device === phone.id ? fromBase64url(phone.deviceKey) : undefined);
const verify = (changes: Partial<DeviceRequest> = {}, at = NOW, withHeaders = headers) =>
  verifyDeviceRequest({ ...request, ...changes }, withHeaders, lookup, at);

describe('device-signed requests', () => {
  it('verifies a request signed by a paired device', async () => {
    const result = await verify();
    expect(result.ok && result.value).toMatchObject({ device: phone.id, ts: NOW });
  });

  it.each<[string, Partial<DeviceRequest>]>([
    ['another method', { method: 'DELETE' }],
    ['another path', { path: '/v1/fleets/f2/freeze' }],
    ['another query', { path: '/v1/fleets/f1/freeze?x=1' }],
    ['another body', { body: utf8('{"reason":"other"}') }],
  ])('refuses the signature on %s', async (_what, change) => {
    expectRefused(await verify(change), 'bad_signature');
  });

  it.each([
    ['61 s late', NOW + 61_000],
    ['61 s early', NOW - 61_000],
  ])('refuses a timestamp %s', async (_what, at) => {
    expectRefused(await verify({}, at), 'stale_timestamp');
  });

  it('accepts a timestamp 60 s off', async () => {
    expect((await verify({}, NOW + 60_000)).ok).toBe(true);
  });

  it('refuses an unknown device', async () => {
    const stranger = await createPhone();
    const signed = new Headers(
      await signDeviceRequest(request, { id: stranger.id, privateKey: stranger.deviceKeys.privateKey }, NOW),
    );
    expectRefused(await verify({}, NOW, signed), 'unknown_credential');
  });

  it('refuses a signature by another key under this device’s id', async () => {
    const stranger = await createPhone();
    const signed = new Headers(
      await signDeviceRequest(request, { id: phone.id, privateKey: stranger.deviceKeys.privateKey }, NOW),
    );
    expectRefused(await verify({}, NOW, signed), 'bad_signature');
  });

  it.each(Object.values(DEVICE_AUTH_HEADERS))('refuses a request without the %s header', async (name) => {
    headers.delete(name);
    expectRefused(await verify(), 'missing_field');
  });

  it('refuses a timestamp that is not a number', async () => {
    headers.set(DEVICE_AUTH_HEADERS.timestamp, '1e12');
    expectRefused(await verify(), 'stale_timestamp');
  });

  it('refuses a device header that is not an id', async () => {
    headers.set(DEVICE_AUTH_HEADERS.device, 'a/b');
    expectRefused(await verify(), 'invalid_id');
  });

  it('refuses a malformed nonce', async () => {
    headers.set(DEVICE_AUTH_HEADERS.nonce, 'AA==');
    expectRefused(await verify(), 'malformed_base64url');
  });
});
