import { canPromptOnTty, promptOnTty } from '../fallback/ttyPrompt.ts';
import { CallRefusedError, DaemonUnreachableError } from './daemonSocket.ts';
import { gateCall } from './gateClient.ts';
import type { GateAnswer, GateRequest } from './localApi.ts';
import { InsecurePathError } from './securePath.ts';
import { startSpinner } from './spinner.ts';

export type GateQuestion = Partial<Omit<GateRequest, 'interactive'>> & Pick<GateRequest, 'tool'>;

export interface AskOptions {
  socketPath?: string;
  spinner?: boolean;
  interactive?: boolean;
  /** The moment (ms since the epoch) by which the caller must have an answer. */
  deadline?: number;
  /** Ends the call: the daemon withdraws its request (gateClient's GateConversation). */
  signal?: AbortSignal;
}

/**
 * A client's whole conversation with the daemon for one call: ask, show the countdown, answer a
 * terminal fallback if the daemon offers one. Always resolves, with a deny and its reason for
 * whatever goes wrong: it never throws and never waits past its deadline. A question given as a
 * function is built here, so a call that cannot be built (currentFolder) is denied like one the
 * daemon refused.
 */
export async function askDaemon(
  ask: GateQuestion | (() => GateQuestion),
  options: AskOptions = {},
): Promise<GateAnswer> {
  const interactive = options.interactive ?? canPromptOnTty();
  let stopSpinner = () => {};
  try {
    const question = typeof ask === 'function' ? ask() : ask;
    return await gateCall(
      { ...question, interactive },
      {
        ...(options.socketPath ? { socketPath: options.socketPath } : {}),
        ...(options.deadline ? { deadline: options.deadline } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        onPending: ({ requestId, exp }) => {
          if (options.spinner !== false) stopSpinner = startSpinner(requestId, exp);
        },
        onFallback: async (offer) => {
          stopSpinner();
          if (!interactive) return undefined;
          return promptOnTty(
            [
              `latch: ${offer.reason}`,
              `latch: ${question.title ?? question.command ?? question.tool}`,
              offer.prompt,
            ],
            Math.min(offer.exp, options.deadline ?? Infinity),
          );
        },
      },
    );
  } catch (error) {
    if (error instanceof InsecurePathError)
      return {
        decision: 'deny',
        blockReason: 'insecure_socket_path',
        reason: `insecure_socket_path: ${error.message}`,
      };
    if (error instanceof CallRefusedError)
      return {
        decision: 'deny',
        blockReason: 'invalid_request',
        reason: `invalid_request: ${error.message}`,
      };
    const why =
      error instanceof DaemonUnreachableError ? error.message : `internal error: ${(error as Error).message}`;
    return { decision: 'deny', blockReason: 'daemon_unreachable', reason: `daemon_unreachable: ${why}` };
  } finally {
    stopSpinner();
  }
}
