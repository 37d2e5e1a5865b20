import type { Socket } from 'node:net';
import type { Conversation } from '../gate/gatekeeper.ts';
import {
  MAX_REQUEST_LINE_BYTES,
  readGateRequest,
  type FallbackOffer,
  type GateAnswer,
  type GateLine,
  type GateRequest,
} from './localApi.ts';

/** A client that says nothing for this long after connecting is not asking anything. */
export const FIRST_LINE_WITHIN_MS = 10_000;
/** A typed fallback answer. */
const MAX_LATER_LINE_BYTES = 4096;
/** Unread lines a caller can have sent: its call, then the one answer it may be asked for. */
const MAX_WAITING_LINES = 2;
/**
 * How long a caller keeps its connection once the conversation's last line is all handed to the
 * system (the socket's buffers), which keeps it for the caller after the daemon's end is closed.
 */
const CUT_GRACE_MS = 2000;
/**
 * The most a caller reading its last line, however slowly, holds its connection open. Node tells
 * when the whole line has gone to the system, not how much of it a caller has read, so a caller
 * that stopped reading cannot be told apart sooner (review rv10b).
 */
const LAST_LINE_WITHIN_MS = 30_000;
/**
 * The most of unfinished lines the daemon holds for all its callers at once (UTF-16 code units):
 * a call is a few kB, and thousands of callers each holding a line just under the cap open would
 * otherwise take the daemon's memory, and the daemon with it.
 */
export const MOST_UNFINISHED_HELD = 32 * 1024 * 1024;

/** What every conversation's unfinished lines hold together, against MOST_UNFINISHED_HELD. */
export class UnfinishedLines {
  held = 0;
}

/**
 * One call's whole conversation on one connection, NDJSON both ways (docs/daemon.md). The first
 * line is the call; the daemon answers with lines (see GateLine). A terminal fallback is offered
 * on this connection and answered on it, the only place its answer is accepted: a process that
 * did not ask cannot answer another's challenge. The caller's end of the connection closing
 * before the answer means it is gone (killed, cancelled).
 */
export async function serveGateConversation(
  connection: Socket,
  gate: (call: GateRequest, conversation: Conversation) => Promise<GateAnswer>,
  unfinished: UnfinishedLines,
): Promise<void> {
  const write = (line: GateLine) => {
    if (connection.writable) connection.write(`${JSON.stringify(line)}\n`);
  };
  let said = false;
  /** The conversation's last line: an answer or a refusal, whichever comes first. */
  const sayLast = (line: GateLine) => {
    if (said) return;
    said = true;
    write(line);
    closeAfterLastLine(connection);
  };
  const refuse = (why: string) => sayLast({ refused: { code: 'invalid_request', message: why } });
  const hungUp = new AbortController();
  let answered = false;
  const gone = () => {
    if (!answered) hungUp.abort();
  };
  // A caller cut off is told why at once, even while its call waits: it is gone for the gate.
  const lines = new ConnectionLines(connection, unfinished, gone, refuse);
  const first = await lines.next(Date.now() + FIRST_LINE_WITHIN_MS);
  let parsed: unknown;
  try {
    parsed = first === undefined ? undefined : JSON.parse(first);
  } catch {
    parsed = undefined;
  }
  const call = readGateRequest(parsed);
  if ('error' in call) {
    answered = true;
    const unended = lines.ended ? 'the caller closed its end before the line ended (a newline)' : undefined;
    return refuse(
      first === undefined ? (unended ?? `no whole line within ${FIRST_LINE_WITHIN_MS / 1000} s`) : call.error,
    );
  }
  const answer = await gate(call, {
    gone: hungUp.signal,
    onAsked: (pending) => write({ pending }),
    askOnTerminal: async (offer: FallbackOffer) => {
      write({ fallback: offer });
      const typed = await lines.next(offer.exp);
      try {
        const { fallbackAnswer } = JSON.parse(typed ?? 'null') as { fallbackAnswer?: unknown };
        return typeof fallbackAnswer === 'string' ? fallbackAnswer : undefined;
      } catch {
        return undefined;
      }
    },
  });
  answered = true;
  sayLast({ answer });
}

