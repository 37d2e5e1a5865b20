import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes } from '../../shared/encoding/bytes.ts';
import type { OfferStatus } from '../../shared/messages/relayViews.ts';
import { pairingLink } from '../../shared/pairing/pairingLink.ts';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';
import { createHost, createOffer } from '../../scripts/lib/softwarePhone.ts';
import { launchPhone } from '../support/browserPhone.ts';
import { RelayDriver } from '../support/relayDriver.ts';

const state = mkdtempSync(join(tmpdir(), 'latch-tampered-offer-'));
let relay: RelayProcess;
let origin: string;
let driver: RelayDriver;

beforeAll(async () => {
  const envFile = join(state, 'relay.env');
  ensureRelayEnvFile(envFile);
  relay = await startRelay({ persistTo: state, envFile });
  // WebAuthn needs a domain for its RP ID, not an IP address.
  origin = `http://localhost:${relay.port}`;
  driver = new RelayDriver(origin, fetch);
});

afterAll(async () => {
  await relay?.stop();
  rmSync(state, { recursive: true, force: true });
});

describe('the phone’s check of a pairing offer', () => {
  it('refuses an offer whose MAC is not the code’s (bad_mac), and sends the relay nothing', async () => {
    const fleet = `fleet-${toBase64url(randomBytes(9))}`;
    const { offer, secret } = await createOffer(await createHost(), { fleet });
    // A relay that swaps in a host key of its own: the offer's id and token still match the code.
    const impostor = await createHost();
    const filed = await driver.call('POST', `/v1/fleets/${fleet}/pairing`, {
      json: { ...offer, host: impostor.id, hostKey: impostor.hostKey },
    });
    expect(filed.status).toBe(201);

    // The check comes before any push: the subscription is never used.
    const phone = await launchPhone(
      origin,
      { endpoint: `${origin}/no-push-service`, keys: { p256dh: 'A', auth: 'A' } },
      'tampered-offer',
    );
    try {
      await phone.page.goto(pairingLink({ origin, secret }));
      await phone.page.getByRole('button', { name: 'Pair with Face ID' }).click();
      // Either ending of the exchange: the refusal, or, had the app taken the offer, the short code.
      const outcome = phone.page.getByRole('alert').or(phone.page.getByLabel('short code'));
      await outcome.waitFor();
      expect(await outcome.textContent()).toBe(
        'This code was tampered with on the way (bad_mac). Do not pair.',
      );
      const status = await driver.call<OfferStatus>('GET', `/v1/fleets/${fleet}/pairing/${offer.offerId}`, {
        headers: { 'latch-offer-token': offer.offerToken },
      });
      expect(status.status).toBe(200);
      expect(status.body).not.toHaveProperty('completion');
    } finally {
      await phone.close();
    }
  });
});
