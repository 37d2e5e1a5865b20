import { writeFileSync } from 'node:fs';
import QRCode from 'qrcode';
import { toBase64url } from '../../../shared/encoding/base64url.ts';
import { randomBytes } from '../../../shared/encoding/bytes.ts';
import { signEnvelope } from '../../../shared/envelopes/signEnvelope.ts';
import { LIMITS } from '../../../shared/messages/limits.ts';
import type { PairingOffer } from '../../../shared/messages/pairing.ts';
import { pairingLink } from '../../../shared/pairing/pairingLink.ts';
import { derivePairingKeys, PAIRING_SECRET_BYTES } from '../../../shared/pairing/pairingKeys.ts';
import { offerMac, shortCode } from '../../../shared/pairing/pairingTranscript.ts';
import { verifyPairingCompletion } from '../../../shared/pairing/verifyPairingCompletion.ts';
import { sanitizeText } from '../../../shared/text/sanitizeText.ts';
import { PROTOCOL_VERSION } from '../../../shared/version.ts';
import { newTotpSecret, totpUri } from '../../fallback/totp.ts';
import { loadHostIdentity } from '../../identity/hostIdentity.ts';
import { RelayClient } from '../../relay/relayClient.ts';
import { fail, openHome } from '../home.ts';
import { existsSync, readFileSync } from 'node:fs';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function printQr(text: string): Promise<void> {
  process.stdout.write(await QRCode.toString(text, { type: 'terminal', small: true }));
}

export async function run(options: { totp?: boolean; timeout: string }): Promise<void> {
  const { files, config, store, audit } = openHome();
  const host = await loadHostIdentity(files.hostKey);
  const token = existsSync(files.hostToken) ? readFileSync(files.hostToken, 'utf8').trim() : undefined;
  const relay = new RelayClient(config.relay.url, config.host.fleet, () => token);
  const relying = { origins: [config.relay.url], rpId: new URL(config.relay.url).hostname };
  const ttlMs = Math.min(Math.max(Number(options.timeout) || 600, 60), 3600) * 1000;

  const secret = randomBytes(PAIRING_SECRET_BYTES);
  const { offerToken, macKey } = await derivePairingKeys(secret);
  const unsigned = {
    v: PROTOCOL_VERSION,
    fleet: config.host.fleet,
    host: host.id,
    hostName: sanitizeText(config.host.name, { maxBytes: LIMITS.nameBytes, multiline: false }).text,
    offerId: toBase64url(randomBytes(12)),
    hostKey: host.publicKey,
    offerToken,
    exp: Date.now() + ttlMs,
  };
  const offer: PairingOffer = { ...unsigned, offerMac: await offerMac(macKey, unsigned) };
  const created = await relay.createOffer(offer);
  if (!created.ok) fail(`the relay did not take the pairing offer: ${created.failure.message}`, 1);

  const link = pairingLink({
    origin: config.relay.url,
    fleet: offer.fleet,
    offerId: offer.offerId,
    secret,
  });
  process.stdout.write('Scan this code with your phone’s camera, or open the link in the Latch app:\n\n');
  await printQr(link);
  process.stdout.write(`\n${link}\n\nWaiting for your phone…\n`);

  let completion;
  while (!completion) {
    if (Date.now() > offer.exp) fail('the pairing code expired; run latch pair again', 1);
    const status = await relay.offerStatus(offer.offerId, offerToken);
    if (status.ok && status.value.completion) completion = status.value.completion;
    else await sleep(1000);
  }
  const paired = await verifyPairingCompletion(completion, offer, secret, relying);
  if (!paired.ok) {
    audit.append({ event: 'pairing_refused', offerId: offer.offerId, code: paired.error.code });
    fail(`refused the phone’s answer: ${paired.error.message} (${paired.error.code})`, 1);
  }
  process.stdout.write(
    `\nYour phone shows this code: ${await shortCode(macKey, offer, completion)}\nIf it does not, run latch devices --revoke ${paired.value.id}.\n`,
  );

  const envelope = await signEnvelope(
    'pair-confirm',
    { fleet: offer.fleet, offerId: offer.offerId, device: paired.value.id },
    { role: 'host', id: host.id },
    host.privateKey,
  );
  const confirmed = await relay.confirmOffer(offer.offerId, {
    v: PROTOCOL_VERSION,
    envelope,
    quorum: config.killSwitch.quorum,
  });
  if (!confirmed.ok) fail(`the relay did not take the confirmation: ${confirmed.failure.message}`, 1);
  if (confirmed.value.hostToken)
    writeFileSync(files.hostToken, `${confirmed.value.hostToken}\n`, { mode: 0o600 });
  store.addDevice(paired.value, Date.now());
  audit.append({ event: 'paired', device: paired.value.id, name: paired.value.name });
  process.stdout.write(`Paired ${paired.value.name}.\n`);

  const phones = store.devices().length;
  if (phones < config.killSwitch.quorum) {
    process.stdout.write(
      `Note: resuming after a freeze takes ${config.killSwitch.quorum} phones and ${phones} ${phones === 1 ? 'is' : 'are'} paired. ` +
        'Pair another phone, or set kill_switch.quorum in the config.\n',
    );
  }

  if (options.totp) {
    const totpSecret = newTotpSecret();
    writeFileSync(files.totp, `${JSON.stringify({ secret: toBase64url(totpSecret) })}\n`, {
      mode: 0o600,
    });
    audit.append({ event: 'totp_enrolled' });
    process.stdout.write(
      '\nScan this code with your authenticator app (TOTP fallback, used only when no phone can be reached):\n\n',
    );
    await printQr(totpUri(totpSecret, config.host.name));
    process.stdout.write('Set [fallback] mode = "totp" in the config to use it.\n');
  }
  store.close();
}