/**
 * Ends the connection once its last line is written, and closes it when the caller keeps its end
 * open: CUT_GRACE_MS after the whole line is handed to the system (which keeps it for the caller
 * once the daemon's end is closed), never while part of it still waits in the daemon, unless the
 * caller has not read it all within LAST_LINE_WITHIN_MS: a connection is never held for ever.
 */
function closeAfterLastLine(connection: Socket): void {
  const cut = () => connection.destroy();
  let timer = setTimeout(cut, LAST_LINE_WITHIN_MS).unref();
  connection.once('close', () => clearTimeout(timer));
  connection.end(() => {
    clearTimeout(timer);
    timer = setTimeout(cut, CUT_GRACE_MS).unref();
  });
}

/** The caller's lines, each capped; `next` resolves undefined once the caller's end is closed. */
class ConnectionLines {
  problem: string | undefined;
  readonly #lines: string[] = [];
  readonly #waiting: (() => void)[] = [];
  #buffer = '';
  #received = 0;
  #ended = false;
  readonly #unfinished: UnfinishedLines;

  constructor(
    connection: Socket,
    unfinished: UnfinishedLines,
    onGone: () => void,
    onCut: (problem: string) => void,
  ) {
    this.#unfinished = unfinished;
    connection.setEncoding('utf8');
    const end = () => {
      onGone();
      this.#end();
    };
    connection.on('data', (chunk: string) => {
      // Cut off: what else it sends is not read.
      if (this.problem) return;
      this.#setBuffer(this.#buffer + chunk);
      if (this.#unfinished.held > MOST_UNFINISHED_HELD)
        return this.#cut('the daemon holds more unfinished requests than it reads at once', end, onCut);
      // Most chunks of a long line hold no newline: it is measured when it ends, or once its
      // code units alone pass its cap (each is a byte of UTF-8 or more), not again and again as
      // it trickles in.
      if (!chunk.includes('\n') && this.#buffer.length <= this.#cap()) return;
      let newline;
      // Each line is measured as it is split off, and the rest as it stands: the cap is exact.
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const line = this.#buffer.slice(0, newline);
        const tooLong = this.#overCap(line);
        if (tooLong) return this.#cut(tooLong, end, onCut);
        this.#lines.push(line);
        this.#setBuffer(this.#buffer.slice(newline + 1));
        this.#received += 1;
      }
      const problem =
        this.#overCap(this.#buffer) ??
        (this.#lines.length > MAX_WAITING_LINES ? 'more lines than a caller sends' : undefined);
      if (problem) return this.#cut(problem, end, onCut);
      this.#wake();
    });
    connection.on('end', end);
    connection.on('error', end);
    connection.on('close', end);
  }

  /** The next line, or undefined at the end of the caller's lines (or at `until`, ms since the epoch). */
  async next(until = Infinity): Promise<string | undefined> {
    while (this.#lines.length === 0 && !this.#ended && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const timer = Number.isFinite(until) ? setTimeout(resolve, until - Date.now()) : undefined;
        this.#waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.problem ? undefined : this.#lines.shift();
  }

  /** What is wrong with `line` when it is over the cap for the line it is (the call, or a later one). */
  #overCap(line: string): string | undefined {
    const cap = this.#cap();
    return Buffer.byteLength(line) > cap ? `a line of the request is over ${cap} bytes` : undefined;
  }

  /** The cap of the line being read: the call's, or a later one's. */
  #cap(): number {
    return this.#received === 0 ? MAX_REQUEST_LINE_BYTES : MAX_LATER_LINE_BYTES;
  }

  /**
   * A caller that sends what no caller of ours would is cut off, and so heard as gone. Its
   * refusal says why, as the conversation's last line, after which its connection closes.
   */
  #cut(problem: string, end: () => void, onCut: (problem: string) => void): void {
    this.problem = problem;
    end();
    onCut(problem);
  }

  /** Whether the caller's end is closed: no line comes after those already read. */
  get ended(): boolean {
    return this.#ended;
  }

  #end(): void {
    this.#ended = true;
    this.#setBuffer('');
    this.#wake();
  }

  /** Keeps what the unfinished line holds counted in what all callers' hold. */
  #setBuffer(buffer: string): void {
    this.#unfinished.held += buffer.length - this.#buffer.length;
    this.#buffer = buffer;
  }

  #wake(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }
}
