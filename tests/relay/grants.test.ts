import { describe, expect, it } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { createPhone } from '../../scripts/lib/softwarePhone.ts';
import { expectRefusedReply } from '../support/expectRefused.ts';
import { call, DaemonSocket, fleetForTheseTests, sendDecision, submitRequest } from './harness.ts';

const { fleet, phone, path } = fleetForTheseTests();

describe('an approval that grants calls like this', () => {
  it('is checked with its grant and carried to the host as signed', async () => {
    const daemon = await DaemonSocket.connect(fleet());
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), { ...(await bindingFor(details)), grant: 'session' });
    const decided = await sendDecision(fleet(), phone(), details.requestId, token);
    expect(decided.status).toBe(200);
    const approved = await daemon.next('approved');
    expect(approved.event).toMatchObject({ requestId: details.requestId, token: { grant: 'session' } });
    daemon.close();
  });

  it('is refused when its grant was changed after signing (challenge_mismatch)', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), { ...(await bindingFor(details)), grant: 'session' });
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, {
        ...token,
        grant: 'half_hour',
      }),
      403,
      'challenge_mismatch',
    );
  });

  it('is refused when a grant was added to an approve-once (challenge_mismatch)', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), await bindingFor(details));
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, {
        ...token,
        grant: 'half_hour',
      }),
      403,
      'challenge_mismatch',
    );
  });

  it('is refused with an unknown grant (invalid_field)', async () => {
    const { details } = await submitRequest(fleet());
    const token = await signToken(phone(), await bindingFor(details));
    expectRefusedReply(
      await sendDecision(fleet(), phone(), details.requestId, {
        ...token,
        grant: 'forever',
      }),
      400,
      'invalid_field',
    );
  });
});

describe('a phone’s revoke of a rule it allowed', () => {
  const revoke = (body: { fleet: string; host: string; requestId: string }, signer = phone(), ts?: number) =>
    signEnvelope('revoke-grant', body, { role: 'device', id: phone().id }, signer.deviceKeys.privateKey, ts);
  const body = () => ({ fleet: fleet().fleet, host: fleet().host.id, requestId: 'r-granted' });

  it('is carried to the host, signed, and the relay learns only the request id', async () => {
    const daemon = await DaemonSocket.connect(fleet());
    const envelope = await revoke(body());
    const reply = await call('POST', path('/grants/revoke'), { json: envelope });
    expect(reply).toMatchObject({ status: 200, body: { v: 1, requestId: 'r-granted' } });
    const frame = await daemon.next('grant_revoked');
    expect(frame.event).toMatchObject({ type: 'grant_revoked', envelope });
    daemon.close();
  });

  it('is refused with a bad signature, a stale time or a replayed nonce', async () => {
    expectRefusedReply(
      await call('POST', path('/grants/revoke'), { json: await revoke(body(), await createPhone()) }),
      403,
      'bad_signature',
    );
    expectRefusedReply(
      await call('POST', path('/grants/revoke'), {
        json: await revoke(body(), phone(), Date.now() - 61_000),
      }),
      401,
      'stale_timestamp',
    );
    const once = await revoke(body());
    expect((await call('POST', path('/grants/revoke'), { json: once })).status).toBe(200);
    expectRefusedReply(await call('POST', path('/grants/revoke'), { json: once }), 401, 'replayed_nonce');
  });

  it('is refused for another fleet, a host the phone is not paired with, or an unknown phone', async () => {
    expectRefusedReply(
      await call('POST', path('/grants/revoke'), {
        json: await revoke({ ...body(), fleet: 'another-fleet' }),
      }),
      400,
      'context_mismatch',
    );
    expectRefusedReply(
      await call('POST', path('/grants/revoke'), { json: await revoke({ ...body(), host: 'another-host' }) }),
      404,
      'not_found',
    );
    const stranger = await createPhone();
    const unknown = await signEnvelope(
      'revoke-grant',
      body(),
      { role: 'device', id: stranger.id },
      stranger.deviceKeys.privateKey,
    );
    expectRefusedReply(
      await call('POST', path('/grants/revoke'), { json: unknown }),
      401,
      'unknown_credential',
    );
  });
});
