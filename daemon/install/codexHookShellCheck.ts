import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Check } from '../output/check.ts';
import { HOOK_FAILSAFE_LINE } from './hookCommand.ts';

const NAME = 'Codex hook shell';

/** How long the shell has to bring Latch's answer: login files that take longer wait on something, or eat the hook's timeout. */
const RUN_FOR_MS = 5000;

/** How much of the shell's stderr the check reads, in characters: far more than the hook's one line. */
const MAX_STDERR = 64 * 1024;

/**
 * Shells that cannot run the hook command as Codex gives it, `$SHELL -lc '<command>'` (exit 1),
 * and why: csh and tcsh refuse `-lc`; a restricted shell refuses a program named by its path,
 * as the hook command's is. Answered by name, without a run.
 */
const CANNOT_RUN_HOOK: Record<string, string> = {
  ...Object.fromEntries(['csh', 'tcsh'].map((shell) => [shell, `${shell} refuses -lc`])),
  ...Object.fromEntries(
    ['rbash', 'rzsh', 'rksh', 'rksh93', 'rmksh'].map((shell) => [
      shell,
      `${shell}, a restricted shell, refuses a program named by its path`,
    ]),
  ),
};

/** The fix when the shell itself cannot run the hook command. */
const SHELL_FIX = 'start Codex with SHELL naming bash, zsh or fish (SHELL=/bin/bash codex)';
/** The fix when the login files keep Latch from answering. */
const LOGIN_FILES_FIX =
  'in your login files, run what replaces or ends the shell, or reads input, only in a terminal ([ -t 0 ] && exec zsh -l, or inside case $- in *i*) … esac); or start Codex with SHELL naming a shell whose login files do none of that';

type NotStarted = { started: false; error: string };
type Ran = NotStarted | { started: true; code: number | null; signal: NodeJS.Signals | null; stderr: string };

/**
 * Runs `command` as Codex runs a hook: `shell -lc`, the input on stdin, no terminal (a session of
 * its own, as Codex's child has none of the person's). The whole process group is killed at the
 * end, so nothing a login file started stays, and at RUN_FOR_MS, so a login file that waits
 * never holds doctor; `code` and `signal` are then null.
 */
function runAsCodex(shell: string, command: string, input: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(shell, ['-lc', command], { detached: true, stdio: ['pipe', 'ignore', 'pipe'], env });
    let exited: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let stderr = '';
    let done = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is already gone
      }
    };
    const finish = (ran: Ran) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      killGroup();
      child.stdin.destroy();
      child.stderr.destroy();
      resolve(ran);
    };
    const timer = setTimeout(() => finish({ started: true, ...exited, stderr }), RUN_FOR_MS);
    child.on('error', (error) => finish({ started: false, error: error.message }));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_STDERR) stderr += chunk;
    });
    // A process the shell left holds stderr open until its group is killed.
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      killGroup();
    });
    child.on('close', () => finish({ started: true, ...exited, stderr }));
    // A shell that never reads its input closes the pipe first: the answer says what happened.
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** What the shell did, when the run did not prove that Latch's hook answered as Codex needs. */
function loginProblem(ran: Exclude<Ran, NotStarted>, marker: string): string | undefined {
  const lines = ran.stderr.split('\n');
  // The hook names the event it was given: only its own reading of this input says Latch answered.
  const answered = lines.some((line) => line.startsWith('latch: ') && line.includes(marker));
  if (answered && ran.code === 2) return undefined;
  const ended =
    ran.code === null && ran.signal === null
      ? `gave no answer within ${RUN_FOR_MS / 1000} s`
      : ran.signal !== null
        ? `was killed by ${ran.signal}`
        : `exited ${ran.code}`;
  if (answered)
    return `ran Latch's hook, whose answer was lost: the shell then ${ended}, not 2 (a trap on exit?), and Codex runs the tool`;
  if (lines.some((line) => line.includes(marker)))
    return `${ended}, and the hook's input came back as a command the shell ran: a login file replaces the shell (exec …?), which read the input as its script; Latch never started, and Codex runs the tool (what a tool's input holds, $(…) included, would run as commands)`;
  if (lines.some((line) => line.startsWith('latch: ') && line !== HOOK_FAILSAFE_LINE))
    return `started Latch without the input Codex sent: a login file read it first, and Latch refused what was left`;
  if (lines.includes(HOOK_FAILSAFE_LINE))
    return `${ended}, with the failsafe's line alone: Latch's hook ended without its answer`;
  if (ran.code === null && ran.signal === null)
    return `${ended}: a login file waits (for a terminal, or input?), and Codex would kill the hook at its timeout and run the tool; or is slow, and spends the time a phone has to answer`;
  if (ran.code === 0)
    return `${ended} before Latch started: a login file ends the shell (exit?), which Codex reads as go on, and runs the tool`;
  if (ran.code === 127)
    return `${ended} before Latch started: a login file replaces the shell (exec …?), and Codex runs the tool`;
  return `${ended} before Latch answered: a login file fails, or replaces the shell (exec tmux?), and Codex runs the tool`;
}

/**
 * Codex runs a hook as `$SHELL -lc '<command>'`, after the login files, and runs the tool on any
 * answer but exit 2 with a reason on stderr (or exit 0: go on). A login file that replaces the
 * shell (`exec zsh`, `exec tmux`), ends it or reads its input means Latch never answers, whatever
 * the shell's name, so the check runs each command as Codex would, with an input the hook refuses
 * without asking the daemon (an event it does not know, named by a marker the hook's refusal
 * repeats), and passes only when that refusal comes back with exit 2. `commands` are Latch's own
 * hook commands, none if the settings hold none doctor may run.
 */
export async function codexHookShellCheck(
  commands: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Check> {
  const shell = env['SHELL'];
  if (!shell) return { name: NAME, ok: true, detail: 'SHELL is not set' };
  const program = shell.split('/').at(-1) ?? '';
  if (Object.hasOwn(CANNOT_RUN_HOOK, program))
    return {
      name: NAME,
      ok: false,
      detail: `Codex runs hooks with ${shell} -lc, which fails (exit 1: ${CANNOT_RUN_HOOK[program]}): Latch never starts, and Codex runs every tool`,
      fix: SHELL_FIX,
    };
  if (commands.length === 0)
    return {
      name: NAME,
      ok: false,
      detail: `not tried: no Codex hook here is the command this Latch writes, and doctor runs no other`,
      fix: 'latch install codex',
    };
  const marker = `latch-doctor-${randomBytes(8).toString('hex')}`;
  const input = `${JSON.stringify({ hook_event_name: marker })}\n`;
  const runs = await Promise.all(commands.map((command) => runAsCodex(shell, command, input, env)));
  const failed = runs.find((ran): ran is NotStarted => !ran.started);
  if (failed)
    return {
      name: NAME,
      ok: false,
      detail: `Codex runs hooks with ${shell} -lc, which cannot be started (${failed.error}): Latch never starts, and Codex runs every tool`,
      fix: SHELL_FIX,
    };
  const problem = runs.map((ran) => (ran.started ? loginProblem(ran, marker) : undefined)).find(Boolean);
  if (problem === undefined)
    return {
      name: NAME,
      ok: true,
      detail: `${shell} -lc runs Latch's hook, which answers (exit 2 to a test input)`,
    };
  return {
    name: NAME,
    ok: false,
    detail: `Codex runs hooks with ${shell} -lc, which ${problem}`,
    fix: LOGIN_FILES_FIX,
  };
}
