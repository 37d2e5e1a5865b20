import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import type { ApprovalRequest } from '../../shared/messages/approvals.ts';
import type { HostEvent, HostFrame } from '../../shared/messages/events.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';

/**
 * A compromised relay: it sits in front of the real one and everyone (the daemon and the phones)
 * talks to it, so it can forward faithfully or lie. It records what passes, swaps request boxes,
 * and sends the daemon frames of its own making.
 */
export class HostileProxy {
  origin = '';
  /** Every request the daemon sent, as the real relay received it. */
  readonly requests: ApprovalRequest[] = [];
  /** Every frame the real relay sent the daemon. */
  readonly frames: HostFrame[] = [];
  /** When set, the next requests get these boxes instead of their own (a swapped text). */
  swapBoxesWith: ApprovalRequest['sealed'] | undefined;
  /** Each daemon's socket, with the host token it connected with. */
  readonly #daemonSockets = new Map<WebSocket, string>();
  readonly #server = createServer((request, response) => void this.#forward(request, response));
  readonly #wss = new WebSocketServer({ noServer: true });
  #target = '';
  #forged = 1_000_000;

  static async start(target: string): Promise<HostileProxy> {
    const proxy = new HostileProxy();
    proxy.#target = target;
    proxy.#server.on('upgrade', (request, socket, head) => {
      const upstream = new WebSocket(`${target.replace(/^http/, 'ws')}${request.url}`, {
        headers: { authorization: request.headers.authorization ?? '', host: request.headers.host ?? '' },
      });
      upstream.on('unexpected-response', () => socket.destroy());
      upstream.on('open', () => {
        proxy.#wss.handleUpgrade(request, socket, head, (daemon) => {
          proxy.#daemonSockets.set(daemon, request.headers.authorization ?? '');
          upstream.on('message', (data) => {
            const text = data.toString();
            if (text !== 'pong') proxy.frames.push(JSON.parse(text) as HostFrame);
            daemon.send(text);
          });
          daemon.on('message', (data) => upstream.send(data.toString()));
          daemon.on('close', () => {
            proxy.#daemonSockets.delete(daemon);
            upstream.close();
          });
          upstream.on('close', () => daemon.close());
        });
      });
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    proxy.origin = `http://localhost:${(proxy.#server.address() as AddressInfo).port}`;
    return proxy;
  }

  /**
   * Sends the daemons a frame the real relay never sent; with `to` (a host token), only the
   * daemon that connected with it.
   */
  inject(event: HostEvent, options: { to?: string } = {}): void {
    const frame = JSON.stringify({ v: PROTOCOL_VERSION, seq: ++this.#forged, event });
    for (const [socket, authorization] of this.#daemonSockets) {
      if (options.to === undefined || authorization === `Bearer ${options.to}`) socket.send(frame);
    }
  }

  get daemonConnected(): boolean {
    return this.#daemonSockets.size > 0;
  }

  /** How many daemons are connected through the proxy. */
  get daemonsConnected(): number {
    return this.#daemonSockets.size;
  }

  async #forward(request: IncomingMessage, response: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body = Buffer.concat(chunks);
    if (request.method === 'POST' && /\/v1\/fleets\/[^/]+\/requests$/.test(request.url ?? '')) {
      const approval = JSON.parse(body.toString('utf8')) as ApprovalRequest;
      if (this.swapBoxesWith) {
        approval.sealed = this.swapBoxesWith;
        body = Buffer.from(JSON.stringify(approval));
      }
      this.requests.push(approval);
    }
    const headers = { ...request.headers, 'content-length': String(body.length) };
    const upstream = httpRequest(
      `${this.#target}${request.url}`,
      { method: request.method, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', () => response.writeHead(502).end());
    upstream.end(body);
  }

  async stop(): Promise<void> {
    for (const socket of this.#daemonSockets.keys()) socket.terminate();
    this.#wss.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
