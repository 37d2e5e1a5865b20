import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { attempt } from '../../shared/errors.ts';
import { verifyEnvelope } from '../../shared/envelopes/verifyEnvelope.ts';
import { keyId } from '../../shared/keys/p256.ts';
import type { PairConfirmRequest, PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import type { OfferStatus, OfferWithdrawn, PairConfirmed } from '../../shared/messages/relayViews.ts';
import { verifyPasskeyRegistration } from '../../shared/pairing/verifyPasskeyRegistration.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import { refusal, refuseWith, type RelayResult, type Unversioned } from '../http/relayError.ts';
import { count, row, type FleetContext, type HostRow } from './context.ts';
import { activeDevice, authenticateDevice, consumeNonce, type SignedRequest } from './deviceAuth.ts';
import { authenticateHost, mintHostToken, tokenHash } from './hostAuth.ts';

/** An offer lives at most this long; `latch pair` uses ten minutes. */
const MAX_OFFER_TTL_MS = 3600_000;
/**
 * Open offers per paired host, and from all unpaired hosts together: enough for any person, too
 * few to fill storage. Counted apart, so that strangers who know the fleet id cannot use up a
 * paired host's offers and keep it from pairing a phone.
 */
const MAX_OPEN_OFFERS = 20;

/** An offer as stored: without its token, which the phone and the daemon present each time. */
type StoredOffer = Omit<PairingOffer, 'offerToken'>;

interface OfferRow {
  offer_id: string;
  host: string;
  /** A StoredOffer, as JSON. */
  offer: string;
  offer_token_hash: string;
  exp: number;
  completion: string | null;
  confirmed_at: number | null;
}

/**
 * A host offers to pair. A registered host must show its token. An unregistered one may offer
 * freely, but only the first pairing of an empty fleet is open to any phone (strangerRefused).
 */
export async function createOffer(
  ctx: FleetContext,
  offer: PairingOffer,
  bearer: string | undefined,
): Promise<RelayResult<{ offerId: string; exp: number }>> {
  const now = ctx.now();
  if (offer.exp <= now || offer.exp > now + MAX_OFFER_TTL_MS) {
    return refusal('invalid_field', 'exp must be in the coming hour');
  }
  if (offer.host !== (await keyId(fromBase64url(offer.hostKey)))) {
    return refusal('wrong_signer', 'the host id is not the id of the host key');
  }
  const registered = row<HostRow>(ctx.sql, 'SELECT * FROM hosts WHERE id = ?', offer.host);
  if (registered || bearer) {
    const host = await authenticateHost(ctx, bearer);
    if (!host.ok)
      return registered && !bearer
        ? refusal('host_token_required', 'this host is paired: show its token')
        : host;
    if (host.value.id !== offer.host) return refusal('forbidden', 'a host can only offer to pair itself');
  }
  ctx.sql.exec('DELETE FROM offers WHERE exp < ?', now);
  const open = registered
    ? row<{ count: number }>(
        ctx.sql,
        'SELECT COUNT(*) AS count FROM offers WHERE confirmed_at IS NULL AND host = ?',
        offer.host,
      )!
    : row<{ count: number }>(
        ctx.sql,
        'SELECT COUNT(*) AS count FROM offers WHERE confirmed_at IS NULL AND host NOT IN (SELECT id FROM hosts)',
      )!;
  if (open.count >= MAX_OPEN_OFFERS) return refusal('too_many_offers', 'too many open pairing offers');
  if (row(ctx.sql, 'SELECT 1 FROM offers WHERE offer_id = ?', offer.offerId)) {
    return refusal('offer_closed', 'an offer with this id exists');
  }
  // Only the token's hash is kept: whoever reads the storage cannot answer the offer with it.
  const { offerToken, ...kept } = offer;
  ctx.sql.exec(
    'INSERT INTO offers (offer_id, host, offer, offer_token_hash, exp) VALUES (?, ?, ?, ?, ?)',
    offer.offerId,
    offer.host,
    JSON.stringify(kept satisfies StoredOffer),
    await tokenHash(offerToken),
    offer.exp,
  );
  return { ok: true, value: { offerId: offer.offerId, exp: offer.exp } };
}

/**
 * Nobody adds a host, and with it a phone that could freeze the fleet, to someone else's fleet:
 * an offer from a host the fleet does not know is taken only by a phone already in it, unless
 * the fleet has no member at all (no host, no phone, revoked ones included). Judged when the
 * phone answers and again when the host confirms, never only when the offer was filed: an offer
 * filed into an empty fleet must not stay open to strangers once the fleet has an owner.
 */
function strangerRefused(ctx: FleetContext, host: string, device: string) {
  if (row(ctx.sql, 'SELECT 1 FROM hosts WHERE id = ?', host)) return undefined;
  const hasMembers =
    row(ctx.sql, 'SELECT 1 FROM hosts UNION ALL SELECT 1 FROM devices LIMIT 1') !== undefined;
  if (!hasMembers || activeDevice(ctx, device)) return undefined;
  return refusal('forbidden', 'only a phone already in this fleet can add a new host to it');
}

/** A passkey is one device's: a second device with it would answer for the first. */
const passkeyOfAnotherDevice = (ctx: FleetContext, credentialId: string, device: string) =>
  row(ctx.sql, 'SELECT 1 FROM devices WHERE credential_id = ? AND id != ?', credentialId, device) !==
  undefined;

const passkeyTaken = () =>
  refusal('registration_failed', 'this passkey is already paired with another device of the fleet');

/** The offer for whoever holds its token (the phone that scanned it, the daemon that made it). */
async function openOffer(
  ctx: FleetContext,
  offerId: string,
  offerToken: string | undefined,
): Promise<RelayResult<OfferRow & { offerToken: string }>> {
  const offer = row<OfferRow>(ctx.sql, 'SELECT * FROM offers WHERE offer_id = ?', offerId);
  // Same answer for "no such offer" and "wrong token": the offer's existence is not disclosed.
  if (!offer || !offerToken || offer.offer_token_hash !== (await tokenHash(offerToken))) {
    return refusal('not_found', 'no such pairing offer');
  }
  if (offer.exp <= ctx.now()) return refusal('expired', 'the pairing offer expired; run latch pair again');
  return { ok: true, value: { ...offer, offerToken } };
}

export async function offerStatus(
  ctx: FleetContext,
  offerId: string,
  offerToken: string | undefined,
): Promise<RelayResult<Unversioned<OfferStatus>>> {
  const offer = await openOffer(ctx, offerId, offerToken);
  if (!offer.ok) return offer;
  const { offer: json, offerToken: presented, completion, confirmed_at } = offer.value;
  return {
    ok: true,
    value: {
      // The token presented, which matched the hash: the very one the offer was filed with.
      offer: { ...(JSON.parse(json) as StoredOffer), offerToken: presented },
      ...(completion ? { completion: JSON.parse(completion) as PairingCompletion } : {}),
      confirmed: confirmed_at !== null,
    },
  };
}

/**
 * The host gave up on its offer (the code mistyped at its terminal, the "add phone" denied, `latch
 * pair` stopped): the offer goes, so that the phone waiting on it is told at once rather than
 * when it expires. Whoever holds the offer's token may: the host that made it, or the phone.
 */
export async function withdrawOffer(
  ctx: FleetContext,
  offerId: string,
  offerToken: string | undefined,
): Promise<RelayResult<Unversioned<OfferWithdrawn>>> {
  const offer = await openOffer(ctx, offerId, offerToken);
  if (!offer.ok) return offer;
  if (offer.value.confirmed_at !== null) return refusal('offer_closed', 'this offer was already confirmed');
  ctx.sql.exec('DELETE FROM offers WHERE offer_id = ? AND confirmed_at IS NULL', offerId);
  return { ok: true, value: { offerId, state: 'withdrawn' } };
}

/**
 * A phone answers an offer. It signs the request with the device key it pairs with; the relay
 * checks that and the passkey registration (defence in depth: the daemon checks the MAC, which
 * is what actually authenticates the phone to it).
 */
export async function completeOffer(
  ctx: FleetContext,
  offerId: string,
  offerToken: string | undefined,
  completion: PairingCompletion,
  request: SignedRequest,
  relying: RelyingParty,
): Promise<RelayResult<{ accepted: true }>> {
  const offer = await openOffer(ctx, offerId, offerToken);
  if (!offer.ok) return offer;
  if (completion.offerId !== offerId || completion.fleet !== ctx.fleet) {
    return refusal('context_mismatch', 'the completion answers another offer');
  }
  if (offer.value.completion || offer.value.confirmed_at !== null)
    return refusal('offer_closed', 'this offer was already answered');

  const { device } = completion;
  if (device.id !== (await keyId(fromBase64url(device.deviceKey)))) {
    return refusal('device_mismatch', 'the device id is not the id of its key');
  }
  const known = row<{ device_key: string; revoked_at: number | null }>(
    ctx.sql,
    'SELECT device_key, revoked_at FROM devices WHERE id = ?',
    device.id,
  );
  if (known && (known.revoked_at !== null || known.device_key !== device.deviceKey)) {
    return refusal('forbidden', 'this device was revoked from the fleet');
  }
  const auth = await authenticateDevice(ctx, request, { id: device.id, deviceKey: device.deviceKey });
  if (!auth.ok) return auth;
  // Signed by the device being paired, not by another of the fleet's phones for it.
  if (auth.value.device !== device.id)
    return refusal('device_mismatch', 'the answer is signed by another device than the one it pairs');

  const registration = await attempt(() =>
    verifyPasskeyRegistration(device, completion.registration, relying),
  );
  if (!registration.ok) return refuseWith(registration.error);
  if (passkeyOfAnotherDevice(ctx, registration.value.id, device.id)) return passkeyTaken();
  // Re-read: another completion may have landed while the checks above awaited.
  if (
    row(
      ctx.sql,
      'SELECT 1 FROM offers WHERE offer_id = ? AND (completion IS NOT NULL OR confirmed_at IS NOT NULL)',
      offerId,
    )
  ) {
    return refusal('offer_closed', 'this offer was already answered');
  }
  const stranger = strangerRefused(ctx, offer.value.host, device.id);
  if (stranger) return stranger;
  ctx.sql.exec('UPDATE offers SET completion = ? WHERE offer_id = ?', JSON.stringify(completion), offerId);
  return { ok: true, value: { accepted: true } };
}

/**
 * The daemon confirms, signing with the host key of its offer. Then the phone joins the fleet
 * (or, if already in it, is linked to this host), and a new host receives its bearer token.
 */
export async function confirmOffer(
  ctx: FleetContext,
  offerId: string,
  request: PairConfirmRequest,
  relying: RelyingParty,
): Promise<RelayResult<Unversioned<PairConfirmed>>> {
  const now = ctx.now();
  const stored = row<OfferRow>(ctx.sql, 'SELECT * FROM offers WHERE offer_id = ?', offerId);
  if (!stored) return refusal('not_found', 'no such pairing offer');
  if (stored.exp <= now) return refusal('expired', 'the pairing offer expired');
  if (!stored.completion) return refusal('offer_closed', 'no phone has answered this offer yet');
  if (stored.confirmed_at !== null) return refusal('offer_closed', 'this offer was already confirmed');

  const offer = JSON.parse(stored.offer) as StoredOffer;
  const completion = JSON.parse(stored.completion) as PairingCompletion;
  const { envelope } = request;
  if (
    envelope.body.fleet !== ctx.fleet ||
    envelope.body.offerId !== offerId ||
    envelope.body.device !== completion.device.id ||
    envelope.signer.role !== 'host' ||
    envelope.signer.id !== offer.host
  ) {
    return refusal('context_mismatch', 'the confirmation is for another pairing');
  }
  const verified = await verifyEnvelope(envelope, {
    kind: 'pair-confirm',
    publicKey: fromBase64url(offer.hostKey),
    maxSkewMs: 60_000,
    now,
  });
  if (!verified.ok) return refuseWith(verified.error);
  if (!consumeNonce(ctx, envelope.nonce))
    return refusal('replayed_nonce', 'this confirmation was already received');

  const registration = await attempt(() =>
    verifyPasskeyRegistration(completion.device, completion.registration, relying),
  );
  if (!registration.ok) return refuseWith(registration.error);
  const credential = registration.value;
  const { device, push } = completion;
  const isNewHost = !row(ctx.sql, 'SELECT 1 FROM hosts WHERE id = ?', offer.host);
  const hostToken = isNewHost ? mintHostToken() : undefined;
  const hostTokenHash = hostToken ? await tokenHash(hostToken) : undefined;

  // From here on no await: the checks and the writes are one atomic step for the object.
  if (row(ctx.sql, 'SELECT 1 FROM offers WHERE offer_id = ? AND confirmed_at IS NOT NULL', offerId)) {
    return refusal('offer_closed', 'this offer was already confirmed');
  }
  // Since the phone answered, it may have been revoked, or its passkey paired by another device.
  if (row(ctx.sql, 'SELECT 1 FROM devices WHERE id = ? AND revoked_at IS NOT NULL', device.id))
    return refusal('forbidden', 'this device was revoked from the fleet');
  if (passkeyOfAnotherDevice(ctx, credential.id, device.id)) return passkeyTaken();
  const stranger = strangerRefused(ctx, offer.host, device.id);
  if (stranger) return stranger;
  if (!activeDevice(ctx, device.id)) {
    const tooMany = tooManyDevices(ctx);
    if (tooMany) return tooMany;
  }
  // The phone's answer (its push subscription's secret among it) has reached its host: the
  // link in the QR code, seen later, learns nothing of it.
  ctx.sql.exec('UPDATE offers SET confirmed_at = ?, completion = NULL WHERE offer_id = ?', now, offerId);
  if (!activeDevice(ctx, device.id)) {
    ctx.sql.exec(
      `INSERT INTO devices (id, name, device_key, ecdh_key, credential_id, credential_key, counter, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      device.id,
      device.name,
      device.deviceKey,
      device.ecdhKey,
      credential.id,
      credential.publicKey,
      credential.counter,
      now,
    );
  }
  if (push) {
    ctx.sql.exec(
      'UPDATE devices SET push_endpoint = ?, push_p256dh = ?, push_auth = ? WHERE id = ?',
      push.endpoint,
      push.keys.p256dh,
      push.keys.auth,
      device.id,
    );
  }
  if (hostTokenHash) {
    ctx.sql.exec(
      'INSERT INTO hosts (id, name, host_key, token_hash, quorum, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      offer.host,
      offer.hostName,
      offer.hostKey,
      hostTokenHash,
      request.quorum,
      now,
    );
  } else {
    ctx.sql.exec(
      'UPDATE hosts SET quorum = ?, name = ? WHERE id = ?',
      request.quorum,
      offer.hostName,
      offer.host,
    );
  }
  ctx.sql.exec(
    'INSERT OR IGNORE INTO pairings (host, device, created_at) VALUES (?, ?, ?)',
    offer.host,
    device.id,
    now,
  );
  return { ok: true, value: hostToken ? { hostToken } : {} };
}

/**
 * A fleet's phones: at most as many as a request is sealed for, and, revoked ones counted (they
 * are kept, and listed), as many as the app's devices screen reads, where phones are revoked.
 */
function tooManyDevices(ctx: FleetContext) {
  const active = count(ctx.sql, 'SELECT COUNT(*) AS n FROM devices WHERE revoked_at IS NULL');
  if (active >= LIMITS.devicesPerFleet)
    return refusal(
      'too_many_devices',
      `a fleet has at most ${LIMITS.devicesPerFleet} phones: revoke one first`,
    );
  const listed = count(ctx.sql, 'SELECT COUNT(*) AS n FROM devices');
  if (listed >= LIMITS.devicesPerFleet * 4)
    return refusal(
      'too_many_devices',
      `a fleet lists at most ${LIMITS.devicesPerFleet * 4} phones, revoked ones included`,
    );
  return undefined;
}
