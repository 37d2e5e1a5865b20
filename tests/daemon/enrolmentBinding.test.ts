import { existsSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approvedTotpSecret } from '../../daemon/fallback/totpSecret.ts';
import { revokeDevice } from '../../daemon/pairing/revokeDevice.ts';
import { callDaemon } from '../../daemon/socket/daemonClient.ts';
import type { GateAnswer } from '../../daemon/socket/localApi.ts';
import { createPhone, type TestPhone } from '../../scripts/lib/softwarePhone.ts';
import { revokeChallenge } from '../../shared/device-auth/revokeChallenge.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { phoneApproves } from '../support/phoneApproves.ts';
import { auditLines, pairedDeviceOf, withStore } from '../support/latchMachine.ts';
import { fleetOf } from '../support/killSwitchRelay.ts';
import { framesHandled, startPairedDaemon, type PairedDaemon } from '../support/pairedDaemon.ts';

/**
 * A paired phone's "Add phone X?" approves that phone's keys, not its name or id: another
 * enrolment under the same id and name with a passkey of its own (a local process racing
 * `latch pair`, which learnt both from a hostile relay) is another request.
 */

let paired: PairedDaemon;
beforeEach(async () => {
  paired = await startPairedDaemon();
});
afterEach(() => paired.stop());

/** What `latch pair` sends for `phone`, with the passkey made on `authenticatorOf`'s authenticator. */
const enrolmentOf = async (phone: TestPhone, authenticatorOf: TestPhone, origin: string) =>
  ({ kind: 'phone', device: await pairedDeviceOf(phone, origin, authenticatorOf.authenticator) }) as const;

describe('adding a phone through a paired phone’s approval', () => {
  it('binds the approval to the new phone’s keys: a second enrolment under its id and name is asked apart', async () => {
    const { relay, machine } = paired;
    const [approver] = paired.phones;
    const newPhone = await createPhone('Pixel 9');
    const intruder = await createPhone('anything');
    const genuine = await enrolmentOf(newPhone, newPhone, relay.origin);
    const forged = await enrolmentOf(newPhone, intruder, relay.origin);
    const options = { socketPath: machine.socket, timeoutMs: 60_000 };

    const first = callDaemon<GateAnswer>('POST', '/v1/enrol', genuine, options);
    const askedFirst = await relay.nextRequest(0);
    const second = callDaemon<GateAnswer>('POST', '/v1/enrol', forged, options);
    const askedSecond = await relay.nextRequest(1);
    expect(askedSecond.requestId).not.toBe(askedFirst.requestId);

    relay.sendApproval(askedFirst.requestId, (await phoneApproves(approver, askedFirst, relay.origin)).token);
    expect(await first).toMatchObject({ decision: 'allow' });
    await relay.sendDenial(approver, askedSecond);
    expect(await second).toMatchObject({ decision: 'deny' });

    // Kept apart until `latch pair` has the relay's confirmation; then trusted by these keys only.
    expect(withStore(machine, (store) => store.activeDevice(newPhone.id))).toBeUndefined();
    expect(withStore(machine, (store) => store.confirmDevice(forged.device, Date.now()))).toBe(
      'not_awaiting',
    );
    expect(withStore(machine, (store) => store.confirmDevice(genuine.device, Date.now()))).toBe('confirmed');
    const stored = withStore(machine, (store) => store.activeDevice(newPhone.id));
    expect(stored?.credential.id).toBe(genuine.device.credential.id);
  });

  it('refuses, asking nobody, a phone already paired here under keys of its own, and an id that is not its key’s', async () => {
    const { relay, machine } = paired;
    const [approver] = paired.phones;
    const intruder = await createPhone('anything');
    const options = { socketPath: machine.socket, timeoutMs: 60_000 };
    const asked = relay.requests.length;

    // The paired phone's id and public device key, with the intruder's encryption key and passkey.
    const own = await enrolmentOf(approver!, intruder, relay.origin);
    const takeover = { kind: 'phone', device: { ...own.device, ecdhKey: intruder.ecdhKey } } as const;
    expect(await callDaemon('POST', '/v1/enrol', takeover, options)).toEqual({
      error: {
        code: 'already_paired',
        message: `${approver!.name} (${approver!.id}) is already paired with this host; to pair it anew, revoke it (latch devices --revoke ${approver!.id}) and pair it as a new phone (clear the app's data, which gives it new keys)`,
      },
    });
    // A new phone's id under the intruder's device key.
    const newPhone = await createPhone('Pixel 9');
    const genuine = await enrolmentOf(newPhone, intruder, relay.origin);
    const misnamed = { kind: 'phone', device: { ...genuine.device, deviceKey: intruder.deviceKey } } as const;
    expect(await callDaemon('POST', '/v1/enrol', misnamed, options)).toEqual({
      error: { code: 'invalid_request', message: 'the device id is not its device key’s' },
    });

    expect(relay.requests.length).toBe(asked);
    const stored = withStore(machine, (store) => store.activeDevice(approver!.id));
    expect(stored?.ecdhKey).toBe(approver!.ecdhKey);
  });
});

