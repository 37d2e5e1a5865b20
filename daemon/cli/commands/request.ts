import type { RiskLevel } from '../../../shared/messages/common.ts';
import { askDaemon } from '../../socket/askDaemon.ts';
import { currentFolder } from '../../socket/currentFolder.ts';
import type { AllowedVia, BlockReason, GateAnswer } from '../../socket/localApi.ts';
import { isUnavailable, REQUEST_EXIT } from '../exitCodes.ts';
import { guardWithLastResort } from '../lastResort.ts';
import { printJson } from '../printJson.ts';
import { writeSync } from 'node:fs';

/** `latch request --json`'s one object (docs/daemon.md#for-scripts). */
export type RequestJson =
  | { decision: 'approved'; via: AllowedVia; reason: string; requestId: string | null }
  | {
      decision: 'denied' | 'unavailable';
      /** Null when Latch stopped before any answer (a signal, an internal error). */
      blockReason: BlockReason | null;
      reason: string;
      requestId: string | null;
    };

/** Past `--timeout`, how long the daemon has to say the request expired. */
const GRACE_SECONDS = 10;

/**
 * The answer as a script reads it: the exit code, and what stdout says (as text or JSON). No
 * `answer` is the last resort's: Latch stopped before the daemon gave one.
 */
function verdict(answer: GateAnswer | undefined, reason: string): { code: number; json: RequestJson } {
  const requestId = (answer && 'requestId' in answer && answer.requestId) || null;
  if (answer?.decision === 'allow')
    return {
      code: REQUEST_EXIT.approved,
      json: { decision: 'approved', via: answer.via, reason, requestId },
    };
  const unavailable = !answer || isUnavailable(answer);
  return {
    code: unavailable ? REQUEST_EXIT.unavailable : REQUEST_EXIT.denied,
    json: {
      decision: unavailable ? 'unavailable' : 'denied',
      blockReason: answer?.decision === 'deny' ? answer.blockReason : null,
      reason,
      requestId,
    },
  };
}

export async function run(options: {
  title: string;
  detail?: string;
  risk?: RiskLevel;
  target?: string;
  tool: string;
  timeout?: number;
  json?: boolean;
}): Promise<void> {
  // Synchronous: the last resort may print from an 'exit' handler. False when stdout took none of
  // it (closed, or a full disk).
  const say = ({ json }: ReturnType<typeof verdict>): boolean => {
    try {
      if (options.json) printJson(json);
      else writeSync(1, `${json.decision}: ${json.reason}\n`);
      return true;
    } catch (error) {
      process.stderr.write(`latch: cannot write the answer (${(error as Error).message})\n`);
      return false;
    }
  };
  // A script reads exit 0 as "approved": no path may end there without an approval.
  const guard = guardWithLastResort({
    exitCode: REQUEST_EXIT.unavailable,
    deny: (reason) => say(verdict(undefined, `latch: ${reason}`)),
  });
  const answer = await askDaemon(
    () => ({
      agent: 'latch request',
      tool: options.tool,
      title: options.title,
      ...(options.detail !== undefined ? { detail: options.detail, command: options.detail } : {}),
      ...(options.risk ? { risk: options.risk } : {}),
      ...(options.target ? { target: options.target } : {}),
      ...(options.timeout ? { timeoutSeconds: options.timeout } : {}),
      cwd: currentFolder(),
    }),
    options.timeout ? { deadline: Date.now() + (options.timeout + GRACE_SECONDS) * 1000 } : {},
  );
  guard.answered();
  const answered = verdict(answer, answer.reason);
  // An approval the script could not be told of is not given: it may be reading stdout for it.
  const told = say(answered);
  process.exit(told || answered.code !== REQUEST_EXIT.approved ? answered.code : REQUEST_EXIT.unavailable);
}
