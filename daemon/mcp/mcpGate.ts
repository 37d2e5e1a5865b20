import { spawn } from 'node:child_process';
import { basename } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { askDaemon } from '../socket/askDaemon.ts';
import type { GateAnswer } from '../socket/localApi.ts';

/**
 * `latch mcp -- <server…>`: a stdio MCP proxy. It starts the real server and forwards every
 * message both ways, byte for byte, except `tools/call`: each is held until the policy or a
 * phone decides. Allowed, it goes on as it was judged (rebuilt from what was read); refused, the
 * client gets a tool error with the reason, and the server never sees it. What it cannot read
 * whole is refused (judgeMessage). A call the client cancels while it waits is dropped: the
 * server never sees it either, whatever the phone answers later.
 */
export async function runMcpGate(command: string[], options: { name?: string } = {}): Promise<number> {
  const serverName = options.name ?? basename(command[0]!);
  const server = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number>((resolve) =>
    server.once('exit', (code, signal) => resolve(code ?? (signal ? 128 + 15 : 1))),
  );
  server.once('error', (error) => {
    process.stderr.write(`latch mcp: cannot start ${command[0]}: ${error.message}\n`);
    process.exit(127);
  });

  // Server → client: untouched, in whole lines, so that a refusal of ours never lands inside one
  // of the server's messages.
  forwardWholeLines(server.stdout, (bytes) => process.stdout.write(bytes));

  // Client → server: line by line (MCP's stdio framing), held only for tool calls.
  const reply = (message: JSONRPCMessage) => process.stdout.write(serializeMessage(message));
  const undecided = new Map<RequestId, Promise<void>>();
  const cancelled = new Set<RequestId>();
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    const message = readMessage(line);
    const cancelledId = cancelledCall(message);
    if (cancelledId !== undefined && undecided.has(cancelledId)) {
      cancelled.add(cancelledId);
      continue;
    }
    const judged = judgeMessage(message);
    if (judged.kind === 'forward') {
      server.stdin.write(`${line}\n`);
      continue;
    }
    if (judged.kind === 'refuse') {
      // Never forwarded: a server more lenient than this parser could run what it could not read.
      process.stdout.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: judged.id, error: { code: -32600, message: `latch mcp: ${judged.why}` } })}\n`,
      );
      continue;
    }
    const held = judged.call;
    // askDaemon always resolves (a deny for anything that goes wrong); the catch is for the rest.
    const decided = decide(serverName, held)
      .catch((error: unknown): GateAnswer => ({
        decision: 'deny',
        blockReason: 'daemon_unreachable',
        reason: `internal error: ${(error as Error).message}`,
      }))
      .then((answer) => {
        undecided.delete(held.id);
        if (cancelled.delete(held.id)) {
          process.stderr.write(
            `latch mcp: dropped ${held.tool} (call ${held.id}): the client cancelled it\n`,
          );
          return;
        }
        if (answer.decision === 'allow') {
          server.stdin.write(`${JSON.stringify(held.forwarded)}\n`);
          return;
        }
        reply({
          jsonrpc: '2.0',
          id: held.id,
          result: { content: [{ type: 'text', text: `latch: ${answer.reason}` }], isError: true },
        });
      });
    undecided.set(held.id, decided);
  }
  // The client hung up: calls still waiting are answered (or forwarded) before the server's input ends.
  await Promise.all(undecided.values());
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

interface HeldCall {
  id: RequestId;
  tool: string;
  args: Record<string, unknown>;
  /**
   * The call as judged, rebuilt from what the schema read: no member it left out (a `Name` that
   * Go's case-blind decoding would take for `name`), no duplicate, no other spelling.
   */
  forwarded: object;
}

function readMessage(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function cancelledCall(message: unknown): RequestId | undefined {
  if (!isJSONRPCNotification(message) || message.method !== 'notifications/cancelled') return undefined;
  const parsed = CancelledNotificationSchema.safeParse(message);
  return parsed.success ? parsed.data.params.requestId : undefined;
}

type Judged =
  | { kind: 'forward' }
  | { kind: 'refuse'; id: RequestId | null; why: string }
  | { kind: 'call'; call: HeldCall };

/**
 * What to do with a client's message. Only what is surely not a tool call passes unread: a line
 * that is not JSON, a batch holding a call, or a call this parser does not take whole is refused,
 * since a server that reads it more leniently (extra members, NaN, `Method` for `method` in Go)
 * would run it unasked.
 */
function judgeMessage(message: unknown): Judged {
  if (message === undefined) return { kind: 'refuse', id: null, why: 'not JSON: not forwarded' };
  if (Array.isArray(message))
    return mayBeToolCall(message)
      ? { kind: 'refuse', id: null, why: 'a batch with a tools/call is not forwarded: send each call alone' }
      : { kind: 'forward' };
  if (!mayBeToolCall(message)) return { kind: 'forward' };
  const id = (message as { id?: unknown }).id;
  const refuse = (why: string): Judged => ({
    kind: 'refuse',
    id: typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null,
    why,
  });
  const parsed = isJSONRPCRequest(message) ? CallToolRequestSchema.safeParse(message) : undefined;
  if (!parsed?.success) return refuse('a tools/call that is not a valid JSON-RPC request is not forwarded');
  const forwarded = { jsonrpc: '2.0', id: (message as { id: RequestId }).id, ...parsed.data };
  // JSON.parse rounds an integer past 2^53: the server would get another number than was sent.
  if (hasInexactInteger(forwarded))
    return refuse(
      'a tools/call with an integer beyond 2^53 is not forwarded: it would not reach the server as sent',
    );
  const { name, arguments: args } = parsed.data.params;
  return { kind: 'call', call: { id: forwarded.id, tool: name, args: args ?? {}, forwarded } };
}

/** A `method` of "tools/call" under any spelling a lenient decoder takes for it, in any batch. */
function mayBeToolCall(message: unknown): boolean {
  if (Array.isArray(message)) return message.some(mayBeToolCall);
  if (typeof message !== 'object' || message === null) return false;
  return Object.entries(message).some(
    ([key, value]) => key.toLowerCase() === 'method' && value === 'tools/call',
  );
}

function hasInexactInteger(value: unknown): boolean {
  if (typeof value === 'number') return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (typeof value !== 'object' || value === null) return false;
  return Object.values(value).some(hasInexactInteger);
}

/** The tool's name and arguments are an agent's text: the daemon cleans them before anyone sees them. */
async function decide(serverName: string, call: HeldCall): Promise<GateAnswer> {
  const tool = `mcp__${serverName}__${call.tool}`;
  return askDaemon(
    { agent: 'mcp', tool, title: `${serverName}: ${call.tool}`, input: JSON.stringify(call.args, null, 2) },
    // The client's interface owns the terminal: no prompt there.
    { spinner: false, interactive: false },
  );
}
