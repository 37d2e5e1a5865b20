import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ApprovalRequest, CapabilityToken } from '../../shared/messages/approvals.ts';
import type { FreezeEnvelope, ReportScope } from '../../shared/messages/envelopes.ts';
import type { HostEvent } from '../../shared/messages/events.ts';
import type { PairingCompletion, PairingOffer } from '../../shared/messages/pairing.ts';
import type { FleetState } from '../../shared/messages/killSwitch.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { signEnvelope } from '../../shared/envelopes/signEnvelope.ts';
import type { TestPhone } from '../../scripts/lib/softwarePhone.ts';

/** What the relay answers to a new request. */
export interface RequestAnswer {
  requestId: string;
  joined: boolean;
}

/**
 * A relay the test controls completely, to play a hostile or broken relay against a real daemon:
 * it takes requests, and sends the daemon whatever frames the test writes, forged or replayed.
 * (The real relay runs in workerd in the other tests; this one exists to lie.)
 */
export class StandInRelay {
  readonly requests: ApprovalRequest[] = [];
  readonly freezes: FreezeEnvelope[] = [];
  /** The ids of the requests the daemon withdrew, in order. */
  readonly withdrawals: string[] = [];
  /** The cursor (`after`) each daemon connection asked to be replayed from. */
  readonly cursors: number[] = [];
  /** The quorum each connection told (`quorum=`), in order. */
  readonly quorums: number[] = [];
  readonly #sockets = new Set<WebSocket>();
  #seq = 0;
  #server = createServer((request, response) => void this.#handle(request, response));
  #wss = new WebSocketServer({ noServer: true });
  #waiters: (() => void)[] = [];
  origin = '';
  /**
   * When set, what the relay claims about a new request (a lying relay: "joined" another), and
   * when it answers (a relay that sits on its answer).
   */
  answerRequest: ((request: ApprovalRequest) => RequestAnswer | Promise<RequestAnswer>) | undefined;
  /** From now on the relay sits on its answer to each new request's POST, until `reply()`. */
  holdReplies(): { reply: () => void } {
    const held = { reply: () => {} };
    this.answerRequest = (request) =>
      new Promise((resolve) => (held.reply = () => resolve({ requestId: request.requestId, joined: false })));
    return held;
  }

  /** When set, what the relay answers to a freeze in place of the state it made (a lying relay). */
  answerFreeze: ((state: FleetState) => FleetState) | undefined;
  /** When set, every HTTP call is answered with this status (503: "unreachable"). */
  failWith: number | undefined;
  /** What a failing relay's answer holds, in place of the stand-in's own refusal. */
  failBody: unknown;
  /**
   * Pairing offers `latch pair` filed, by offer id: a test answers one as the phone would
   * (`completion`), and sees whether it was confirmed or withdrawn.
   */
  readonly offers = new Map<
    string,
    {
      offer: PairingOffer;
      completion?: PairingCompletion;
      state: 'open' | 'confirmed' | 'withdrawn';
      /** How many times `latch pair` asked to confirm it. */
      confirmationsAsked?: number;
    }
  >();
  /** When set, the relay refuses every pairing confirmation with this status and code. */
  refuseConfirmation: { status: number; code: string } | undefined;
  /** When set, the relay never answers a pairing confirmation. */
  holdConfirmation = false;
  /** When set, what happens once a pairing confirmation is asked, before the relay takes it. */
  beforeConfirming: (() => Promise<void>) | undefined;
  /** When set, each daemon connection is accepted and dropped at once (a relay that hangs up). */
  hangUpOnConnect = false;
  state: FleetState = { v: PROTOCOL_VERSION, fleet: 'unset', frozen: false, epoch: 0, votes: [], needed: 1 };

