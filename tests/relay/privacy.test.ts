import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { Fleet } from '../../relay/fleet/Fleet.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import { bindingFor, signToken } from '../../scripts/lib/approvalFixture.ts';
import { call, fileOffer, fleetStub, newFleet, phoneCall, scanOffer, submitRequest } from './harness.ts';

/** Every value of every table of a fleet, as one string. */
async function everythingStored(fleet: string): Promise<string> {
  return runInDurableObject(fleetStub(fleet), (_instance: Fleet, state) => {
    const sql = state.storage.sql;
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
      )
      .toArray();
    return tables.map(({ name }) => JSON.stringify(sql.exec(`SELECT * FROM "${name}"`).toArray())).join('\n');
  });
}

describe('what the relay stores', () => {
  it('holds no command text, no token in the clear, only ciphertext and metadata', async () => {
    const test = await newFleet();
    const { phone } = test.phones[0]!;
    const secretWords = 'DROP TABLE customers_9f3a';
    const approved = await submitRequest(test, {
      title: `Run ${secretWords}`,
      detail: `psql -c "${secretWords}"`,
      cwd: '/srv/billing-9f3a',
    });
    await phoneCall(
      phone,
      'POST',
      `/v1/fleets/${test.fleet}/requests/${approved.details.requestId}/decision`,
      await signToken(phone, await bindingFor(approved.details)),
    );
    const denied = await submitRequest(test, { title: `Run ${secretWords} again` });
    const deny = await signEnvelope(
      'deny',
      { fleet: test.fleet, host: test.host.id, requestId: denied.details.requestId },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    await call('POST', `/v1/fleets/${test.fleet}/requests/${denied.details.requestId}/deny`, { json: deny });

    const stored = await everythingStored(test.fleet);
    expect(stored).toContain(approved.details.requestId); // the dump is real
    expect(stored).not.toContain('customers_9f3a');
    expect(stored).not.toContain('billing-9f3a');
    expect(stored).not.toContain(test.hostToken);
  });

  it('keeps an open pairing offer without its token, which the phone that scanned it still gets back', async () => {
    const test = await newFleet({ push: false });
    const { offer, secret } = await fileOffer(test);
    const stored = await everythingStored(test.fleet);
    expect(stored).toContain(offer.offerId); // the dump is real
    expect(stored).not.toContain(offer.offerToken);
    // The phone checks the host's MAC over the whole offer, token included.
    const scanned = await scanOffer(secret);
    expect(scanned.reply.status).toBe(200);
    expect(scanned.offer).toMatchObject({ ok: true, value: { offerToken: offer.offerToken } });
  });
});
