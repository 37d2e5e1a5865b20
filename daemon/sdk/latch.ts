import { resolve } from 'node:path';
import type { Refusal } from '../../shared/errors.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { CallRefusedError, DaemonUnreachableError } from '../socket/daemonSocket.ts';
import { gateCall } from '../socket/gateClient.ts';
import type { BlockReason, GateAnswer } from '../socket/localApi.ts';
import { InsecurePathError } from '../socket/securePath.ts';
import { wholeCopy } from './wholeCopy.ts';

/**
 * The SDK: a guard for agents built in code. Each guarded call goes through the same daemon, the
 * same policy and the same verified single-use tokens as the hooks.
 *
 *   const latch = await connect();
 *   const result = await latch.guard({ tool: 'deploy', input: { target }, risk: 'high' }, () => deploy(target));
 *   if (!result.ok) console.error(result.reason, result.message);
 */

/** What a guarded call is, as the policy and the phone see it. */
export interface GuardCall {
  tool: string;
  input?: unknown;
  risk?: RiskLevel;
  title?: string;
  detail?: string;
  command?: string;
  paths?: string[];
  /** The folder relative paths in the call are read from: this process's own by default. */
  cwd?: string;
  /** What a person types to approve a critical call. */
  target?: string;
  /**
   * One request per (session, call id): a retry of the same call joins the pending one, and runs
   * nothing of its own. Each at most 256 bytes, without control or invisible characters.
   */
  session?: string;
  callId?: string;
  timeoutSeconds?: number;
}

/** Why a call did not run. `unavailable`: Latch itself could not decide (see `code`). */
export type GuardReason =
  'denied' | 'expired' | 'kill_switch' | 'policy_violation' | 'relay_unreachable' | 'unavailable';

export type GuardResult<T> = { ok: true; value: T } | ({ ok: false; reason: GuardReason } & Refusal);

export interface LatchClient {
  /**
   * Asks, waits, and runs `run` exactly once if, and only if, the call is allowed. `run` is given
   * the call's input as it was sent (JSON read back, frozen): act on it, not on live objects.
   */
  guard<T>(call: GuardCall, run: (input: unknown) => T | Promise<T>): Promise<GuardResult<T>>;
  /**
   * `fn`, guarded: every call of the result asks first. `meta` is given a frozen deep copy of the
   * arguments (structuredClone), and `fn` a copy of that copy, its own to change: what runs is
   * what was described.
   */
  gated<A extends unknown[], T>(
    fn: (...args: A) => T | Promise<T>,
    meta: GuardCall | ((...args: A) => GuardCall),
  ): (...args: A) => Promise<GuardResult<T>>;
}

const REASONS: Partial<Record<BlockReason, GuardReason>> = {
  denied: 'denied',
  expired: 'expired',
  kill_switch: 'kill_switch',
  policy_violation: 'policy_violation',
  relay_unreachable: 'relay_unreachable',
  // A person's no too (docs/security.md#push-fatigue): `code` says which.
  reported: 'denied',
  too_soon: 'denied',
};

function refusal(
  code: string,
  message: string,
): { ok: false; reason: GuardReason; code: string; message: string } {
  return { ok: false, reason: REASONS[code as BlockReason] ?? 'unavailable', code, message };
}

/** Past a call's own timeout, how long the daemon has to say it expired. */
const GRACE_MS = 5000;

/** What is sent, and the input `run` is given: the call read once, its input as the daemon judges it. */
interface Sendable {
  request: Record<string, unknown>;
  input: unknown;
  /** The call's content, ids included, when the daemon would join another with the same: see `inFlight`. */
  joinKey?: string;
}

/**
 * Reads the caller's call once. Its input is written as JSON and read back: the daemon judges,
 * and the phone shows, that text, and `run` is handed the same value, frozen, whatever the
 * caller's objects become during the wait.
 */
function sendable(call: GuardCall, agent: string): Sendable | ReturnType<typeof refusal> {
  // Typed, but a JavaScript caller may pass anything.
  if (typeof call !== 'object' || call === null)
    return refusal('invalid_request', 'a guarded call is an object naming its tool');
  try {
    const { timeoutSeconds, tool, risk, title, detail, command, paths, target, session, callId } = call;
    if (timeoutSeconds !== undefined && !(Number.isSafeInteger(timeoutSeconds) && timeoutSeconds > 0))
      return refusal('invalid_request', 'timeoutSeconds must be a whole number of seconds above 0');
    let cwd: string;
    try {
      cwd = resolve(call.cwd ?? '.');
    } catch {
      return refusal('invalid_request', 'cwd must be a folder, and this process must have one');
    }
    let input: unknown;
    let text: string | undefined;
    try {
      text = JSON.stringify(call.input);
      input = text === undefined ? undefined : JSON.parse(text);
    } catch (error) {
      // A BigInt or a cycle in the input, or a nesting deeper than the stack.
      return refusal('invalid_request', `the call cannot be written as JSON: ${(error as Error).message}`);
    }
    const request = {
      agent,
      tool,
      interactive: false,
      canDefer: false,
      ...(input !== undefined ? { input } : {}),
      ...(risk ? { risk } : {}),
      ...(title ? { title } : {}),
      ...(detail ? { detail } : {}),
      ...(command ? { command } : {}),
      ...(paths ? { paths } : {}),
      cwd,
      ...(target ? { target } : {}),
      ...(session ? { session } : {}),
      ...(callId ? { toolUseId: callId } : {}),
      ...(timeoutSeconds ? { timeoutSeconds } : {}),
    };
    // The input as its text: written again, a deep one could take more stack than it did once.
    const joinKey = session && callId ? JSON.stringify({ ...request, input: text }) : undefined;
    return { request, input, ...(joinKey ? { joinKey } : {}) };
  } catch (error) {
    // A getter that throws, a Proxy: the call is at fault, not the daemon.
    return refusal('invalid_request', `the call cannot be read: ${(error as Error).message}`);
  }
}