describe('a phone revoked on this host', () => {
  it('is never added again, asking nobody (revoked_here): a revoke the relay kept cannot end it anew', async () => {
    const { relay, machine } = paired;
    const [approver] = paired.phones;
    const options = { socketPath: machine.socket, timeoutMs: 60_000 };
    const lost = await createPhone('Pixel 9');
    const enrolment = await enrolmentOf(lost, lost, relay.origin);
    const added = callDaemon<GateAnswer>('POST', '/v1/enrol', enrolment, options);
    const asked = await relay.nextRequest(0);
    relay.sendApproval(asked.requestId, (await phoneApproves(approver, asked, relay.origin)).token);
    expect(await added).toMatchObject({ decision: 'allow' });
    // `latch pair` trusts it once the relay has taken its pairing.
    expect(withStore(machine, (store) => store.confirmDevice(enrolment.device, Date.now()))).toBe(
      'confirmed',
    );

    // Revoked in the app: the relay passes on the approver's Face ID assertion, and may keep it.
    const revoke = {
      v: PROTOCOL_VERSION,
      type: 'device_revoked',
      device: lost.id,
      by: approver.id,
      assertion: await approver.authenticator.assert({
        rpId: new URL(relay.origin).hostname,
        origin: relay.origin,
        challenge: await revokeChallenge({ fleet: fleetOf(machine), device: lost.id }),
      }),
      at: Date.now(),
    } as const;
    relay.send(revoke);
    await framesHandled(machine, relay);
    expect(withStore(machine, (store) => store.activeDevice(lost.id))).toBeUndefined();

    // The same phone (the app keeps its keys) asks to be added again.
    const again = await Promise.race([
      callDaemon('POST', '/v1/enrol', enrolment, options),
      relay.nextRequest(1).then(() => 'a phone was asked to add it'),
    ]);
    expect(again).toEqual({
      error: {
        code: 'revoked_here',
        message: `Pixel 9 (${lost.id}) was revoked on this host, and a revoked phone never pairs here again: pair it as a new phone (clear the app's data, which gives it new keys), or start this host anew (latch init --reset)`,
      },
    });
    expect(relay.requests.length).toBe(1);

    relay.send({ ...revoke, at: Date.now() });
    await framesHandled(machine, relay);
    expect(auditLines(machine).filter(({ event }) => event === 'device_revoked')).toHaveLength(1);
  });
});

