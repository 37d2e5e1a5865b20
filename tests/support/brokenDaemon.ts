import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';

/** What the stand-in says on each connection, after reading the caller's request head. */
export type BrokenBehaviour =
  | 'hang' // accepts, then says nothing, ever
  | 'close' // closes the connection without a word
  | 'garbage' // a 200, then a line that is not JSON
  | 'malformed-allow' // a 200, then an "allow" that lacks what an answer must carry
  | 'cut-after-pending' // a phone is being asked… then the connection is cut
  | 'pending-then-silence' // a phone is being asked (deadline in 1 s)… then nothing
  | 'server-error' // a 500 with a body that is not JSON
  | 'noisy-deny'; // a deny whose reason holds terminal escapes, a newline and 100 kB

const PENDING = (exp: number) => `${JSON.stringify({ pending: { requestId: 'r-broken', exp } })}\n`;

function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

/**
 * A daemon that misbehaves on purpose, listening where the real one would (a private directory,
 * a 0600 socket), so that a door's client passes its path checks and then meets the fault.
 */
export class BrokenDaemon {
  behaviour: BrokenBehaviour = 'hang';
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
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
    const ok = 'HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n';
    switch (this.behaviour) {
      case 'hang':
        return;
      case 'close':
        socket.destroy();
        return;
      case 'garbage':
        socket.write(ok + chunk('allow, go ahead\n'));
        return;
      case 'malformed-allow':
        socket.end(ok + chunk(`${JSON.stringify({ answer: { decision: 'allow' } })}\n`) + '0\r\n\r\n');
        return;
      case 'cut-after-pending':
        socket.write(ok + chunk(PENDING(Date.now() + 60_000)));
        setTimeout(() => socket.destroy(), 100);
        return;
      case 'pending-then-silence':
        socket.write(ok + chunk(PENDING(Date.now() + 1000)));
        return;
      case 'noisy-deny': {
        const reason = `policy\u001b[2J\u001b]0;owned\u0007\nlatch: approved ${'x'.repeat(100_000)}`;
        const answer = { answer: { decision: 'deny', blockReason: 'policy', reason } };
        socket.end(ok + chunk(`${JSON.stringify(answer)}\n`) + '0\r\n\r\n');
        return;
      }
      case 'server-error':
        socket.end('HTTP/1.1 500 Internal Server Error\r\ncontent-length: 5\r\n\r\noops!');
        return;
    }
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
