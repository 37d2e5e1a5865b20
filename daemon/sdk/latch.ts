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
  /**
   * The caller gives up: the guard answers `aborted` at once and its function never runs. The
   * request is withdrawn from the phones once every guard joined to it gave up. Too late once the
   * call was allowed and its function started: the guard then answers with what it returned.
   */
  signal?: AbortSignal;
}

/** Why a call did not run. `unavailable`: Latch itself could not decide (see `code`). */
export type GuardReason =
  'aborted' | 'denied' | 'expired' | 'kill_switch' | 'policy_violation' | 'relay_unreachable' | 'unavailable';

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

const REASONS: Partial<Record<BlockReason | 'aborted', GuardReason>> = {
  aborted: 'aborted',
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
  signal?: AbortSignal;
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
    const { timeoutSeconds, tool, risk, title, detail, command, paths, target, session, callId, signal } =
      call;
    if (signal !== undefined && !(signal instanceof AbortSignal))
      return refusal('invalid_request', 'signal must be an AbortSignal');
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
    return { request, input, ...(joinKey ? { joinKey } : {}), ...(signal ? { signal } : {}) };
  } catch (error) {
    // A getter that throws, a Proxy: the call is at fault, not the daemon.
    return refusal('invalid_request', `the call cannot be read: ${(error as Error).message}`);
  }
}

const aborted = () => refusal('aborted', 'the caller gave up before the call was allowed');

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
  signal: AbortSignal,
): Promise<GateAnswer | ReturnType<typeof refusal>> {
  const { timeoutSeconds } = request as { timeoutSeconds?: number };
  try {
    return await gateCall(request, {
      ...(socketPath ? { socketPath } : {}),
      // The caller's own limit, if it gave one: the guard answers by then, whatever happens.
      ...(timeoutSeconds ? { deadline: Date.now() + timeoutSeconds * 1000 + GRACE_MS } : {}),
      // Closing the connection withdraws the request from the phones.
      signal,
    });
  } catch (error) {
    if (signal.aborted) return aborted();
    if (error instanceof InsecurePathError) return refusal('insecure_socket_path', error.message);
    if (error instanceof CallRefusedError) return refusal('invalid_request', error.message);
    if (error instanceof DaemonUnreachableError) return refusal('daemon_unreachable', error.message);
    return refusal('daemon_unreachable', (error as Error).message);
  }
}

/** A guard waiting on a call: the function it would run. */
interface Waiter {
  run: (input: unknown) => unknown;
}

/**
 * One call to the daemon and the guards waiting on it: several when the daemon would join them
 * (same socket, session, call id and content: see gate/callIds), so that one approval runs one
 * function, the first still waiting, not one per caller that asked. The call is given up only
 * once every guard waiting on it was (a guard without a signal never is).
 */
interface SharedCall {
  result: Promise<GuardResult<unknown>>;
  givenUp: AbortController;
  /** In the order they came. */
  waiting: Set<Waiter>;
  /** Allowed, and a function started: past giving up. */
  running: boolean;
}

/** The calls in flight in this process that the daemon would join, by socket and content. */
const inFlight = new Map<string, SharedCall>();

/** A guard's own wait on a shared call: `aborted` at once if its caller gives up first. */
function waitOn<T>(
  shared: SharedCall,
  run: (input: unknown) => T | Promise<T>,
  signal: AbortSignal | undefined,
): Promise<GuardResult<T>> {
  const waiter: Waiter = { run };
  shared.waiting.add(waiter);
  const result = shared.result as Promise<GuardResult<T>>;
  if (!signal) return result;
  return new Promise((resolve, reject) => {
    const giveUp = () => {
      if (shared.running) return;
      shared.waiting.delete(waiter);
      if (shared.waiting.size === 0) shared.givenUp.abort();
      resolve(aborted());
    };
    if (signal.aborted) return giveUp();
    signal.addEventListener('abort', giveUp, { once: true });
    result.then(
      (settled) => {
        signal.removeEventListener('abort', giveUp);
        resolve(settled);
      },
      // The function's own failure, for its caller as without a signal.
      (error: unknown) => {
        signal.removeEventListener('abort', giveUp);
        reject(error);
      },
    );
  });
}

/**
 * A client of the local daemon. It does not fail when the daemon is down: each guarded call
 * then answers `{ ok: false, reason: 'unavailable' }` and runs nothing.
 */
export async function connect(options: { socketPath?: string; agent?: string } = {}): Promise<LatchClient> {
  const agent = options.agent ?? 'sdk';
  const judgeAndRun = async (
    call: Sendable,
    shared: Omit<SharedCall, 'result'>,
  ): Promise<GuardResult<unknown>> => {
    const answer = await decide(call, options.socketPath, shared.givenUp.signal);
    if ('ok' in answer) return answer;
    if (answer.decision !== 'allow') {
      // A defer cannot come back to a caller that offered none; either way, no run.
      return answer.decision === 'deny'
        ? refusal(answer.blockReason, answer.reason)
        : refusal('unavailable', answer.reason);
    }
    const [first] = shared.waiting;
    // Every guard on it gave up as the allow came: nobody wants it run.
    if (!first) return aborted();
    shared.running = true;
    // Frozen only now: V8 writes a frozen object's JSON on a slower path, nested 3,000 deep past
    // the stack. Until now the copy was this guard's alone.
    return { ok: true, value: await first.run(deepFreeze(call.input)) };
  };
  const guard = <T>(call: GuardCall, run: (input: unknown) => T | Promise<T>): Promise<GuardResult<T>> => {
    const sent = sendable(call, agent);
    if ('ok' in sent) return Promise.resolve(sent);
    if (sent.signal?.aborted) return Promise.resolve(aborted());
    const key =
      sent.joinKey === undefined ? undefined : JSON.stringify([options.socketPath ?? '', sent.joinKey]);
    const joined = key === undefined ? undefined : inFlight.get(key);
    if (joined) return waitOn(joined, run, sent.signal);
    const calling = { givenUp: new AbortController(), waiting: new Set<Waiter>(), running: false };
    // Given up by all, or ended, it is no call for a later guard to join.
    const leave = () => key !== undefined && inFlight.get(key) === shared && inFlight.delete(key);
    calling.givenUp.signal.addEventListener('abort', leave, { once: true });
    const shared: SharedCall = Object.assign(calling, { result: judgeAndRun(sent, calling).finally(leave) });
    if (key !== undefined) inFlight.set(key, shared);
    return waitOn(shared, run, sent.signal);
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
