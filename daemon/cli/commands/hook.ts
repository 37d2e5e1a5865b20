import { fstatSync, readSync } from 'node:fs';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { notSetUp } from '../../config/paths.ts';
import { claudeCodeHookReply, parseClaudeCodeHookInput } from '../../hooks/claudeCode.ts';
import { codexHookReply } from '../../hooks/codex.ts';
import {
  AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS,
  backstopAfterMs,
  daemonDeadlineAfterMs,
  hookStartedAt,
  hookTimeoutFor,
  phoneWaitFor,
} from '../../hooks/hookDeadline.ts';
import { writeStderrLine } from '../../output/stderrLine.ts';
import { writeStdoutWhole } from '../../output/stdoutWhole.ts';
import { agentConfigDir } from '../../install/settingsPath.ts';
import { askDaemon } from '../../socket/askDaemon.ts';
import type { GateAnswer } from '../../socket/localApi.ts';
import { guardWithLastResort } from '../lastResort.ts';
import { parseWholeNumber } from '../wholeNumber.ts';

const MAX_HOOK_INPUT_BYTES = 1024 * 1024;

/** Exit code 2 tells Claude Code and Codex to block the call and show stderr, for every event. */
const BLOCK = 2;

/** While the agent has not written all of its input yet, how often the hook looks again. */
const STDIN_POLL_MS = 5;

/**
 * The hook's input, whole: up to the end of stdin, or, where the agent keeps stdin open (Claude
 * Code and other agents have shipped that bug), up to a whole JSON value with nothing more to
 * read. Read with read(2) rather than through process.stdin, whose stream machinery took every
 * hook process about 3 ms. A pipe or socket is made non-blocking first (a net.Socket on it,
 * never read from, sets O_NONBLOCK): a blocking read that waits on an agent who never writes
 * would hold the event loop, where the backstop's timer runs, until the agent kills the hook
 * and runs the tool.
 */
async function readStdin(): Promise<Buffer> {
  const stdin = fstatSync(0);
  const nonBlocking =
    stdin.isFIFO() || stdin.isSocket() ? new Socket({ fd: 0, readable: false, writable: false }) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  let sizeLookedAt = 0;
  const wholeJson = () => {
    sizeLookedAt = size;
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
      return true;
    } catch {
      return false;
    }
  };
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let read: number;
      try {
        read = readSync(0, buffer, 0, buffer.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        if (size > sizeLookedAt && wholeJson()) break;
        await new Promise((resolve) => setTimeout(resolve, STDIN_POLL_MS));
        continue;
      }
      if (read === 0) break;
      size += read;
      if (size > MAX_HOOK_INPUT_BYTES) throw new Error('the hook input is over 1 MiB');
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    }
  } finally {
    nonBlocking?.destroy();
  }
  return Buffer.concat(chunks);
}

/** The hook's `--timeout`: at most what `latch install` writes for a day's wait, the longest a config allows. */
const HOOK_TIMEOUT = { min: 1, max: hookTimeoutFor(86_400), unit: 'whole seconds' };

/** `--timeout N`: the agent's timeout for this hook, as `latch install` writes it. */
function agentTimeoutSeconds(args: string[]): number | { error: string } {
  if (args.length === 0) return AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS;
  const [flag, value, ...rest] = args;
  const seconds = flag === '--timeout' && rest.length === 0 && parseWholeNumber(value ?? '', HOOK_TIMEOUT);
  if (typeof seconds !== 'number')
    return {
      error: `latch hook takes only --timeout <whole seconds> (from ${HOOK_TIMEOUT.min} to ${HOOK_TIMEOUT.max}), not ${JSON.stringify(args.join(' '))}`,
    };
  return seconds;
}

/**
 * `latch hook claude-code|codex [--timeout N]`: one tool call's answer, on stdout or as exit 2.
 * Whatever happens — bad input, the daemon dying mid-answer, an exception, the agent's timeout
 * drawing near — it ends in an explicit answer, because an agent runs the tool on anything else.
 */
export async function run(): Promise<void> {
  const agent = process.argv[3] === 'codex' ? 'codex' : 'claude-code';
  const timeout = agentTimeoutSeconds(process.argv.slice(4));
  const agentTimeout = typeof timeout === 'number' ? timeout : AGENT_DEFAULT_HOOK_TIMEOUT_SECONDS;
  // The agent's clock started before this process did: every deadline counts from its start.
  const startedAt = hookStartedAt(agentTimeout);
  const guard = guardWithLastResort({
    exitCode: BLOCK,
    deny: (reason) => writeStderrLine(`latch: ${reason}`),
    deadlineMs: Math.max(0, startedAt + backstopAfterMs(agentTimeout) - Date.now()),
  });
  const block = (reason: string): never => {
    guard.answered();
    writeStderrLine(`latch: ${reason}`);
    process.exit(BLOCK);
  };
  if (typeof timeout !== 'number') block(timeout.error);

  let text: string;
  try {
    // Not UTF-8 is refused, not repaired: the policy must see the bytes that would run.
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readStdin());
  } catch (error) {
    block(error instanceof TypeError ? 'the hook input is not UTF-8' : (error as Error).message);
  }
  const input = parseClaudeCodeHookInput(text!);
  if ('error' in input) block(input.error);
  const { question, event } = input as Exclude<typeof input, { error: string }>;
  const setUpProblem = notSetUp();
  const answer: GateAnswer = !setUpProblem
    ? await askDaemon(
        // The daemon's own expiry comes first, with time left to print it.
        {
          ...question,
          agent,
          // The agent's environment, not the daemon's, says where its hook settings are.
          agentConfigDir: resolve(agentConfigDir(agent, process.env)),
          timeoutSeconds: Math.min(
            question.timeoutSeconds ?? Infinity,
            Math.max(1, Math.floor(phoneWaitFor(agentTimeout) - (Date.now() - startedAt) / 1000)),
          ),
        },
        { deadline: startedAt + daemonDeadlineAfterMs(agentTimeout) },
      )
    : {
        decision: 'deny',
        blockReason: 'config_missing',
        reason: `config_missing: ${setUpProblem}`,
      };
  const reply = agent === 'codex' ? codexHookReply(event, answer) : claudeCodeHookReply(event, answer);
  if ('block' in reply) block(reply.block);
  // Written whole before the guard stands down: a write that fails ends in its deny (exit 2).
  if ('stdout' in reply && reply.stdout) await writeStdoutWhole(`${JSON.stringify(reply.stdout)}\n`);
  guard.answered();
  process.exit(0);
}
