import type { ApprovalRequest } from '../../shared/messages/approvals.ts';
import type { FreezeEnvelope } from '../../shared/messages/envelopes.ts';
import { fleetStateSchema, type FleetState } from '../../shared/messages/killSwitch.ts';
import type { PairConfirmRequest, PairingOffer } from '../../shared/messages/pairing.ts';
import {
  offerCreatedSchema,
  offerStatusSchema,
  offerWithdrawnSchema,
  pairConfirmedSchema,
  requestCreatedSchema,
  requestWithdrawnSchema,
  type OfferCreated,
  type OfferStatus,
  type OfferWithdrawn,
  type PairConfirmed,
  type RequestCreated,
  type RequestWithdrawn,
} from '../../shared/messages/relayViews.ts';
import { isRelayErrorCode, refusalInBody, type Refusal } from '../../shared/errors.ts';
import type { Field } from '../../shared/schema/field.ts';
import { parseJson } from '../../shared/schema/parse.ts';
import { AnswerTooLargeError, httpCall, NoAnswerInTimeError } from './httpCall.ts';

/** Why a call to the relay failed: it could not be reached, or it refused (with its error code). */
export type RelayFailure = ({ kind: 'unreachable' } | { kind: 'refused'; status: number }) & Refusal;
export type RelayReply<T> = { ok: true; value: T } | { ok: false; failure: RelayFailure };

function unreachable(message: string): RelayFailure {
  return { kind: 'unreachable', code: 'relay_unreachable', message };
}

/**
 * Why the relay could not be reached, in Latch's words: Node's error code (`ECONNREFUSED`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`), not its message, which may quote what the far end sent (the
 * names in a certificate). A deadline of httpCall's own says how long it waited.
 */
function networkFault(error: unknown): string {
  if (error instanceof NoAnswerInTimeError) return error.message;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]{0,63}$/.test(code) ? code : 'a network error';
}

/**
 * A failure as a person or an agent reads it. Latch's words throughout: RelayClient keeps the
 * relay's own out of every failure.
 */
export function relayFailureText(failure: RelayFailure): string {
  return failure.kind === 'unreachable'
    ? `the relay cannot be reached (${failure.message})`
    : failure.message;
}

/** How long one HTTP call to the relay may take before the relay counts as unreachable. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * The daemon's HTTP calls to the relay. Every answer is parsed like untrusted input: a relay
 * that answers garbage is a refusal, never a success.
 */
export class RelayClient {
  readonly origin: string;
  readonly fleet: string;
  readonly #token: () => string | undefined;

  /** `token` is read at each call: `latch pair` may write it while the daemon runs. */
  constructor(origin: string, fleet: string, token: () => string | undefined) {
    this.origin = origin;
    this.fleet = fleet;
    this.#token = token;
  }

  get hasToken(): boolean {
    return this.#token() !== undefined;
  }

  async #call<T>(
    method: string,
    path: string,
    schema: Field<T>,
    options: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<RelayReply<T>> {
    const headers: Record<string, string> = { ...options.headers, ...this.authorization() };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: { status: number; text: string };
    try {
      response = await httpCall(
        new URL(`${this.origin}/v1/fleets/${encodeURIComponent(this.fleet)}${path}`),
        {
          method,
          headers,
          ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
          timeoutMs: Math.min(options.timeoutMs ?? CALL_TIMEOUT_MS, CALL_TIMEOUT_MS),
        },
      );
    } catch (error) {
      if (error instanceof AnswerTooLargeError)
        return {
          ok: false,
          failure: { kind: 'refused', status: 200, code: 'answer_too_large', message: error.message },
        };
      return { ok: false, failure: unreachable(networkFault(error)) };
    }
    const { text } = response;
    if (response.status >= 500)
      return {
        ok: false,
        failure: unreachable(`the relay answered ${response.status}`),
      };
    if (response.status < 200 || response.status > 299) {
      // A failure's words reach agents (a deny's reason, `latch panic`): the relay's code only
      // when it is one Latch publishes, and never the relay's message, which is text of its own.
      const { code } = refusalInBody(text, { code: 'refused', message: '' });
      const known = isRelayErrorCode(code) ? code : 'refused';
      return {
        ok: false,
        failure: {
          kind: 'refused',
          status: response.status,
          code: known,
          message: `the relay refused it (HTTP ${response.status}, ${known})`,
        },
      };
    }
    const parsed = parseJson(schema, text);
    if (!parsed.ok)
      return {
        ok: false,
        failure: {
          kind: 'refused',
          status: response.status,
          code: parsed.error.code,
          // Not the parser's message: it quotes the answer (a member's name, chosen by the relay).
          message: `the relay's answer is malformed (${parsed.error.code})`,
        },
      };
    return { ok: true, value: parsed.value };
  }

  createOffer(offer: PairingOffer): Promise<RelayReply<OfferCreated>> {
    return this.#call('POST', '/pairing', offerCreatedSchema, { body: offer });
  }

  offerStatus(offerId: string, offerToken: string): Promise<RelayReply<OfferStatus>> {
    return this.#call('GET', `/pairing/${encodeURIComponent(offerId)}`, offerStatusSchema, {
      headers: { 'latch-offer-token': offerToken },
    });
  }

  /** Best effort, on the way out of `latch pair` (Ctrl-C included): a short wait, then it expires. */
  withdrawOffer(offerId: string, offerToken: string): Promise<RelayReply<OfferWithdrawn>> {
    return this.#call('POST', `/pairing/${encodeURIComponent(offerId)}/withdraw`, offerWithdrawnSchema, {
      headers: { 'latch-offer-token': offerToken },
      timeoutMs: 3000,
    });
  }

  confirmOffer(offerId: string, request: PairConfirmRequest): Promise<RelayReply<PairConfirmed>> {
    return this.#call('POST', `/pairing/${encodeURIComponent(offerId)}/confirm`, pairConfirmedSchema, {
      body: request,
    });
  }

  /** Waits no longer than the request's own deadline: past it, no answer could be used. */
  createRequest(request: ApprovalRequest): Promise<RelayReply<RequestCreated>> {
    return this.#call('POST', '/requests', requestCreatedSchema, {
      body: request,
      timeoutMs: Math.max(1, request.exp - Date.now()),
    });
  }

  /** Tells the relay nobody here waits for this request any more: the phones drop it. */
  withdrawRequest(requestId: string): Promise<RelayReply<RequestWithdrawn>> {
    return this.#call('POST', `/requests/${encodeURIComponent(requestId)}/withdraw`, requestWithdrawnSchema);
  }

  freeze(envelope: FreezeEnvelope): Promise<RelayReply<FleetState>> {
    return this.#call('POST', '/freeze', fleetStateSchema, { body: envelope });
  }

  state(): Promise<RelayReply<FleetState>> {
    return this.#call('GET', '/state', fleetStateSchema);
  }

  /** The WebSocket URL for this fleet's event stream. */
  connectUrl(after: number, quorum: number): string {
    const url = new URL(`/v1/fleets/${encodeURIComponent(this.fleet)}/connect`, this.origin);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('after', String(after));
    url.searchParams.set('quorum', String(quorum));
    return url.toString();
  }

  authorization(): Record<string, string> {
    const token = this.#token();
    return token ? { authorization: `Bearer ${token}` } : {};
  }
}
