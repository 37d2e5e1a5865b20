import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Conversation } from '../gate/gatekeeper.ts';
import {
  readGateRequest,
  type FallbackOffer,
  type GateAnswer,
  type GateLine,
  type GateRequest,
} from './localApi.ts';

/** The gate request: an agent's call with its command and input, whole (the policy matches it whole). */
const MAX_REQUEST_LINE_BYTES = 1024 * 1024;
/** A client that says nothing for this long after connecting is not asking anything. */
const FIRST_LINE_WITHIN_MS = 10_000;
/** A typed fallback answer. */
const MAX_LATER_LINE_BYTES = 4096;

/**
 * `POST /v1/gate`: one call's whole conversation on one connection. The first line of the
 * request is the call; the daemon answers with NDJSON lines (see GateLine). A terminal fallback
 * is offered on this connection and answered on it, the only place its answer is accepted: a
 * process that did not ask cannot answer another's challenge.
 */
export async function serveGateConversation(
  request: IncomingMessage,
  response: ServerResponse,
  gate: (call: GateRequest, conversation: Conversation) => Promise<GateAnswer>,
): Promise<void> {
  const lines = new RequestLines(request);
  const first = await lines.next(Date.now() + FIRST_LINE_WITHIN_MS);
  let parsed: unknown;
  try {
    parsed = first === undefined ? undefined : JSON.parse(first);
  } catch {
    parsed = undefined;
  }
  const call = readGateRequest(parsed);
  if ('error' in call) {
    response
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { code: 'invalid_request', message: lines.problem ?? call.error } }));
    return;
  }
  const write = (line: GateLine) => response.write(`${JSON.stringify(line)}\n`);
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  // A connection that closes before the answer is written: the caller is gone (killed, cancelled).
  const hungUp = new AbortController();
  response.once('close', () => {
    if (!response.writableEnded) hungUp.abort();
  });
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
  write({ answer });
  response.end();
}

/** The request body, line by line, each line capped; `next` resolves undefined at its end. */
class RequestLines {
  problem: string | undefined;
  readonly #lines: string[] = [];
  readonly #waiting: (() => void)[] = [];
  #buffer = '';
  #ended = false;

  constructor(request: IncomingMessage) {
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let newline;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        this.#lines.push(this.#buffer.slice(0, newline));
        this.#buffer = this.#buffer.slice(newline + 1);
      }
      const cap = this.#lines.length === 0 ? MAX_REQUEST_LINE_BYTES : MAX_LATER_LINE_BYTES;
      if (Buffer.byteLength(this.#buffer) > cap) {
        this.problem = `a line of the request is over ${cap} bytes`;
        request.destroy();
        this.#end();
      }
      this.#wake();
    });
    // A client that sent one JSON body without a newline: that body is the request.
    request.on('end', () => {
      if (this.#buffer && !this.problem) this.#lines.push(this.#buffer);
      this.#end();
    });
    request.on('error', () => this.#end());
    request.on('close', () => this.#end());
  }

  /** The next line, or undefined at the end of the request (or at `until`, ms since the epoch). */
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

  #end(): void {
    this.#ended = true;
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiting.splice(0)) wake();
  }
}
