import { resolve } from 'node:path';
import type { Refusal } from '../../shared/errors.ts';
import type { RiskLevel } from '../../shared/messages/common.ts';
import { CallRefusedError, DaemonUnreachableError } from '../socket/daemonSocket.ts';
import { gateCall } from '../socket/gateClient.ts';
import type { BlockReason, GateAnswer } from '../socket/localApi.ts';
import { InsecurePathError } from '../socket/securePath.ts';

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
  /** One request per (session, call id): a retry of the same call joins the pending one. */
  session?: string;
  callId?: string;
  timeoutSeconds?: number;
}

/** Why a call did not run. `unavailable`: Latch itself could not decide (see `code`). */
export type GuardReason =
  'denied' | 'expired' | 'kill_switch' | 'policy_violation' | 'relay_unreachable' | 'unavailable';

export type GuardResult<T> = { ok: true; value: T } | ({ ok: false; reason: GuardReason } & Refusal);

export interface LatchClient {
  /** Asks, waits, and runs `run` exactly once if, and only if, the call is allowed. */
  guard<T>(call: GuardCall, run: () => T | Promise<T>): Promise<GuardResult<T>>;
  /** `fn`, guarded: every call of the result asks first. */
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

async function decide(
  call: GuardCall,
  agent: string,
  socketPath: string | undefined,
): Promise<GateAnswer | ReturnType<typeof refusal>> {
  // Typed, but a JavaScript caller may pass anything.
  if (typeof call !== 'object' || call === null)
    return refusal('invalid_request', 'a guarded call is an object naming its tool');
  const { timeoutSeconds } = call;
  if (timeoutSeconds !== undefined && !(Number.isSafeInteger(timeoutSeconds) && timeoutSeconds > 0))
    return refusal('invalid_request', 'timeoutSeconds must be a whole number of seconds above 0');
  let cwd: string;
  try {
    cwd = resolve(call.cwd ?? '.');
  } catch {
    return refusal('invalid_request', 'cwd must be a folder, and this process must have one');
  }
  try {
    return await gateCall(
      {
        agent,
        tool: call.tool,
        interactive: false,
        canDefer: false,
        ...(call.input !== undefined ? { input: call.input } : {}),
        ...(call.risk ? { risk: call.risk } : {}),
        ...(call.title ? { title: call.title } : {}),
        ...(call.detail ? { detail: call.detail } : {}),
        ...(call.command ? { command: call.command } : {}),
        ...(call.paths ? { paths: call.paths } : {}),
        cwd,
        ...(call.target ? { target: call.target } : {}),
        ...(call.session ? { session: call.session } : {}),
        ...(call.callId ? { toolUseId: call.callId } : {}),
        ...(call.timeoutSeconds ? { timeoutSeconds: call.timeoutSeconds } : {}),
      },
      {
        ...(socketPath ? { socketPath } : {}),
        // The caller's own limit, if it gave one: the guard answers by then, whatever happens.
        ...(call.timeoutSeconds ? { deadline: Date.now() + call.timeoutSeconds * 1000 + GRACE_MS } : {}),
      },
    );
  } catch (error) {
    if (error instanceof InsecurePathError) return refusal('insecure_socket_path', error.message);
    if (error instanceof CallRefusedError) return refusal('invalid_request', error.message);
    if (error instanceof DaemonUnreachableError) return refusal('daemon_unreachable', error.message);
    return refusal('daemon_unreachable', (error as Error).message);
  }
}

/**
 * A client of the local daemon. It does not fail when the daemon is down: each guarded call
 * then answers `{ ok: false, reason: 'unavailable' }` and runs nothing.
 */
export async function connect(options: { socketPath?: string; agent?: string } = {}): Promise<LatchClient> {
  const agent = options.agent ?? 'sdk';
  const guard = async <T>(call: GuardCall, run: () => T | Promise<T>): Promise<GuardResult<T>> => {
    const answer = await decide(call, agent, options.socketPath);
    if ('ok' in answer) return answer;
    if (answer.decision !== 'allow') {
      // A defer cannot come back to a caller that offered none; either way, no run.
      return answer.decision === 'deny'
        ? refusal(answer.blockReason, answer.reason)
        : refusal('unavailable', answer.reason);
    }
    return { ok: true, value: await run() };
  };
  return {
    guard,
    // Async, so that a `meta` that throws rejects like every other failure, and runs nothing.
    gated:
      (fn, meta) =>
      async (...args) =>
        guard(typeof meta === 'function' ? meta(...args) : meta, () => fn(...args)),
  };
}
