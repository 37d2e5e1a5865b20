import { DurableObject } from 'cloudflare:workers';
import type { CapabilityToken, ApprovalRequest } from '../../shared/messages/approvals.ts';
import type { Assertion, PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { DenyEnvelope, FreezeEnvelope, RevokeGrantEnvelope } from '../../shared/messages/envelopes.ts';
import type { HostEvent, HostFrame } from '../../shared/messages/events.ts';
import type { ResumeVote } from '../../shared/messages/killSwitch.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import type { PairConfirmRequest, PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import type { RequestView } from '../../shared/messages/relayViews.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { countBillable } from '../billing/billableMeter.ts';
import { ok, refusalResponse, type RelayResult } from '../http/relayError.ts';
import { asDevice, asHost, type Serve, type ServeAs } from './callers.ts';
import { row, type DeviceRow, type FleetContext, type HostRow } from './context.ts';
import type { SignedRequest } from './deviceAuth.ts';
import { appendEvent, eventsSince, lastSeq } from './events.ts';
import { expireDue } from './expiry.ts';
import { authenticateHost, bearerToken, rotateHostToken } from './hostAuth.ts';
import { fleetState, freeze, vote } from './killSwitch.ts';
import { listMembers, renameDevice, revokeDevice, updatePushSubscription } from './members.ts';
import { completeOffer, confirmOffer, createOffer, offerStatus, withdrawOffer } from './pairing.ts';
import type { RelyingParty } from '../../shared/webauthn/verifyAssertion.ts';
import { createRequest, decide, deny, getRequest, listRequests } from './requests.ts';
import { pruneSettled, scheduleAlarm, scheduleAlarmAfter } from './retention.ts';
import { applySchema } from './schema.ts';
import { revokeGrant } from './revokeGrant.ts';
import { withdrawRequest } from './withdrawRequest.ts';

/** A reply as it leaves the fleet: the protocol version first. */
type Versioned<T> = { v: typeof PROTOCOL_VERSION } & Omit<T, 'v'>;

/** Close codes that only report a close, and are never sent in a close frame (RFC 6455, 7.4.1). */
const UNSENDABLE_CLOSE_CODES: ReadonlySet<number> = new Set([1005, 1006, 1015]);

/** What a daemon's socket remembers across hibernation. */
interface SocketAttachment {
  host: string;
}

/**
 * One fleet: its hosts and phones, pending requests, and the kill switch. RPC methods serve the
 * Worker's routes; `fetch` only upgrades daemons' WebSockets, which hibernate between events
 * (their "ping" keep-alives are answered by the runtime without waking the object).
 */
export class Fleet extends DurableObject<Env> {
  /** The clock. Tests replace it to drive caps, expiry and skew without waiting. */
  now: () => number = () => Date.now();
  /**
   * Background tasks (pushes) begun and not yet finished. The decision to push is made in the
   * request itself, so once this is 0 everything it decided has been sent: what a test waits on
   * before it asserts that nothing more was.
   */
  inFlight = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    countBillable('objectStarts');
    ctx.blockConcurrencyWhile(async () => {
      applySchema(ctx.storage);
    });
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('ping', 'pong'));
  }

  #context(fleet: string): FleetContext {
    const stored = row<{ value: string }>(this.ctx.storage.sql, "SELECT value FROM meta WHERE key = 'fleet'");
    if (!stored) this.ctx.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('fleet', ?)", fleet);
    else if (stored.value !== fleet) throw new Error('a fleet object was addressed by another fleet id');
    return {
      sql: this.ctx.storage.sql,
      env: this.env,
      fleet,
      now: () => this.now(),
      emit: (host, event) => this.#emit(host, event),
      closeConnections: (tokenHash) => {
        for (const socket of this.ctx.getWebSockets(tokenHash)) {
          try {
            socket.close(1008, 'the host token changed');
          } catch {
            // Already closing.
          }
        }
      },
      background: (task) => {
        this.inFlight++;
        this.ctx.waitUntil(
          task
            .catch((error: unknown) => console.error('background task failed:', (error as Error).name))
            .finally(() => this.inFlight--),
        );
      },
    };
  }

  #emit(host: string | null, event: HostEvent): void {
    const frame = appendEvent(this.ctx.storage.sql, host, event, this.now());
    const text = JSON.stringify(frame);
    for (const socket of host === null ? this.ctx.getWebSockets() : this.ctx.getWebSockets(host)) {
      try {
        socket.send(text);
      } catch {
        // A socket closing under us: the daemon replays what it missed when it reconnects.
      }
    }
  }

  /** Runs one RPC in the fleet's context; its answer is the reply, under the protocol version. */
  async #reply<T extends object>(fleet: string, serve: Serve<T>): Promise<RelayResult<Versioned<T>>> {
    const result = await serve(this.#context(fleet));
    // The one place replies are versioned (a FleetState carries its own v, the same).
    return result.ok ? ok({ v: PROTOCOL_VERSION, ...result.value }) : result;
  }

  /** A reply for a host, once its bearer token proves which host calls. */
  #forHost<T extends object>(fleet: string, bearer: string | undefined, serve: ServeAs<HostRow, T>) {
    return this.#reply(fleet, asHost(bearer, serve));
  }

  /** A reply for a phone, once its signed request proves which paired device calls. */
  #forDevice<T extends object>(fleet: string, signed: SignedRequest, serve: ServeAs<DeviceRow, T>) {
    return this.#reply(fleet, asDevice(signed, serve));
  }

  /** A request's change of state, then the alarm that follows from it. */
  async #thenAlarm<T>(ctx: FleetContext, requestId: string, result: RelayResult<T>): Promise<RelayResult<T>> {
    if (result.ok) await scheduleAlarmAfter(this.ctx.storage, ctx, requestId);
    return result;
  }

  // Pairing

  createOffer(fleet: string, offer: PairingOffer, bearer: string | undefined) {
    return this.#reply(fleet, (ctx) => createOffer(ctx, offer, bearer));
  }

  offerStatus(fleet: string, offerId: string, offerToken: string | undefined) {
    return this.#reply(fleet, (ctx) => offerStatus(ctx, offerId, offerToken));
  }

  withdrawOffer(fleet: string, offerId: string, offerToken: string | undefined) {
    return this.#reply(fleet, (ctx) => withdrawOffer(ctx, offerId, offerToken));
  }

  completeOffer(
    fleet: string,
    offerId: string,
    offerToken: string | undefined,
    completion: PairingCompletion,
    signed: SignedRequest,
    relying: RelyingParty,
  ) {
    return this.#reply(fleet, (ctx) => completeOffer(ctx, offerId, offerToken, completion, signed, relying));
  }

  confirmOffer(fleet: string, offerId: string, request: PairConfirmRequest, relying: RelyingParty) {
    return this.#reply(fleet, (ctx) => confirmOffer(ctx, offerId, request, relying));
  }

  // Hosts

  rotateHostToken(fleet: string, bearer: string | undefined) {
    return this.#forHost(fleet, bearer, async (ctx, host) =>
      ok({ hostToken: await rotateHostToken(ctx, host) }),
    );
  }

  createRequest(fleet: string, bearer: string | undefined, request: ApprovalRequest) {
    return this.#forHost(fleet, bearer, (ctx, host) =>
      this.#thenAlarm(ctx, request.requestId, createRequest(ctx, host, request)),
    );
  }

  withdrawRequest(fleet: string, bearer: string | undefined, requestId: string) {
    return this.#forHost(fleet, bearer, async (ctx, host) =>
      this.#thenAlarm(ctx, requestId, await withdrawRequest(ctx, host, requestId)),
    );
  }

  // Phones

  listRequests(fleet: string, signed: SignedRequest, which: 'pending' | 'recent') {
    return this.#forDevice(fleet, signed, (ctx, device) => ok(listRequests(ctx, device.id, which)));
  }

  /** The one unversioned reply: a request view also nests in lists, and phones parse it bare. */
  async getRequest(
    fleet: string,
    signed: SignedRequest,
    requestId: string,
  ): Promise<RelayResult<RequestView>> {
    return asDevice(signed, (ctx, device) => getRequest(ctx, device.id, requestId))(this.#context(fleet));
  }

  decide(
    fleet: string,
    signed: SignedRequest,
    requestId: string,
    token: CapabilityToken,
    relying: RelyingParty,
  ) {
    return this.#forDevice(fleet, signed, async (ctx, device) =>
      this.#thenAlarm(ctx, requestId, await decide(ctx, device, requestId, token, relying)),
    );
  }

  revokeGrant(fleet: string, envelope: RevokeGrantEnvelope) {
    return this.#reply(fleet, (ctx) => revokeGrant(ctx, envelope));
  }

  deny(fleet: string, requestId: string, envelope: DenyEnvelope) {
    return this.#reply(fleet, async (ctx) =>
      this.#thenAlarm(ctx, requestId, await deny(ctx, requestId, envelope)),
    );
  }

  members(fleet: string, signed: SignedRequest) {
    return this.#forDevice(fleet, signed, (ctx) => ok(listMembers(ctx)));
  }

  renameDevice(fleet: string, signed: SignedRequest, id: string, name: string) {
    return this.#forDevice(fleet, signed, (ctx) => renameDevice(ctx, id, name));
  }

  revokeDevice(
    fleet: string,
    signed: SignedRequest,
    id: string,
    assertion: Assertion,
    relying: RelyingParty,
  ) {
    return this.#forDevice(fleet, signed, (ctx, device) => revokeDevice(ctx, device, id, assertion, relying));
  }

  updatePush(fleet: string, signed: SignedRequest, push: PushSubscriptionJson) {
    return this.#forDevice(fleet, signed, (ctx, device) => {
      updatePushSubscription(ctx, device.id, push);
      return ok({ updated: true as const });
    });
  }

  // Kill switch

  freeze(fleet: string, envelope: FreezeEnvelope) {
    return this.#reply(fleet, (ctx) => freeze(ctx, envelope));
  }

  vote(fleet: string, ballot: ResumeVote, relying: RelyingParty) {
    return this.#reply(fleet, (ctx) => vote(ctx, ballot, relying));
  }

  /** The switch, for a host (bearer) or a phone (signed request). */
  state(fleet: string, auth: { bearer: string | undefined } | { signed: SignedRequest }) {
    const serve = (ctx: FleetContext) => ok(fleetState(ctx));
    return this.#reply(fleet, 'bearer' in auth ? asHost(auth.bearer, serve) : asDevice(auth.signed, serve));
  }

  // Daemons' WebSockets

  /**
   * Upgrades a daemon's connection. It first receives the fleet's state, then every event for
   * it after `after` (the last sequence number it saw), so a reconnect loses nothing.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const fleet = url.searchParams.get('fleet') ?? '';
    const ctx = this.#context(fleet);
    const host = await authenticateHost(ctx, bearerToken(request.headers.get('authorization')));
    if (!host.ok) return refusalResponse(host);
    // As pairing takes it: a whole number, no more than a fleet's phones.
    const quorum = Number(url.searchParams.get('quorum')?.match(/^\d{1,2}$/)?.[0]);
    if (quorum >= 1 && quorum <= LIMITS.devicesPerFleet) {
      ctx.sql.exec('UPDATE hosts SET quorum = ? WHERE id = ?', quorum, host.value.id);
    }
    // Without a cursor (a first connection) there is nothing to replay.
    const after = url.searchParams.has('after') ? Number(url.searchParams.get('after')) : Number.NaN;

    const { 0: client, 1: server } = new WebSocketPair();
    // Tagged with the token's hash too: a rotation ends what the old token opened (hostAuth).
    this.ctx.acceptWebSocket(server, [host.value.id, host.value.token_hash]);
    server.serializeAttachment({ host: host.value.id } satisfies SocketAttachment);
    const seq = lastSeq(ctx.sql);
    const state: HostFrame = {
      v: PROTOCOL_VERSION,
      seq,
      event: { v: PROTOCOL_VERSION, type: 'state', state: fleetState(ctx) },
    };
    server.send(JSON.stringify(state));
    if (Number.isSafeInteger(after) && after >= 0) {
      // A cursor beyond the log never came from it (the relay's storage was reset, or a relay
      // forged frames): this log's numbering means nothing to the daemon, so it gets all of it.
      const from = after > seq ? 0 : after;
      for (const frame of eventsSince(ctx.sql, host.value.id, from)) server.send(JSON.stringify(frame));
    }
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Daemons only listen; anything but the auto-answered "ping" is ignored (and billed). */
  override webSocketMessage(): void {
    countBillable('webSocketMessages');
  }

  /**
   * Answers a daemon's close frame, which completes its close. The codes no close frame carries
   * (1005 none given, 1006 a connection that dropped, 1015 TLS) cannot be sent back: close() throws
   * on them, so they are answered as 1000.
   */
  override webSocketClose(socket: WebSocket, code: number): void {
    socket.close(UNSENDABLE_CLOSE_CODES.has(code) ? 1000 : code, 'closing');
  }

  // Expiry and retention

  override async alarm(): Promise<void> {
    countBillable('alarms');
    const fleet = row<{ value: string }>(
      this.ctx.storage.sql,
      "SELECT value FROM meta WHERE key = 'fleet'",
    )?.value;
    if (!fleet) return;
    const ctx = this.#context(fleet);
    expireDue(ctx);
    pruneSettled(ctx);
    await scheduleAlarm(this.ctx.storage, ctx);
  }
}