  static async start(): Promise<StandInRelay> {
    const relay = new StandInRelay();
    relay.#server.on('upgrade', (request, socket, head) => {
      if (!request.headers.authorization?.startsWith('Bearer ')) {
        socket.destroy();
        return;
      }
      const asked = new URL(request.url ?? '/', relay.origin).searchParams;
      relay.cursors.push(Number(asked.get('after')));
      relay.quorums.push(Number(asked.get('quorum')));
      relay.#wss.handleUpgrade(request, socket, head, (ws) => {
        if (relay.hangUpOnConnect) {
          ws.terminate();
          return;
        }
        relay.#sockets.add(ws);
        ws.on('close', () => relay.#sockets.delete(ws));
        ws.on('message', (data) => {
          if (data.toString() === 'ping') ws.send('pong');
        });
        ws.send(
          JSON.stringify({
            v: PROTOCOL_VERSION,
            seq: relay.#seq,
            event: { v: PROTOCOL_VERSION, type: 'state', state: relay.state },
          }),
        );
        relay.#wake();
      });
    });
    await new Promise<void>((resolve) => relay.#server.listen(0, '127.0.0.1', resolve));
    relay.origin = `http://127.0.0.1:${(relay.#server.address() as AddressInfo).port}`;
    return relay;
  }

  get connected(): number {
    return this.#sockets.size;
  }

  /**
   * Sends a frame to every connected daemon, as if the relay had it from a phone, numbered next
   * in the log unless the test forges a number. Returns the frame's number.
   */
  send(event: HostEvent, seq = ++this.#seq): number {
    this.sendText(JSON.stringify({ v: PROTOCOL_VERSION, seq, event }));
    return seq;
  }

  /** Sends every daemon a frame of any text at all. */
  sendText(text: string): void {
    for (const socket of this.#sockets) socket.send(text);
  }

  /** Drops every daemon's connection and waits until one has connected again (and had its state). */
  async reconnect(): Promise<void> {
    const seen = this.cursors.length;
    this.dropConnections();
    await this.waitFor(() => this.cursors.length > seen && this.connected > 0);
  }

  /** Delivers a phone's approval, as the relay does once a token is posted. */
  sendApproval(requestId: string, token: CapabilityToken): void {
    this.send({ v: PROTOCOL_VERSION, type: 'approved', requestId, token, at: Date.now() });
  }

  /**
   * Delivers a phone's signed deny of `request`, as the relay does once the phone posts it; with
   * `report`, the phone's "I didn't expect this".
   */
  async sendDenial(
    phone: TestPhone,
    request: Pick<ApprovalRequest, 'fleet' | 'host' | 'requestId'>,
    report?: ReportScope,
  ): Promise<void> {
    const envelope = await signEnvelope(
      'deny',
      {
        fleet: request.fleet,
        host: request.host,
        requestId: request.requestId,
        ...(report ? { report: { scope: report } } : {}),
      },
      { role: 'device', id: phone.id },
      phone.deviceKeys.privateKey,
    );
    this.send({
      v: PROTOCOL_VERSION,
      type: 'denied',
      requestId: request.requestId,
      envelope,
      at: Date.now(),
    });
  }

  dropConnections(): void {
    for (const socket of this.#sockets) socket.terminate();
  }

  async waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('the stand-in relay waited in vain');
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 25);
      });
    }
  }

  async nextRequest(after = this.requests.length): Promise<ApprovalRequest> {
    await this.waitFor(() => this.requests.length > after);
    return this.requests[after]!;
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown) : undefined;
    const json = (status: number, value: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    if (this.failWith)
      return json(
        this.failWith,
        this.failBody ?? { error: { code: 'internal', message: 'stand-in failure' } },
      );
    const path = new URL(request.url ?? '/', this.origin).pathname;
    if (request.method === 'POST' && path.endsWith('/requests')) {
      const approval = body as ApprovalRequest;
      this.requests.push(approval);
      this.#wake();
      return json(201, {
        v: PROTOCOL_VERSION,
        ...((await this.answerRequest?.(approval)) ?? { requestId: approval.requestId, joined: false }),
      });
    }
    const withdrawn = /\/requests\/([^/]+)\/withdraw$/.exec(path);
    if (request.method === 'POST' && withdrawn) {
      const requestId = decodeURIComponent(withdrawn[1]!);
      this.withdrawals.push(requestId);
      return json(200, { v: PROTOCOL_VERSION, requestId, state: 'withdrawn' });
    }
    if (request.method === 'POST' && path.endsWith('/freeze')) {
      const envelope = body as FreezeEnvelope;
      this.freezes.push(envelope);
      // The fleet the path names, as the real relay answers.
      const fleet = decodeURIComponent(path.split('/').at(-2)!);
      this.state = {
        ...this.state,
        fleet,
        frozen: true,
        epoch: this.state.epoch + 1,
        freeze: envelope,
        votes: [],
      };
      this.#wake();
      return json(200, this.answerFreeze?.(this.state) ?? this.state);
    }
    const pairing = /\/pairing(?:\/([^/]+))?(?:\/(confirm|withdraw))?$/.exec(path);
    if (pairing) return this.#pairing(request.method, pairing[1], pairing[2], body, json);
    if (request.method === 'GET' && path === '/v1/config')
      return json(200, { v: PROTOCOL_VERSION, vapidPublicKey: null });
    json(404, { error: { code: 'not_found', message: 'not in the stand-in' } });
  }

  /** The pairing routes `latch pair` calls, with no check of the offer token or signature. */
  #pairing(
    method: string | undefined,
    offerId: string | undefined,
    action: string | undefined,
    body: unknown,
    json: (status: number, value: unknown) => void,
  ): void {
    if (method === 'POST' && offerId === undefined) {
      const offer = body as PairingOffer;
      this.offers.set(offer.offerId, { offer, state: 'open' });
      return json(201, { v: PROTOCOL_VERSION, offerId: offer.offerId, exp: offer.exp });
    }
    const held = offerId === undefined ? undefined : this.offers.get(decodeURIComponent(offerId));
    if (!held || held.state === 'withdrawn')
      return json(404, { error: { code: 'not_found', message: 'no such offer' } });
    if (method === 'GET') {
      const { offer, completion, state } = held;
      return json(200, {
        v: PROTOCOL_VERSION,
        offer,
        ...(completion ? { completion } : {}),
        confirmed: state === 'confirmed',
      });
    }
    if (action === 'withdraw') {
      held.state = 'withdrawn';
      return json(200, { v: PROTOCOL_VERSION, offerId: held.offer.offerId, state: 'withdrawn' });
    }
    held.confirmationsAsked = (held.confirmationsAsked ?? 0) + 1;
    if (this.holdConfirmation) return;
    const answer = () => {
      const refusal = this.refuseConfirmation;
      if (refusal)
        return json(refusal.status, { error: { code: refusal.code, message: 'stand-in refusal' } });
      held.state = 'confirmed';
      json(200, { v: PROTOCOL_VERSION });
    };
    if (this.beforeConfirming) return void this.beforeConfirming().then(answer);
    answer();
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
