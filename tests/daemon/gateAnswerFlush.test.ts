import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { serveGateConversation, UnfinishedLines } from '../../daemon/socket/gateConversation.ts';

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.reverse()) cleanup();
  cleanups = [];
});

/** A gate conversation served on a socket of its own, whose answer's reason is `reasonBytes` long. */
async function gateAnswering(reasonBytes: number): Promise<{ path: string; served: Socket[] }> {
  const folder = mkdtempSync(join(tmpdir(), 'latch-flush-'));
  const path = join(folder, 'gate.sock');
  const served: Socket[] = [];
  const server = createServer((connection) => {
    served.push(connection);
    void serveGateConversation(
      connection,
      async () => ({ decision: 'deny', reason: 'x'.repeat(reasonBytes), blockReason: 'denied' }),
      new UnfinishedLines(),
    );
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  cleanups.push(() => {
    for (const connection of served) connection.destroy();
    server.close();
    rmSync(folder, { recursive: true, force: true });
  });
  return { path, served };
}

/** Everything a caller that sends `line`, then reads nothing for `pauseMs`, hears before the end. */
async function readAfterPause(path: string, line: string, pauseMs: number): Promise<string> {
  const caller = createConnection(path);
  cleanups.push(() => caller.destroy());
  caller.pause();
  caller.write(line);
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
  let heard = '';
  caller.setEncoding('utf8');
  caller.on('data', (chunk: string) => (heard += chunk));
  caller.resume();
  await new Promise<void>((resolve) => {
    caller.on('close', () => resolve());
    caller.on('end', () => resolve());
  });
  return heard;
}

it('delivers an answer larger than the socket buffers whole to a caller that reads it late', async () => {
  // 8 MB: far more than a Unix socket's buffers hold, so most of the line waits in the daemon.
  const { path } = await gateAnswering(8 * 1024 * 1024);
  const heard = await readAfterPause(path, '{"tool":"Bash","command":"ls"}\n', 3500);
  expect(heard.endsWith('\n')).toBe(true);
  const answer = JSON.parse(heard) as { answer: { decision: string; reason: string } };
  expect(answer.answer.decision).toBe('deny');
  expect(answer.answer.reason).toHaveLength(8 * 1024 * 1024);
});

it('still closes the connection of a caller that never reads its answer', async () => {
  const { path, served } = await gateAnswering(8 * 1024 * 1024);
  const caller = createConnection(path);
  cleanups.push(() => caller.destroy());
  caller.pause();
  caller.write('{"tool":"Bash","command":"ls"}\n');
  await expect.poll(() => served.length).toBe(1);
  await expect.poll(() => served[0]!.destroyed, { timeout: 40_000, interval: 200 }).toBe(true);
}, 50_000);

it('delivers a long answer whole to a caller that reads it slowly but steadily (review rv10b)', async () => {
  const { path } = await gateAnswering(8 * 1024 * 1024);
  const caller = createConnection(path);
  cleanups.push(() => caller.destroy());
  caller.write('{"tool":"Bash","command":"ls"}\n');
  // 16 KiB every 25 ms: the 8 MiB line takes some 13 s to read, which a daemon cutting callers
  // that do not finish within 10 s cut short (review rv10b).
  const chunks: Buffer[] = [];
  const reading = setInterval(() => {
    const chunk = caller.read(16 * 1024) as Buffer | null;
    if (chunk) chunks.push(chunk);
  }, 25);
  cleanups.push(() => clearInterval(reading));
  await new Promise<void>((resolve) => caller.on('end', resolve).on('close', () => resolve()));
  clearInterval(reading);
  for (let chunk: Buffer | null; (chunk = caller.read() as Buffer | null) !== null;) chunks.push(chunk);
  const answer = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { answer: { reason: string } };
  expect(answer.answer.reason).toHaveLength(8 * 1024 * 1024);
}, 50_000);
