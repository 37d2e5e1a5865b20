import { requestHash } from '../../shared/approvals/requestHash.ts';
import { signDeviceRequest } from '../../shared/device-auth/deviceRequest.ts';
import { sealRequestDetails } from '../../shared/e2e/requestDetailsBox.ts';
import { toBase64url } from '../../shared/encoding/base64url.ts';
import { randomBytes, utf8 } from '../../shared/encoding/bytes.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { ApprovalRequest, RequestDetails } from '../../shared/messages/approvals.ts';
import type { Result } from '../../shared/errors.ts';
import type { PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import type { OfferStatus } from '../../shared/messages/relayViews.ts';
import { derivePairingKeys } from '../../shared/pairing/pairingKeys.ts';
import { verifyPairingCompletion, type PairedDevice } from '../../shared/pairing/verifyPairingCompletion.ts';
import { verifyPairingOffer } from '../../shared/pairing/verifyPairingOffer.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { requestDetails } from '../../scripts/lib/approvalFixture.ts';
import {
  completePairing,
  createHost,
  createOffer,
  createPhone,
  type TestHost,
  type TestPhone,
} from '../../scripts/lib/softwarePhone.ts';
import type { PushServiceClient } from './pushServiceClient.ts';

export interface Reply<T = unknown> {
  status: number;
  body: T;
}

export interface PairedPhone {
  phone: TestPhone;
  device: PairedDevice;
  pushId?: string;
}

export interface TestFleet {
  fleet: string;
  host: TestHost;
  hostToken: string;
  phones: PairedPhone[];
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Drives a relay over HTTP the way daemons and phones do: pairing with MAC and passkey,
 * sealed requests, signed phone requests. In workerd it goes through SELF.fetch; from Node, to
 * a relay process on loopback.
 */
export class RelayDriver {
  readonly origin: string;
  readonly rpId: string;
  readonly #fetch: (url: string, init: RequestInit) => Promise<Response>;
  readonly #push: PushServiceClient | undefined;

  constructor(
    origin: string,
    fetcher: (url: string, init: RequestInit) => Promise<Response>,
    push?: PushServiceClient,
  ) {
    this.origin = origin;
    this.rpId = new URL(origin).hostname;
    this.#fetch = fetcher;
    this.#push = push;
  }

  call = async <T = unknown>(
    method: string,
    path: string,
    options: {
      json?: unknown;
      body?: string | Uint8Array<ArrayBuffer>;
      headers?: Record<string, string>;
    } = {},
  ): Promise<Reply<T>> => {
    const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
    const headers = {
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    };
    const response = await this.#fetch(`${this.origin}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };

  /** A phone's signed request, as the PWA makes it. */
  phoneCall = async <T = unknown>(
    phone: TestPhone,
    method: string,
    path: string,
    json?: unknown,
    now = Date.now(),
  ): Promise<Reply<T>> => {
    const body = json === undefined ? new Uint8Array(0) : utf8(JSON.stringify(json));
    const headers = await signDeviceRequest(
      { method, path, body },
      { id: phone.id, privateKey: phone.deviceKeys.privateKey },
      now,
    );
    return this.call<T>(method, path, { ...(json === undefined ? {} : { body }), headers });
  };

  /**
   * What a phone that scanned `secret` does first, as the PWA does it: it asks for the offer by
   * the id the secret yields, with no fleet (the relay finds it), and takes it only under the
   * host's MAC. `offer` is that check's result, when the relay answered with an offer.
   */
  scanOffer = async (
    secret: Uint8Array<ArrayBuffer>,
  ): Promise<{ reply: Reply<OfferStatus>; offer: Result<PairingOffer> | undefined }> => {
    const { offerId, offerToken } = await derivePairingKeys(secret);
    const reply = await this.call<OfferStatus>('GET', `/v1/pairing/${offerId}`, {
      headers: { 'latch-offer-token': offerToken },
    });
    return {
      reply,
      offer: reply.status === 200 ? await verifyPairingOffer(reply.body.offer, secret) : undefined,
    };
  };

  /**
   * Pairs one phone with a host through the relay's routes, doing the daemon's and the phone's
   * parts as they do them (MAC, registration, confirmation signed by the host key).
   */
  pairPhone = async (
    fleet: string,
    host: TestHost,
    options: { hostToken?: string; push?: boolean; quorum?: number; phone?: TestPhone } = {},
  ): Promise<{
    paired: PairedPhone;
    hostToken: string | undefined;
    completion: PairingCompletion;
    offer: PairingOffer;
  }> => {
    const phone = options.phone ?? (await createPhone());
    const { offer, secret } = await createOffer(host, { fleet });
    const offered = await this.call('POST', `/v1/fleets/${fleet}/pairing`, {
      json: offer,
      headers: options.hostToken ? bearer(options.hostToken) : {},
    });
    if (offered.status !== 201) throw new Error(`offer refused: ${JSON.stringify(offered.body)}`);

    const scanned = await this.scanOffer(secret);
    if (!scanned.offer?.ok)
      throw new Error(`the phone refused the offer: ${JSON.stringify(scanned.reply.body)}`);
    const push = options.push === false || !this.#push ? undefined : await this.#push.subscribe();
    const ceremony = { origin: this.origin, rpId: this.rpId, ...(push ? { push: push.subscription } : {}) };
    const completion = await completePairing(phone, scanned.offer.value, secret, ceremony);
    const completed = await this.sendCompletion(
      phone,
      scanned.offer.value.fleet,
      offer.offerId,
      offer.offerToken,
      completion,
    );
    if (completed.status !== 202) throw new Error(`completion refused: ${JSON.stringify(completed.body)}`);

    const status = await this.call<OfferStatus>('GET', `/v1/fleets/${fleet}/pairing/${offer.offerId}`, {
      headers: { 'latch-offer-token': offer.offerToken },
    });
    const verified = await verifyPairingCompletion(status.body.completion!, offer, secret, {
      origins: [this.origin],
      rpId: this.rpId,
    });
    if (!verified.ok) throw verified.error;
    const envelope = await signEnvelope(
      'pair-confirm',
      { fleet, offerId: offer.offerId, device: phone.id },
      { role: 'host', id: host.id },
      host.hostKeys.privateKey,
    );
    const confirmed = await this.call<{ hostToken?: string }>(
      'POST',
      `/v1/fleets/${fleet}/pairing/${offer.offerId}/confirm`,
      {
        json: { v: PROTOCOL_VERSION, envelope, quorum: options.quorum ?? 1 },
      },
    );
    if (confirmed.status !== 200) throw new Error(`confirmation refused: ${JSON.stringify(confirmed.body)}`);
    return {
      paired: { phone, device: verified.value, ...(push ? { pushId: push.id } : {}) },
      hostToken: confirmed.body.hostToken,
      completion,
      offer,
    };
  };

  /** The phone sends its completion, signed with the device key it pairs with. */
  sendCompletion = async (
    phone: TestPhone,
    fleet: string,
    offerId: string,
    offerToken: string,
    completion: PairingCompletion,
  ): Promise<Reply> => {
    const path = `/v1/fleets/${fleet}/pairing/${offerId}/complete`;
    const bytes = utf8(JSON.stringify(completion));
    const headers = await signDeviceRequest(
      { method: 'POST', path, body: bytes },
      { id: phone.id, privateKey: phone.deviceKeys.privateKey },
    );
    return this.call('POST', path, { body: bytes, headers: { ...headers, 'latch-offer-token': offerToken } });
  };

  /** A fresh fleet with one host and `phones` phones, each paired and subscribed to pushes. */
  newFleet = async (
    options: { phones?: number; quorum?: number; push?: boolean } = {},
  ): Promise<TestFleet> => {
    const fleet = `fleet-${toBase64url(randomBytes(9))}`;
    const host = await createHost();
    const first = await this.pairPhone(fleet, host, options);
    const hostToken = first.hostToken!;
    const phones = [first.paired];
    for (let i = 1; i < (options.phones ?? 1); i++) {
      phones.push((await this.pairPhone(fleet, host, { ...options, hostToken })).paired);
    }
    return { fleet, host, hostToken, phones };
  };

  /** What the daemon does for each gated call: clean details, hash, one sealed box per phone. */
  submitRequest = async (
    test: TestFleet,
    overrides: Partial<RequestDetails> & { conversation?: string; dedupKey?: string; now?: number } = {},
  ): Promise<{
    details: RequestDetails;
    request: ApprovalRequest;
    reply: Reply<{ requestId: string; joined: boolean }>;
  }> => {
    const { conversation, dedupKey, now = Date.now(), ...detailOverrides } = overrides;
    const details = requestDetails(
      { fleet: test.fleet, host: test.host, phone: test.phones[0]!.phone, device: test.phones[0]!.device },
      { createdAt: now, exp: now + 5 * 60_000, ...detailOverrides },
    );
    const request: ApprovalRequest = {
      v: PROTOCOL_VERSION,
      fleet: test.fleet,
      host: test.host.id,
      requestId: details.requestId,
      conversation: conversation ?? 'session-1',
      dedupKey: dedupKey ?? details.requestId,
      risk: details.risk,
      createdAt: details.createdAt,
      exp: details.exp,
      requestHash: await requestHash(details),
      nonce: details.nonce,
      sealed: await Promise.all(
        test.phones.map(async ({ phone }) => ({
          device: phone.id,
          box: await sealRequestDetails(details, phone),
        })),
      ),
    };
    const reply = await this.call<{ requestId: string; joined: boolean }>(
      'POST',
      `/v1/fleets/${test.fleet}/requests`,
      {
        json: request,
        headers: bearer(test.hostToken),
      },
    );
    return { details, request, reply };
  };
}
