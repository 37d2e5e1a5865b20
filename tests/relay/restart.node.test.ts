import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { FleetState } from '../../shared/messages/killSwitch.ts';
import type { Members, RequestList } from '../../shared/messages/relayViews.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { freePort, startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { bearer, RelayDriver } from '../support/relayDriver.ts';

const persistTo = mkdtempSync(join(tmpdir(), 'latch-relay-'));
let running: RelayProcess | undefined;
afterAll(async () => {
  await running?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

describe('a relay restart', () => {
  it('keeps requests, devices and the freeze, and a pending request can still be decided', async () => {
    const port = await freePort();
    const envFile = join(persistTo, 'relay.env');
    ensureRelayEnvFile(envFile);
    running = await startRelay({ persistTo, port, envFile });
    const relay = new RelayDriver(running.origin, (url, init) => fetch(url, init));
    const test = await relay.newFleet({ push: false });
    const { phone } = test.phones[0]!;
    const pending = await relay.submitRequest(test);
    expect(pending.reply.status).toBe(201);
    const freeze = await signEnvelope(
      'freeze',
      { fleet: test.fleet, reason: 'before restart' },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    expect((await relay.call('POST', `/v1/fleets/${test.fleet}/freeze`, { json: freeze })).status).toBe(200);

    await running.stop();
    running = await startRelay({ persistTo, port, envFile });

    const listed = await relay.phoneCall<RequestList>(
      phone,
      'GET',
      `/v1/fleets/${test.fleet}/requests?state=pending`,
    );
    expect(listed.body.requests.map((request) => request.requestId)).toEqual([pending.details.requestId]);
    const members = await relay.phoneCall<Members>(phone, 'GET', `/v1/fleets/${test.fleet}/members`);
    expect(members.body.devices.map((device) => device.id)).toEqual([phone.id]);
    const state = await relay.call<FleetState>('GET', `/v1/fleets/${test.fleet}/state`, {
      headers: bearer(test.hostToken),
    });
    expect(state.body).toMatchObject({ frozen: true, epoch: 1, reason: 'before restart' });

    const token = await signToken(phone, await bindingFor(pending.details), {
      origin: relay.origin,
      rpId: relay.rpId,
    });
    const decided = await relay.phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${pending.details.requestId}/decision`,
      token,
    );
    expect(decided).toEqual({ status: 200, body: { v: 1, state: 'approved' } });
  }, 120_000);
});