describe('a phone revoked after its approval, before latch pair confirms it', () => {
  /** A further phone a paired phone approved, kept awaiting `latch pair`'s confirmation. */
  async function approvedAwaiting(name: string) {
    const { relay, machine } = paired;
    const [approver] = paired.phones;
    const phone = await createPhone(name);
    const enrolment = await enrolmentOf(phone, phone, relay.origin);
    const asked = relay.requests.length;
    const added = callDaemon<GateAnswer>('POST', '/v1/enrol', enrolment, {
      socketPath: machine.socket,
      timeoutMs: 60_000,
    });
    const request = await relay.nextRequest(asked);
    relay.sendApproval(request.requestId, (await phoneApproves(approver, request, relay.origin)).token);
    expect(await added).toMatchObject({ decision: 'allow' });
    expect(withStore(machine, (store) => store.awaitingDevice(phone.id))).toBe(true);
    return { phone, enrolment };
  }
  /** A revoke of `device` made in the app by `by`, with its Face ID assertion, as the relay passes it on. */
  const revokedInApp = async (device: string, by: TestPhone) =>
    ({
      v: PROTOCOL_VERSION,
      type: 'device_revoked',
      device,
      by: by.id,
      assertion: await by.authenticator.assert({
        rpId: new URL(paired.relay.origin).hostname,
        origin: paired.relay.origin,
        challenge: await revokeChallenge({ fleet: fleetOf(paired.machine), device }),
      }),
      at: Date.now(),
    }) as const;

  it('is never trusted when revoked in the app meanwhile: stored revoked, it never pairs here again', async () => {
    const { relay, machine } = paired;
    const [approver] = paired.phones;
    const { phone, enrolment } = await approvedAwaiting('Pixel 9');
    relay.send(await revokedInApp(phone.id, approver!));
    await framesHandled(machine, relay);

    expect(withStore(machine, (store) => store.confirmDevice(enrolment.device, Date.now()))).toBe(
      'paired_before',
    );
    expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeUndefined();
    expect(withStore(machine, (store) => store.devices({ includeRevoked: true }))).toContainEqual(
      expect.objectContaining({ id: phone.id, revoked: true }),
    );
    expect(auditLines(machine).at(-1)).toMatchObject({
      event: 'device_revoked',
      device: phone.id,
      by: 'phone',
      phone: approver!.id,
    });
    const again = await callDaemon('POST', '/v1/enrol', enrolment, {
      socketPath: machine.socket,
      timeoutMs: 60_000,
    });
    expect(again).toMatchObject({ error: { code: 'revoked_here' } });
  });

  it('is forgotten, not trusted, when a revoke of it in the app does not verify', async () => {
    const { relay, machine } = paired;
    const { phone, enrolment } = await approvedAwaiting('Pixel 9');
    const stranger = await createPhone('not paired here');
    relay.send(await revokedInApp(phone.id, stranger));
    await framesHandled(machine, relay);

    expect(withStore(machine, (store) => store.confirmDevice(enrolment.device, Date.now()))).toBe(
      'not_awaiting',
    );
    expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeUndefined();
    expect(auditLines(machine).at(-1)).toMatchObject({
      event: 'pairing_refused',
      device: phone.id,
      code: 'revoke_unverified',
      forgotten: true,
    });
  });

  it('is not trusted when the phone that approved it was revoked here meanwhile (approver_revoked)', async () => {
    const { machine } = paired;
    const [approver] = paired.phones;
    const { phone, enrolment } = await approvedAwaiting('Pixel 9');
    expect(
      withStore(machine, (store, audit) => revokeDevice(store, audit, approver!.id, { by: 'host' })),
    ).toBe(true);

    expect(withStore(machine, (store) => store.confirmDevice(enrolment.device, Date.now()))).toBe(
      'approver_revoked',
    );
    expect(withStore(machine, (store) => store.activeDevice(phone.id))).toBeUndefined();
    expect(withStore(machine, (store) => store.awaitingDevice(phone.id))).toBe(false);
  });
});

describe('enrolling an authenticator app through a paired phone’s approval', () => {
  it('keeps the secret the phone approved, and only that one; a denied one is never written', async () => {
    const { relay, machine } = paired;
    const [approver] = paired.phones;
    const options = { socketPath: machine.socket, timeoutMs: 60_000 };
    const secret = toBase64url(new Uint8Array(20).fill(3));
    const approvedSecret = () => withStore(machine, (store) => approvedTotpSecret(store, machine.files.totp));

    const denied = callDaemon<GateAnswer>('POST', '/v1/enrol', { kind: 'totp', secret }, options);
    await relay.sendDenial(approver!, await relay.nextRequest(0));
    expect(await denied).toMatchObject({ decision: 'deny' });
    expect(existsSync(machine.files.totp)).toBe(false);

    const approved = callDaemon<GateAnswer>('POST', '/v1/enrol', { kind: 'totp', secret }, options);
    const asked = await relay.nextRequest(1);
    relay.sendApproval(asked.requestId, (await phoneApproves(approver, asked, relay.origin)).token);
    expect(await approved).toMatchObject({ decision: 'allow' });
    expect(statSync(machine.files.totp).mode & 0o777).toBe(0o600);
    expect(toBase64url(approvedSecret()!)).toBe(secret);

    // The same file with a secret nobody approved is not the approved secret.
    writeFileSync(
      machine.files.totp,
      `${JSON.stringify({ secret: toBase64url(new Uint8Array(20).fill(4)) })}\n`,
    );
    expect(approvedSecret()).toBeUndefined();
  });
});
