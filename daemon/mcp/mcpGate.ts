import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  GetPromptRequestSchema,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ReadResourceRequestSchema,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { askDaemon } from '../socket/askDaemon.ts';
import { currentFolder } from '../socket/currentFolder.ts';
import type { GateAnswer } from '../socket/localApi.ts';
import { toolInputText } from '../socket/toolInputText.ts';
import { defaultServerName } from './serverName.ts';

/**
 * `latch mcp -- <server…>`: a stdio MCP proxy. It starts the real server and forwards what the
 * server says byte for byte, and what the client says as it read it (asRead), except a request
 * that may make the server act (a `tools/call`, a `resources/read`, a `prompts/get`, any method
 * it does not know): each is held until the policy or a phone decides. Allowed, it goes on as it
 * was judged (rebuilt from what was read); refused, the client gets the reason (a tool error for
 * a tool call, a JSON-RPC error otherwise), and the server never sees it. What it cannot read whole is refused
 * (judgeMessage). A request the client cancels while it waits is dropped: the server never sees
 * it either, whatever the phone answers later. When the server ends, so does the gate.
 */
export async function runMcpGate(command: string[], options: { name?: string } = {}): Promise<number> {
  const serverName = options.name ?? defaultServerName(command);
  const server = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  const clientLines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  // The server gone (or deaf: its input closed), nothing sent to it would be answered: the gate
  // ends too, with the server's code, as the server alone would have, and the client sees it.
  let serverGone = false;
  const exited = new Promise<number>((resolve) =>
    server.once('close', (code, signal) => {
      serverGone = true;
      clientLines.close();
      resolve(code ?? (signal ? 128 + 15 : 1));
    }),
  );
  server.stdin.on('error', () => {
    server.kill();
    setTimeout(() => server.kill('SIGKILL'), 2000).unref();
  });
  server.once('error', (error) => {
    process.stderr.write(`latch mcp: cannot start ${command[0]}: ${error.message}\n`);
    process.exit(127);
  });

  // Server → client: untouched, in whole lines, so that a refusal of ours never lands inside one
  // of the server's messages.
  forwardWholeLines(server.stdout, (bytes) => process.stdout.write(bytes));

  // Client → server: line by line (MCP's stdio framing), held only for what may make the server act.
  const reply = (message: JSONRPCMessage) => process.stdout.write(serializeMessage(message));
  // Each waiting request on its own: a client may reuse an id, and a cancel drops every one of it.
  const waiting = new Set<{ id: RequestId; cancel: AbortController; decided: Promise<void> }>();
  for await (const line of clientLines) {
    if (line.trim() === '') continue;
    const message = readMessage(line);
    const cancelledIds = cancelledCalls(message);
    const cancelling = [...waiting].filter((entry) => cancelledIds.includes(entry.id));
    // The daemon withdraws each from the phones: approved later, it would be audited as allowed.
    for (const entry of cancelling) entry.cancel.abort();
    // A cancel alone is ours to keep: the server never saw what it cancels. One in a batch goes
    // on with the batch, and the server ignores a cancel of a request it does not know.
    if (cancelling.length > 0 && !Array.isArray(message)) continue;
    const judged = judgeMessage(message, line);
    if (judged.kind === 'forward') {
      server.stdin.write(`${judged.line}\n`);
      continue;
    }
    if (judged.kind === 'refuse') {
      // Never forwarded: a server more lenient than this parser could run what it could not read.
      process.stdout.write(`${JSON.stringify(refusal(message, judged.why))}\n`);
      continue;
    }
    const held = judged.call;
    const entry = { id: held.id, cancel: new AbortController(), decided: Promise.resolve() };
    // askDaemon always resolves (a deny for anything that goes wrong); the catch is for the rest.
    entry.decided = decide(serverName, held, entry.cancel.signal)
      .catch((error: unknown): GateAnswer => ({
        decision: 'deny',
        blockReason: 'daemon_unreachable',
        reason: `internal error: ${(error as Error).message}`,
      }))
      .then((answer) => {
        waiting.delete(entry);
        if (entry.cancel.signal.aborted) {
          process.stderr.write(
            `latch mcp: dropped ${held.tool} (call ${held.id}): the client cancelled it\n`,
          );
          return;
        }
        if (answer.decision === 'allow') {
          server.stdin.write(`${judged.line}\n`);
          return;
        }
        // A tool's refusal is a tool error the agent reads; any other method's, a JSON-RPC error.
        reply(
          held.method === 'tools/call'
            ? {
                jsonrpc: '2.0',
                id: held.id,
                result: { content: [{ type: 'text', text: `latch: ${answer.reason}` }], isError: true },
              }
            : { jsonrpc: '2.0', id: held.id, error: { code: REFUSED, message: `latch: ${answer.reason}` } },
        );
      });
    waiting.add(entry);
  }
  if (serverGone) {
    if (waiting.size > 0)
      process.stderr.write(`latch mcp: the server ended; ${waiting.size} request(s) waiting were dropped\n`);
    return exited;
  }
  // The client hung up: calls still waiting are answered (or forwarded) before the server's input ends.
  await Promise.all([...waiting].map((entry) => entry.decided));
  server.stdin.end();
  return exited;
}

