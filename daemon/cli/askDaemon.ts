import { canPromptOnTty, promptOnTty } from '../fallback/ttyPrompt.ts';
import { callDaemon, DaemonUnreachableError, gateCall } from '../socket/daemonClient.ts';
import type { GateAnswer, GateRequest } from '../socket/localApi.ts';
import { InsecurePathError } from '../socket/securePath.ts';
import { startSpinner } from './spinner.ts';

export type GateQuestion = Partial<Omit<GateRequest, 'interactive'>> & Pick<GateRequest, 'tool'>;

/**
 * A client's whole conversation with the daemon for one call: ask, show the countdown, run the
 * terminal fallback if the daemon offers one. Whatever goes wrong is a deny with its reason.
 */
export async function askDaemon(
  question: GateQuestion,
  options: { socketPath?: string; spinner?: boolean; interactive?: boolean } = {},
): Promise<GateAnswer> {
  const interactive = options.interactive ?? canPromptOnTty();
  let stopSpinner = () => {};
  try {
    const answer = await gateCall<GateAnswer>(
      { ...question, interactive },
      {
        ...(options.socketPath ? { socketPath: options.socketPath } : {}),
        onPending: ({ requestId, exp }) => {
          if (options.spinner !== false) stopSpinner = startSpinner(requestId, exp);
        },
      },
    );
    stopSpinner();
    if (answer.decision !== 'fallback') return answer;
    const typed = await promptOnTty([
      `latch: ${answer.reason}`,
      `latch: ${question.title ?? question.command ?? question.tool}`,
      answer.prompt,
    ]);
    return await callDaemon<GateAnswer>(
      'POST',
      '/v1/fallback',
      { requestId: answer.requestId, answer: typed },
      options.socketPath ? { socketPath: options.socketPath } : {},
    );
  } catch (error) {
    stopSpinner();
    if (error instanceof InsecurePathError)
      return {
        decision: 'deny',
        blockReason: 'insecure_socket_path',
        reason: `insecure_socket_path: ${error.message}`,
      };
    if (error instanceof DaemonUnreachableError)
      return {
        decision: 'deny',
        blockReason: 'daemon_unreachable',
        reason: `daemon_unreachable: ${error.message}`,
      };
    return {
      decision: 'deny',
      blockReason: 'daemon_unreachable',
      reason: `daemon_unreachable: ${(error as Error).message}`,
    };
  }
}
