import WebSocket from 'ws';
import type { HostFrame } from '../../shared/messages/events.ts';
import { MAX_BODY_BYTES } from '../../shared/schema/parse.ts';
import { parseHostFrame } from './parseHostFrame.ts';
import type { RelayClient } from './relayClient.ts';

export type ConnectionStatus = 'connecting' | 'connected' | 'disconnected';

export interface ConnectionOptions {
  client: RelayClient;
  /** Told to the relay at each connection, so it shows phones the votes this host needs. */
  quorum: () => number;
  /** Asked at each connection: how often to ping the relay (kill-switch/strictMode.ts). */
  pingEveryMs(): number;
  /** The last event sequence number handled, to replay what was missed. */
  cursor(): number;
  /** Resolves once the frame is handled: the connection reads no further ahead than MOST_FRAMES_AHEAD. */
  onFrame(frame: HostFrame): Promise<void>;
  onStatus(status: ConnectionStatus): void;
  log(line: string): void;
}

const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 10_000;
/**
 * A connection that stayed up this long worked: the backoff starts over after it. One that is
 * dropped sooner (a relay that accepts and hangs up) keeps backing off, not redialled at once.
 */
const WORKING_CONNECTION_MS = 10_000;
/** How often the quorum in force is compared with the one the relay was told (one stat). */
const QUORUM_CHECK_MS = 1000;
/** Frames received and not yet handled, past which the connection stops reading. */
const MOST_FRAMES_AHEAD = 64;
/** Frames the daemon cannot read, which a relay may send as fast as it likes: one line a minute. */
const MALFORMED_LINE_EVERY_MS = 60_000;

/**
 * The daemon's WebSocket to its fleet. Reconnects with capped exponential backoff and full
 * jitter (so a relay restart is not met by every daemon at once), starting over only after a
 * connection that worked, and keeps the connection alive
 * with "ping" frames that the relay's runtime answers without waking the fleet object; one that
 * answers nothing from one ping to the next is dropped and redialled.
 */
export class RelayConnection {
  readonly #options: ConnectionOptions;
  #socket: WebSocket | undefined;
  #attempt = 0;
  #stopped = false;
  #retry: NodeJS.Timeout | undefined;
  #ping: NodeJS.Timeout | undefined;
  #quorumCheck: NodeJS.Timeout | undefined;
  /** The quorum the open connection told the relay. */
  #toldQuorum: number | undefined;
  /** When a malformed frame was last logged, and how many came since. */
  #malformed = { loggedAt: -Infinity, since: 0 };

  constructor(options: ConnectionOptions) {
    this.#options = options;
  }

  start(): void {
    this.#stopped = false;
    this.#connect();
    // A quorum raised in config.toml applies here at once; the relay, which shows phones how many
    // votes to give, hears it when told at a connection. Until then phones would resume the
    // fleet with too few votes, and show it armed while this host stays frozen.
    this.#quorumCheck = setInterval(() => {
      const socket = this.#socket;
      if (socket?.readyState !== WebSocket.OPEN || this.#options.quorum() === this.#toldQuorum) return;
      this.#options.log(`the quorum is now ${this.#options.quorum()}; reconnecting to tell the relay`);
      socket.close(1000, 'quorum changed');
    }, QUORUM_CHECK_MS);
    this.#quorumCheck.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#retry);
    clearInterval(this.#ping);
    clearInterval(this.#quorumCheck);
    this.#socket?.close(1000, 'daemon stopping');
  }

  #connect(): void {
    const { client } = this.#options;
    if (!client.hasToken) {
      // Not paired yet: look again soon, without backing off, so a fresh pairing connects at once.
      this.#options.onStatus('disconnected');
      if (!this.#stopped) this.#retry = setTimeout(() => this.#connect(), 500);
      return;
    }
    this.#options.onStatus('connecting');
    const quorum = this.#options.quorum();
    const socket = new WebSocket(client.connectUrl(this.#options.cursor(), quorum), {
      headers: client.authorization(),
      handshakeTimeout: 10_000,
      // Frames are small JSON; compression would cost latency and a zlib context's memory.
      perMessageDeflate: false,
      // A frame over what any frame may be is refused as it arrives, before it is buffered whole.
      maxPayload: MAX_BODY_BYTES,
    });
    this.#socket = socket;
    let heard = true;
    let framesAhead = 0;
    let openedAt: number | undefined;
    socket.on('open', () => {
      openedAt = Date.now();
      this.#toldQuorum = quorum;
      this.#options.onStatus('connected');
      this.#ping = setInterval(() => {
        // Paused, this side is the slow one: the relay's answers wait unread.
        if (socket.isPaused) return;
        if (!heard) {
          this.#options.log('the relay answered no ping; reconnecting');
          socket.terminate();
          return;
        }
        heard = false;
        socket.send('ping');
      }, this.#options.pingEveryMs());
    });
    socket.on('message', (data) => {
      heard = true;
      const text = data.toString();
      if (text === 'pong') return;
      const frame = parseHostFrame(text);
      if (!frame.ok) {
        this.#logMalformed(frame.error.code);
        return;
      }
      // Frames are handled one at a time, and a relay may send them faster than that: past so
      // many waiting, the connection stops reading (TCP holds the rest back at the relay), so the
      // daemon's memory does not grow with what a relay sends.
      if (++framesAhead >= MOST_FRAMES_AHEAD) socket.pause();
      void this.#options.onFrame(frame.value).finally(() => {
        if (--framesAhead < MOST_FRAMES_AHEAD / 2 && socket.isPaused) socket.resume();
      });
    });
    socket.on('unexpected-response', (_request, response) => {
      this.#options.log(`the relay refused the connection: ${response.statusCode}`);
      socket.terminate();
    });
    socket.on('error', () => {
      // 'close' follows and schedules the retry.
    });
    socket.on('close', () => {
      clearInterval(this.#ping);
      if (this.#socket === socket) this.#socket = undefined;
      this.#options.onStatus('disconnected');
      if (openedAt !== undefined && Date.now() - openedAt >= WORKING_CONNECTION_MS) this.#attempt = 0;
      this.#scheduleRetry('the connection closed');
    });
  }

  #logMalformed(code: string): void {
    const malformed = this.#malformed;
    malformed.since++;
    const now = Date.now();
    if (now - malformed.loggedAt < MALFORMED_LINE_EVERY_MS) return;
    this.#options.log(
      malformed.since === 1
        ? `ignored a malformed frame from the relay (${code})`
        : `ignored ${malformed.since} more malformed frames from the relay (the last: ${code})`,
    );
    this.#malformed = { loggedAt: now, since: 0 };
  }

  #scheduleRetry(why: string): void {
    if (this.#stopped) return;
    const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 20);
    const delay = Math.random() * ceiling;
    if (this.#attempt > 3) this.#options.log(`${why}; reconnecting in ${Math.round(delay)} ms`);
    this.#retry = setTimeout(() => this.#connect(), delay);
  }
}