function forwardWholeLines(from: Readable, write: (bytes: Buffer) => void): void {
  let partial: Buffer = Buffer.alloc(0);
  from.on('data', (chunk: Buffer) => {
    const bytes = partial.length > 0 ? Buffer.concat([partial, chunk]) : chunk;
    const end = bytes.lastIndexOf(0x0a);
    if (end === -1) {
      partial = bytes;
      return;
    }
    write(bytes.subarray(0, end + 1));
    partial = bytes.subarray(end + 1);
  });
  from.on('end', () => {
    if (partial.length > 0) write(partial);
  });
}

/** JSON-RPC's "Invalid Request": a message the gate cannot read whole. */
const UNREADABLE = -32600;
/** A request other than a tool call that the policy or a phone refused (JSON-RPC's server range). */
const REFUSED = -32000;

/** A request that may make the server act, as its method's schema read it. */
interface ReadCall {
  id: RequestId;
  method: string;
  /** What the policy sees after `mcp__<server>__`: the tool's name, or the method (`resources/read`). */
  tool: string;
  /** What the call acts on. */
  input: Record<string, unknown>;
  /**
   * The call as judged, rebuilt from what the schema read: no member it left out (a `Name` that
   * Go's case-blind decoding would take for `name`), no duplicate, no other spelling.
   */
  forwarded: object;
}

/** A call held for a decision. */
interface HeldCall extends ReadCall {
  /** Its input as the phone shows it and self-protection reads it (toolInputText). */
  inputText: string;
}

function readMessage(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** The requests a client's message cancels, alone or in a batch. */
function cancelledCalls(message: unknown): RequestId[] {
  return (Array.isArray(message) ? message : [message]).flatMap((each: unknown) => {
    if (!isJSONRPCNotification(each) || each.method !== 'notifications/cancelled') return [];
    const parsed = CancelledNotificationSchema.safeParse(each);
    const cancelled = parsed.success ? parsed.data.params.requestId : undefined;
    return cancelled === undefined ? [] : [cancelled];
  });
}

/**
 * The answer to a message refused unforwarded: an error for each request it holds, so that the
 * client stops waiting for each id (a batch is answered by a batch). Only a request whose id
 * cannot be read back exactly, or a message holding none, is answered with `id: null`.
 */
function refusal(message: unknown, why: string): JSONRPCMessage | JSONRPCMessage[] {
  const error = (id: RequestId | null) =>
    ({ jsonrpc: '2.0', id, error: { code: UNREADABLE, message: `latch mcp: ${why}` } }) as JSONRPCMessage;
  if (!Array.isArray(message)) return error(idOf(message));
  const ids = message.flatMap((each: unknown) => {
    const id = idOf(each);
    return id !== null && isMethodMessage(each) ? [id] : [];
  });
  return ids.length > 0 ? ids.map(error) : error(null);
}

type Judged =
  /** `line`: as sent (an answer to the server), or rebuilt from what was read (asRead). */
  | { kind: 'forward'; line: string }
  /** Answered by `refusal`. */
  | { kind: 'refuse'; why: string }
  /** `line`: the call as it goes on once allowed. */
  | { kind: 'call'; call: HeldCall; line: string };

/**
 * What a client asks that only lists, describes or tunes the session: the server reads or
 * changes nothing for it that the agent could not see anyway (a completion offers names). A
 * task's result is that of a `tools/call` judged when it was made. Every other method, one that
 * is new or unknown included, is judged like a tool call.
 */
const UNJUDGED_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/result',
  'tasks/cancel',
]);
/** A method above, or a notification: a `notifications/` method with an id is a request. */
const isUnjudged = (method: unknown, message: object) =>
  typeof method === 'string' &&
  (UNJUDGED_METHODS.has(method) || (method.startsWith('notifications/') && !('id' in message)));