/** JSON read back: objects and arrays only, no cycles. Without recursion: the nesting is the caller's. */
function deepFreeze(value: unknown): unknown {
  const stack = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next === 'object' && next !== null)
      for (const each of Object.values(Object.freeze(next))) stack.push(each);
  }
  return value;
}

async function decide(
  { request }: Sendable,
  socketPath: string | undefined,
): Promise<GateAnswer | ReturnType<typeof refusal>> {
  const { timeoutSeconds } = request as { timeoutSeconds?: number };
  try {
    return await gateCall(request, {
      ...(socketPath ? { socketPath } : {}),
      // The caller's own limit, if it gave one: the guard answers by then, whatever happens.
      ...(timeoutSeconds ? { deadline: Date.now() + timeoutSeconds * 1000 + GRACE_MS } : {}),
    });
  } catch (error) {
    if (error instanceof InsecurePathError) return refusal('insecure_socket_path', error.message);
    if (error instanceof CallRefusedError) return refusal('invalid_request', error.message);
    if (error instanceof DaemonUnreachableError) return refusal('daemon_unreachable', error.message);
    return refusal('daemon_unreachable', (error as Error).message);
  }
}

/**
 * The guards in flight in this process that the daemon would join (same socket, session, call id
 * and content: see gate/callIds): a joined one runs nothing and resolves with the first's result,
 * so one approval runs the function once, not once per caller that asked.
 */
const inFlight = new Map<string, Promise<GuardResult<unknown>>>();

/**
 * A client of the local daemon. It does not fail when the daemon is down: each guarded call
 * then answers `{ ok: false, reason: 'unavailable' }` and runs nothing.
 */
export async function connect(options: { socketPath?: string; agent?: string } = {}): Promise<LatchClient> {
  const agent = options.agent ?? 'sdk';
  const judgeAndRun = async <T>(
    call: Sendable,
    run: (input: unknown) => T | Promise<T>,
  ): Promise<GuardResult<T>> => {
    const answer = await decide(call, options.socketPath);
    if ('ok' in answer) return answer;
    if (answer.decision !== 'allow') {
      // A defer cannot come back to a caller that offered none; either way, no run.
      return answer.decision === 'deny'
        ? refusal(answer.blockReason, answer.reason)
        : refusal('unavailable', answer.reason);
    }
    // Frozen only now: V8 writes a frozen object's JSON on a slower path, nested 3,000 deep past
    // the stack. Until now the copy was this guard's alone.
    return { ok: true, value: await run(deepFreeze(call.input)) };
  };
  const guard = <T>(call: GuardCall, run: (input: unknown) => T | Promise<T>): Promise<GuardResult<T>> => {
    const sent = sendable(call, agent);
    if ('ok' in sent) return Promise.resolve(sent);
    if (sent.joinKey === undefined) return judgeAndRun(sent, run);
    const key = JSON.stringify([options.socketPath ?? '', sent.joinKey]);
    const joined = inFlight.get(key);
    if (joined) return joined as Promise<GuardResult<T>>;
    const first = judgeAndRun(sent, run).finally(() => inFlight.delete(key));
    inFlight.set(key, first);
    return first;
  };
  return {
    guard,
    // Async, so that a `meta` that throws rejects like every other failure, and runs nothing.
    gated:
      (fn, meta) =>
      async (...args) => {
        // What is described is what runs: the caller's objects may change during the wait.
        const judged = wholeCopy(args, { frozen: true });
        if ('error' in judged)
          return refusal(
            'invalid_request',
            `the arguments cannot be copied for the phone and the run (${judged.error}): guard a call of them instead`,
          );
        const described = judged.copy;
        return guard(typeof meta === 'function' ? meta(...described) : meta, () => {
          // Copied whole once already: this copy of it cannot fail.
          const run = wholeCopy(described, { frozen: false }) as { copy: typeof described };
          return fn(...run.copy);
        });
      },
  };
}
