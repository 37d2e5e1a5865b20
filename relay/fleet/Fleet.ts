import { DurableObject } from 'cloudflare:workers';
import type { CapabilityToken, ApprovalRequest } from '../../shared/messages/approvals.ts';
import type { PushSubscriptionJson } from '../../shared/messages/common.ts';
import type { DenyEnvelope, FreezeEnvelope, RevokeGrantEnvelope } from '../../shared/messages/envelopes.ts';
import type { HostEvent } from '../../shared/messages/events.ts';
import type { FleetState, ResumeVote } from '../../shared/messages/killSwitch.ts';
import type { PairConfirmRequest, PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import type {
  HostFrame,
  Members,
  OfferStatus,
  PairConfirmed,
  RequestCreated,
  RequestList,
  RequestView,
  RequestWithdrawn,
} from '../../shared/messages/relayViews.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { refusal, type RelayResult } from '../http/relayError.ts';
import { row, type DeviceRow, type FleetContext } from './context.ts';
import { activeDevice, authenticateDevice, type SignedRequest } from './deviceAuth.ts';
import { appendEvent, eventsSince, lastSeq, pruneEvents } from './events.ts';
import { authenticateHost, rotateHostToken } from './hostAuth.ts';
import { fleetState, freeze, vote } from './killSwitch.ts';
import { listMembers, renameDevice, revokeDevice, updatePushSubscription } from './members.ts';
import { completeOffer, confirmOffer, createOffer, offerStatus, type RelyingParty } from './pairing.ts';
import {
  createRequest,
  decide,
  deny,
  expireDue,
  getRequest,
  listRequests,
  nextDeadline,
  pruneRequests,
} from './requests.ts';
import { applySchema } from './schema.ts';
import { revokeGrant } from './revokeGrant.ts';
import { withdrawRequest } from './withdrawRequest.ts';

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

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
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
      background: (task) =>
        this.ctx.waitUntil(
          task.catch((error: unknown) => console.error('background task failed:', (error as Error).name)),
        ),
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

  async #device(ctx: FleetContext, signed: SignedRequest): Promise<RelayResult<DeviceRow>> {
    const auth = await authenticateDevice(ctx, signed);
    if (!auth.ok) return auth;
    const device = activeDevice(ctx, auth.value.device);
    return device
      ? { ok: true, value: device }
      : refusal(401, 'unknown_credential', 'the device was revoked');
  }

  async #scheduleExpiry(ctx: FleetContext): Promise<void> {
    const deadline = nextDeadline(ctx);
    if (deadline === undefined) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > deadline) await this.ctx.storage.setAlarm(deadline);
  }

  // Pairing

  createOffer(fleet: string, offer: PairingOffer, bearer: string | undefined) {
    return createOffer(this.#context(fleet), offer, bearer);
  }

  offerStatus(
    fleet: string,
    offerId: string,
    offerToken: string | undefined,
  ): Promise<RelayResult<OfferStatus>> {
    return offerStatus(this.#context(fleet), offerId, offerToken);
  }

  completeOffer(
    fleet: string,
    offerId: string,
    offerToken: string | undefined,
    completion: PairingCompletion,
    signed: SignedRequest,
    relying: RelyingParty,
  ) {
    return completeOffer(this.#context(fleet), offerId, offerToken, completion, signed, relying);
  }

  confirmOffer(
    fleet: string,
    offerId: string,
    request: PairConfirmRequest,
    relying: RelyingParty,
  ): Promise<RelayResult<PairConfirmed>> {
    return confirmOffer(this.#context(fleet), offerId, request, relying);
  }

  // Hosts

  async rotateHostToken(
    fleet: string,
    bearer: string | undefined,
  ): Promise<RelayResult<{ v: 1; hostToken: string }>> {
    const ctx = this.#context(fleet);
    const host = await authenticateHost(ctx, bearer);
    if (!host.ok) return host;
    return { ok: true, value: { v: PROTOCOL_VERSION, hostToken: await rotateHostToken(ctx, host.value) } };
  }

  async createRequest(
    fleet: string,
    bearer: string | undefined,
    request: ApprovalRequest,
  ): Promise<RelayResult<RequestCreated>> {
    const ctx = this.#context(fleet);
    const host = await authenticateHost(ctx, bearer);
    if (!host.ok) return host;
    const created = createRequest(ctx, host.value, request);
    if (created.ok) await this.#scheduleExpiry(ctx);
    return created;
  }

  async withdrawRequest(
    fleet: string,
    bearer: string | undefined,
    requestId: string,
  ): Promise<RelayResult<RequestWithdrawn>> {
    const ctx = this.#context(fleet);
    const host = await authenticateHost(ctx, bearer);
    return host.ok ? withdrawRequest(ctx, host.value, requestId) : host;
  }

  // Phones

  async listRequests(
    fleet: string,
    signed: SignedRequest,
    which: 'pending' | 'recent',
  ): Promise<RelayResult<RequestList>> {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    return device.ok ? { ok: true, value: listRequests(ctx, device.value.id, which) } : device;
  }

  async getRequest(
    fleet: string,
    signed: SignedRequest,
    requestId: string,
  ): Promise<RelayResult<RequestView>> {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    return device.ok ? getRequest(ctx, device.value.id, requestId) : device;
  }

  async decide(
    fleet: string,
    signed: SignedRequest,
    requestId: string,
    token: CapabilityToken,
    relying: RelyingParty,
  ) {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    return device.ok ? decide(ctx, device.value, requestId, token, relying) : device;
  }

  revokeGrant(fleet: string, envelope: RevokeGrantEnvelope) {
    return revokeGrant(this.#context(fleet), envelope);
  }

  deny(fleet: string, requestId: string, envelope: DenyEnvelope) {
    return deny(this.#context(fleet), requestId, envelope);
  }

  async members(fleet: string, signed: SignedRequest): Promise<RelayResult<Members>> {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    return device.ok ? { ok: true, value: listMembers(ctx) } : device;
  }

  async renameDevice(
    fleet: string,
    signed: SignedRequest,
    id: string,
    name: string,
  ): Promise<RelayResult<Members>> {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    return device.ok ? renameDevice(ctx, id, name) : device;
  }

  async revokeDevice(fleet: string, signed: SignedRequest, id: string): Promise<RelayResult<Members>> {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    return device.ok ? revokeDevice(ctx, id) : device;
  }

  async updatePush(
    fleet: string,
    signed: SignedRequest,
    push: PushSubscriptionJson,
  ): Promise<RelayResult<{ updated: true }>> {
    const ctx = this.#context(fleet);
    const device = await this.#device(ctx, signed);
    if (!device.ok) return device;
    updatePushSubscription(ctx, device.value.id, push);
    return { ok: true, value: { updated: true } };
  }

  // Kill switch

  freeze(fleet: string, envelope: FreezeEnvelope): Promise<RelayResult<FleetState>> {
    return freeze(this.#context(fleet), envelope);
  }

  vote(fleet: string, ballot: ResumeVote, relying: RelyingParty): Promise<RelayResult<FleetState>> {
    return vote(this.#context(fleet), ballot, relying);
  }

  /** The switch, for a host (bearer) or a phone (signed request). */
  async state(
    fleet: string,
    auth: { bearer: string } | { signed: SignedRequest },
  ): Promise<RelayResult<FleetState>> {
    const ctx = this.#context(fleet);
    const caller =
      'bearer' in auth ? await authenticateHost(ctx, auth.bearer) : await this.#device(ctx, auth.signed);
    return caller.ok ? { ok: true, value: fleetState(ctx) } : caller;
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
    const bearer = request.headers.get('authorization')?.replace(/^Bearer /, '');
    const host = await authenticateHost(ctx, bearer);
    if (!host.ok)
      return Response.json({ error: { code: host.code, message: host.message } }, { status: host.status });
    const quorum = Number(url.searchParams.get('quorum'));
    if (Number.isSafeInteger(quorum) && quorum >= 1 && quorum <= 32) {
      ctx.sql.exec('UPDATE hosts SET quorum = ? WHERE id = ?', quorum, host.value.id);
    }
    // Without a cursor (a first connection) there is nothing to replay.
    const after = url.searchParams.has('after') ? Number(url.searchParams.get('after')) : Number.NaN;

    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [host.value.id]);
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

  /** Daemons only listen; anything but the auto-answered "ping" is ignored. */
  override webSocketMessage(): void {}

  override webSocketClose(socket: WebSocket, code: number): void {
    socket.close(code === 1005 ? 1000 : code, 'closing');
  }

  // Expiry

  override async alarm(): Promise<void> {
    const fleet = row<{ value: string }>(
      this.ctx.storage.sql,
      "SELECT value FROM meta WHERE key = 'fleet'",
    )?.value;
    if (!fleet) return;
    const ctx = this.#context(fleet);
    expireDue(ctx);
    pruneRequests(ctx);
    pruneEvents(ctx.sql, this.now());
    const next = nextDeadline(ctx);
    if (next !== undefined) await this.ctx.storage.setAlarm(Math.max(next, this.now()));
  }
}
