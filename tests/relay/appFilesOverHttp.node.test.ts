import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureRelayEnvFile } from '../../scripts/lib/localSecrets.ts';
import { startRelay, type RelayProcess } from '../../scripts/lib/relayProcess.ts';

/**
 * The app's files through the relay as `npm start` runs it (`wrangler dev`), over a raw
 * connection: a body sent where only reading is served gets the relay's own refusal, never a
 * 500 with the runtime's stack trace, and the relay goes on serving.
 */

const persistTo = mkdtempSync(join(tmpdir(), 'latch-relay-'));
let relay: RelayProcess | undefined;
beforeAll(async () => {
  const envFile = join(persistTo, 'relay.env');
  ensureRelayEnvFile(envFile);
  chmodSync(persistTo, 0o755); // as an earlier run, or a umask of 022, may have left it
  relay = await startRelay({ persistTo, envFile });
}, 90_000);
afterAll(async () => {
  await relay?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

/** What the relay answers to `request` with a body of `bodyBytes`, up to its first answer's end. */
async function firstAnswer(request: string, bodyBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(relay!.port, '127.0.0.1');
    let answer = '';
    const done = () => {
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(done, 20_000);
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      const length = /content-length: (\d+)/i.exec(answer);
      const headEnd = answer.indexOf('\r\n\r\n');
      const whole = length
        ? headEnd >= 0 && answer.length >= headEnd + 4 + Number(length[1])
        : answer.endsWith('\r\n0\r\n\r\n');
      if (whole) done();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.write(`${request} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${bodyBytes}\r\n\r\n`);
    socket.write('x'.repeat(bodyBytes));
  });
}

async function stillServing(): Promise<number> {
  const response = await fetch(`${relay!.origin}/v1/config`, { signal: AbortSignal.timeout(20_000) });
  await response.body?.cancel();
  return response.status;
}

describe('a local relay’s storage', () => {
  it('is a folder only its user can enter, whatever mode it was found with', () => {
    expect(statSync(persistTo).mode & 0o777).toBe(0o700);
  });
});

describe('the app’s files, by a local relay', () => {
  it.each(['POST /', 'PUT /index.html', 'DELETE /sw.js'])(
    'refuses %s with a 3 MB body as 405 method_not_allowed, and goes on serving',
    async (request) => {
      const answer = await firstAnswer(request, 3_000_000);
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 405 Method Not Allowed');
      expect(answer.toLowerCase()).toContain('allow: get, head');
      expect(answer).toContain(
        '{"error":{"code":"method_not_allowed","message":"the app\'s files are only read"}}',
      );
      expect(await stillServing()).toBe(200);
    },
  );

  it('serves a GET that carries a body, and goes on serving', async () => {
    const answer = await firstAnswer('GET /', 3_000_000);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(await stillServing()).toBe(200);
  });
});
