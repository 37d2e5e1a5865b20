import { request as httpRequest } from 'node:http';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy between a daemon and its relay that a test can cut and heal: the network between
 * them. Cut, it forwards nothing, in one of two ways a network fails: `reset` resets every
 * connection and every new one (a relay or route that is down: calls fail at once, the WebSocket
 * closes, each redial fails); `silent` drops every byte and answers nothing, not even a reset (a
 * cable pulled, a laptop on another network: only the daemon's own keep-alive can tell).
 * Healed, it forwards again. Phones are not behind it: `phoneFetch` reaches the relay beside it.
 */
export class PartitionProxy {
  /** What the daemon is configured with: the relay, as reached through the proxy. */
  origin = '';
  /** Connections refused while cut: the daemon really tried. */
  refused = 0;
  readonly #target: number;
  readonly #open = new Set<Socket>();
  /** Connections that a silent cut holds: every byte dropped, never an answer. */
  readonly #held = new Set<Socket>();
  readonly #server = createServer((client) => this.#accept(client));
  #cut: 'reset' | 'silent' | undefined;

  private constructor(targetPort: number) {
    this.#target = targetPort;
  }

  static async start(targetPort: number): Promise<PartitionProxy> {
    const proxy = new PartitionProxy(targetPort);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    // WebAuthn needs a domain for its RP ID, not an IP address: localhost, as the phones use.
    proxy.origin = `http://localhost:${(proxy.#server.address() as AddressInfo).port}`;
    return proxy;
  }

  /** The partition begins. */
  cut(how: 'reset' | 'silent' = 'reset'): void {
    this.#cut = how;
    for (const socket of this.#open) {
      if (how === 'reset') socket.resetAndDestroy();
      else this.#hold(socket);
    }
    this.#open.clear();
  }

  /**
   * The partition ends: new connections reach the relay again. A connection held through it is
   * reset, as the relay resets a connection it no longer knows.
   */
  heal(): void {
    this.#cut = undefined;
    for (const socket of this.#held) socket.resetAndDestroy();
    this.#held.clear();
  }

  /**
   * A phone's fetch: straight to the relay, never through the partition, under the proxy's
   * origin (the Host header), since the daemon checks the phone's assertions against that origin.
   */
  phoneFetch = (url: string, init: RequestInit): Promise<Response> => {
    const { pathname, search } = new URL(url);
    const headers = { ...(init.headers as Record<string, string>), host: new URL(this.origin).host };
    return new Promise((resolve, reject) => {
      const sent = httpRequest(
        { host: '127.0.0.1', port: this.#target, path: pathname + search, method: init.method, headers },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => {
            const status = answer.statusCode ?? 502;
            const body = status === 204 || status === 304 ? null : new Uint8Array(Buffer.concat(chunks));
            resolve(new Response(body, { status }));
          });
          answer.on('error', reject);
        },
      );
      sent.on('error', reject);
      sent.end(init.body as string | Uint8Array | undefined);
    });
  };

  #hold(socket: Socket): void {
    socket.unpipe();
    socket.removeAllListeners('close');
    socket.on('error', () => {});
    socket.resume(); // read and dropped
    this.#held.add(socket);
  }

  #accept(client: Socket): void {
    client.on('error', () => {}); // a reset, ours or the daemon's
    if (this.#cut) {
      this.refused++;
      if (this.#cut === 'reset') client.resetAndDestroy();
      else this.#hold(client);
      return;
    }
    const upstream = connect(this.#target, '127.0.0.1');
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      this.#open.add(socket);
      socket.pipe(other);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        this.#open.delete(socket);
        other.destroy();
      });
    }
  }

  async stop(): Promise<void> {
    for (const socket of [...this.#open, ...this.#held]) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
