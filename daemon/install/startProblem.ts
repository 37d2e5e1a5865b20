import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { HOOK_FAILSAFE, HOOK_LAUNCHER, hookEnvironment } from './hookCommand.ts';
import type { LatchHookCommand } from './parseHookCommand.ts';

function fileProblem(path: string, mode: number, what: string): string | undefined {
  if (!isAbsolute(path))
    return `${path} is a relative path: it depends on the folder the agent runs hooks in`;
  try {
    if (!statSync(path).isFile()) return `${path} is not ${what}`;
    accessSync(path, mode);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
      ? `${path} does not exist`
      : `${path} is not ${what}`;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  return (env['PATH'] ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((folder) => join(folder, name))
    .find((path) => fileProblem(path, constants.X_OK, 'an executable file') === undefined);
}

/**
 * Why Latch's hook would not start when the agent runs it, or undefined. An agent runs the tool
 * when its hook cannot start (exit 127 for a missing program), so each part must be in place:
 * the executable (a Node that moved after an upgrade is the usual fault), the script it runs,
 * the failsafe that blocks when the hook dies where it cannot answer, the launcher that lets
 * the failsafe run in every shell, and the environment it fixes for the hook (hookEnvironment).
 * A bare name depends on the agent's PATH, which is not this shell's: npx adds to it, and a
 * desktop launcher starts with a shorter one.
 */
export function startProblem(
  hook: LatchHookCommand,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!hook.plain) return 'it uses shell syntax, which latch doctor cannot follow';
  const { program } = hook;
  const executable = program[0]!;
  if (!executable.includes('/')) {
    const found = onPath(executable, env);
    return found
      ? `${executable} is found through PATH (${found} here), and an agent's PATH can differ`
      : `${executable} is not on PATH: the agent would get exit 127 and run the tool`;
  }
  const script = program.length > 1 ? program.at(-1) : undefined;
  // What stands between them runs too (another env with its own NODE_OPTIONS=, an option of Node's).
  if (program.length > 2)
    return `it runs ${program.slice(1, -1).join(' ')} between ${executable} and ${script}, which latch install never writes`;
  return (
    fileProblem(executable, constants.X_OK, 'an executable file') ??
    (script?.includes('/') ? fileProblem(script, constants.R_OK, 'a readable file') : undefined) ??
    (hook.failsafe
      ? undefined
      : `it does not end in ${HOOK_FAILSAFE}: a hook killed or out of memory before it answers lets the agent run the tool`) ??
    (hook.launched
      ? undefined
      : `it does not start with ${HOOK_LAUNCHER}: under fish, a Node gone after an upgrade skips the failsafe, and the agent runs the tool`) ??
    environmentProblem(hook.environment, env)
  );
}

function environmentProblem(words: string[], env: NodeJS.ProcessEnv): string | undefined {
  const fixed = hookEnvironment(env);
  if (words.join('\0') === fixed.join('\0')) return undefined;
  return `it does not fix the hook's environment as this Latch needs (${fixed.join(' ')}): an agent started in another one could point the hook at another socket, or load code into it`;
}
