import { closeSync, openSync } from 'node:fs';

/** Whether this process has a controlling terminal a person could answer on. */
export function canPromptOnTty(): boolean {
  try {
    closeSync(openSync('/dev/tty', 'r+'));
    return true;
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
