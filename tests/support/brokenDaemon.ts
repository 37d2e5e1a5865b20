import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';

/** What the stand-in says on each connection, after reading the caller's first bytes. */
export type BrokenBehaviour =
  | 'hang' // accepts, then says nothing, ever
  | 'close' // closes the connection without a word
  | 'garbage' // a line that is not JSON
  | 'malformed-allow' // an "allow" that lacks what an answer must carry
  | 'cut-after-pending' // a phone is being asked… then the connection is cut
  | 'pending-then-silence' // a phone is being asked (deadline in 1 s)… then nothing
  | 'refused' // the daemon cannot read the request
  | 'http' // an HTTP answer, as a daemon from before the gate spoke NDJSON would give
  | 'http-trickle' // an HTTP 200 whose body comes a byte a second, and never ends
  | 'noisy-deny'; // a deny whose reason holds terminal escapes, a newline and 100 kB

const PENDING = (exp: number) => `${JSON.stringify({ pending: { requestId: 'r-broken', exp } })}\n`;

/**
 * A daemon that misbehaves on purpose, listening where the real one would (a private directory,
 * a 0600 socket), so that a door's client passes its path checks and then meets the fault.
 */
export class BrokenDaemon {
  behaviour: BrokenBehaviour = 'hang';
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly socketPath: string;

  private constructor(socketPath: string) {
    this.socketPath = socketPath;
    this.#server = createServer((socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('error', () => {});
      socket.once('data', () => this.#misbehave(socket));
    });
  }

  static async listen(socketPath: string): Promise<BrokenDaemon> {
    mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
    chmodSync(dirname(socketPath), 0o700);
    rmSync(socketPath, { force: true });
    const daemon = new BrokenDaemon(socketPath);
    await new Promise<void>((resolve) => daemon.#server.listen(socketPath, resolve));
    chmodSync(socketPath, 0o600);
    return daemon;
  }

  #misbehave(socket: Socket): void {
    const line = (value: unknown) => `${JSON.stringify(value)}\n`;
    switch (this.behaviour) {
      case 'hang':
        return;
      case 'close':
        socket.destroy();
        return;
      case 'garbage':
        socket.write('allow, go ahead\n');
        return;
      case 'malformed-allow':
        socket.end(line({ answer: { decision: 'allow' } }));
        return;
      case 'cut-after-pending':
        socket.write(PENDING(Date.now() + 60_000));
        setTimeout(() => socket.destroy(), 100);
        return;
      case 'pending-then-silence':
        socket.write(PENDING(Date.now() + 1000));
        return;
      case 'noisy-deny': {
        const reason = `policy\u001b[2J\u001b]0;owned\u0007\nlatch: approved ${'x'.repeat(100_000)}`;
        socket.end(line({ answer: { decision: 'deny', blockReason: 'policy', reason } }));
        return;
      }
      case 'refused':
        socket.end(line({ refused: { code: 'invalid_request', message: 'oops' } }));
        return;
      case 'http':
        socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
        return;
      case 'http-trickle': {
        socket.write(
          'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n1\r\n{\r\n',
        );
        const trickle = setInterval(() => socket.write('1\r\n \r\n'), 1000);
        this.#timers.add(trickle);
        socket.once('close', () => {
          clearInterval(trickle);
          this.#timers.delete(trickle);
        });
        return;
      }
    }
  }

  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
