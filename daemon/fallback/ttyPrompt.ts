import { closeSync, openSync, readFileSync } from 'node:fs';

/**
 * Whether this process has a controlling terminal a person could answer on, and may use it now.
 * A process outside the terminal's foreground process group that reads it, or sets its mode, is
 * stopped by the kernel (SIGTTIN, SIGTTOU): a hook whose agent started it in a group of its own,
 * or an agent started with `&`, would wait stopped, never reach its own deadline, and be killed
 * at the agent's timeout, after which the tool runs.
 */
export function canPromptOnTty(): boolean {
  try {
    closeSync(openSync('/dev/tty', 'r+'));
  } catch {
    return false;
  }
  return inTerminalForeground();
}

/**
 * Whether this process's group is its terminal's foreground group, from /proc/self/stat: `pid
 * (comm) state ppid pgrp session tty_nr tpgid …`, the name in parentheses possibly holding both.
 * Without /proc (not Linux) it cannot tell, and says no: the terminal is not asked.
 */
function inTerminalForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const [, , processGroup, , , foregroundGroup] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return processGroup !== undefined && processGroup === foregroundGroup;
  } catch {
    return false;
  }
}

/**
 * Asks on the controlling terminal, /dev/tty, never on stdin: an agent controls a hook's stdin
 * and could answer its own question there. Resolves undefined if nobody answers by `until`.
 */
export async function promptOnTty(lines: string[], until: number): Promise<string | undefined> {
  // Loaded here, not at the top: the hook path, which runs on every tool call, rarely needs them.
  const { createInterface } = await import('node:readline/promises');
  const { ReadStream, WriteStream } = await import('node:tty');
  const fd = openSync('/dev/tty', 'r+');
  const input = new ReadStream(fd);
  const output = new WriteStream(fd);
  const reader = createInterface({ input, output, terminal: true });
  try {
    for (const line of lines.slice(0, -1)) output.write(`${line}\n`);
    return await reader.question(`${lines.at(-1) ?? ''} `, {
      signal: AbortSignal.timeout(Math.max(0, until - Date.now())),
    });
  } catch {
    output.write('\n');
    return undefined;
  } finally {
    reader.close();
    input.destroy();
    output.destroy();
  }
}