/**
 * What to do with a client's message. Only what surely asks nothing of the server that acts
 * passes unread: an answer to the server, or a method above under its one spelling. The rest is
 * judged, and what this parser does not take whole is refused (a line that is not JSON, a batch
 * with a method to judge, a request it cannot read), since a server that reads it more leniently
 * (extra members, NaN, `Method` for `method` in Go) would act on it unasked.
 */
function judgeMessage(message: unknown, line: string): Judged {
  try {
    return judgeRead(message, line);
  } catch {
    // A nesting too deep to write out again (JSON.stringify recurses): refused, not left unanswered.
    return { kind: 'refuse', why: 'a message the gate could not read: not forwarded' };
  }
}

/** The id to answer a refusal with: the message's, when it reads back exactly, else null. */
function idOf(message: unknown): RequestId | null {
  const id = (message as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
}

function judgeRead(message: unknown, line: string): Judged {
  const refuse = (why: string): Judged => ({ kind: 'refuse', why });
  if (message === undefined) return refuse('not JSON: not forwarded');
  // JSON-RPC has no batch inside a batch: a server that took one would read it its own way.
  if (Array.isArray(message) && message.some(Array.isArray))
    return refuse('a batch inside a batch is not forwarded');
  if (!mayAct(message)) {
    const rebuilt = asRead(message);
    if (rebuilt === message) return { kind: 'forward', line };
    return hasInexactInteger(rebuilt) ? refuse(INEXACT) : { kind: 'forward', line: JSON.stringify(rebuilt) };
  }
  if (Array.isArray(message))
    return refuse('a batch that asks the server to act is not forwarded: send each request alone');
  const call = isJSONRPCRequest(message) ? readCall(message) : undefined;
  if (!call) return refuse('not a valid JSON-RPC request for its method: not forwarded');
  // Tools and methods share the policy's names: a tool called `resources/read`, or a method
  // called `read_note`, would be judged by another's rule. MCP has neither.
  if (call.method === 'tools/call' ? call.tool.includes('/') : !call.method.includes('/'))
    return refuse('a tool name with "/", or a method without one, would be judged as another: not forwarded');
  if (hasInexactInteger(call.forwarded)) return refuse(INEXACT);
  const inputText = toolInputText(call.input);
  if ('error' in inputText) return refuse(`${inputText.error}: not forwarded`);
  return { kind: 'call', call: { ...call, inputText: inputText.text }, line: JSON.stringify(call.forwarded) };
}

// JSON.parse rounds an integer past 2^53: the server would get another number than was sent.
const INEXACT =
  'a request with an integer beyond 2^53 is not forwarded: it would not reach the server as sent';

/**
 * An unjudged request or notification as the gate read it: its JSON-RPC members and no other, so
 * that no duplicate (`"method"` twice: JSON.parse keeps the last, some parsers the first) or
 * look-alike member reaches the server. An answer to the server is passed as it is.
 */
function asRead(message: unknown): unknown {
  if (Array.isArray(message)) {
    const rebuilt = message.map(asReadAlone);
    return rebuilt.every((each, index) => each === message[index]) ? message : rebuilt;
  }
  return asReadAlone(message);
}

function asReadAlone(message: unknown): unknown {
  if (typeof message !== 'object' || message === null || !('method' in message)) return message;
  const { jsonrpc, id, method, params } = message as Record<string, unknown>;
  return { jsonrpc, id, method, params };
}

/** A request to judge, read by its method's schema; undefined when that schema refuses it. */
function readCall(request: JSONRPCRequest): ReadCall | undefined {
  const envelope = { jsonrpc: '2.0', id: request.id };
  const held = { id: request.id, method: request.method, tool: request.method };
  switch (request.method) {
    case 'tools/call': {
      const parsed = CallToolRequestSchema.safeParse(request);
      if (!parsed.success) return undefined;
      const { name, arguments: args } = parsed.data.params;
      return {
        ...held,
        tool: name,
        input: args ?? {},
        forwarded: { ...envelope, ...shownMetaOnly(parsed.data) },
      };
    }
    case 'resources/read': {
      const parsed = ReadResourceRequestSchema.safeParse(request);
      if (!parsed.success) return undefined;
      const { uri } = parsed.data.params;
      return { ...held, input: { uri }, forwarded: { ...envelope, ...shownMetaOnly(parsed.data) } };
    }
    case 'prompts/get': {
      const parsed = GetPromptRequestSchema.safeParse(request);
      if (!parsed.success) return undefined;
      const { name, arguments: args } = parsed.data.params;
      const input = { name, arguments: args ?? {} };
      return { ...held, input, forwarded: { ...envelope, ...shownMetaOnly(parsed.data) } };
    }
    default:
      // A method this gate does not know: judged by its name, with its parameters as sent.
      return { ...held, input: request.params ?? {}, forwarded: request };
  }
}

/**
 * The request with the only `_meta` member the protocol defines, `progressToken`, which acts on
 * nothing: the server's handler is given the rest of `_meta` too, and no phone shows it
 * (`acme/extra_args: ["--delete-all"]` beside arguments the person approved).
 */
function shownMetaOnly<T extends { params: { _meta?: Record<string, unknown> } }>(request: T): T {
  const { _meta: meta, ...params } = request.params;
  if (meta === undefined) return request;
  return {
    ...request,
    params: 'progressToken' in meta ? { ...params, _meta: { progressToken: meta['progressToken'] } } : params,
  };
}

/**
 * A `method` the server may act on, under any spelling a lenient decoder reads (`Method`,
 * `me_thod`, `method\u0000`), in the message or in its batch.
 */
function mayAct(message: unknown): boolean {
  return (Array.isArray(message) ? message : [message]).some(
    (each) =>
      typeof each === 'object' &&
      each !== null &&
      Object.entries(each).some(
        ([key, value]) => isMethodKey(key) && (key !== 'method' || !isUnjudged(value, each)),
      ),
  );
}

const isMethodKey = (key: string) => key.toLowerCase().replace(/[^a-z]/g, '') === 'method';
/** A request or notification under some spelling of `method`, not an answer to the server. */
const isMethodMessage = (message: unknown) =>
  typeof message === 'object' && message !== null && Object.keys(message).some(isMethodKey);

/** Read without recursion: the nesting is the client's to choose. */
function hasInexactInteger(value: unknown): boolean {
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'number' && Number.isInteger(next) && !Number.isSafeInteger(next)) return true;
    if (typeof next === 'object' && next !== null) for (const each of Object.values(next)) stack.push(each);
  }
  return false;
}

/** The tool's name and input are an agent's text: the daemon cleans them before anyone sees them. */
async function decide(serverName: string, call: HeldCall, cancelled: AbortSignal): Promise<GateAnswer> {
  const tool = `mcp__${serverName}__${call.tool}`;
  return askDaemon(
    () => ({
      agent: 'mcp',
      tool,
      input: call.inputText,
      // The server runs in this folder: a relative path in the input is read from here.
      cwd: currentFolder(),
    }),
    // The client's interface owns the terminal: no prompt there.
    { spinner: false, interactive: false, signal: cancelled },
  );
}
