import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/lib/relayProcess.ts';
import { launchPhone } from '../support/browserPhone.ts';
import { openPending } from '../support/browserFlows.ts';
import { startPushService } from '../support/pushService.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const state = mkdtempSync(join(tmpdir(), 'latch-start-'));
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  rmSync(state, { recursive: true, force: true });
});

const portIsClosed = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('npm start', () => {
  it('runs relay, app and daemon, shows latch pair’s code, takes a phone and a request, and stops cleanly on Ctrl-C', async () => {
    const port = await freePort();
    const started = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { ...process.env, LATCH_START_STATE: state, LATCH_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    started.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    started.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    cleanups.push(async () => {
      try {
        process.kill(-started.pid!, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    });

    await expect
      .poll(() => /Waiting for your phone/.test(output), { timeout: 90_000, interval: 500 })
      .toBe(true);
    const origin = `http://localhost:${port}`;
    expect(output).toContain(`the phone app:  ${origin}`);
    expect(output).toContain('▀'); // latch pair's QR code
    expect(existsSync(join(state, 'relay.env'))).toBe(true);

    // A person opens the printed link in a browser and pairs it.
    const link = /^(http\S+\/pair#\S+)$/m.exec(output)![1]!;
    const push = await startPushService();
    cleanups.push(() => push.close());
    const phone = await launchPhone(
      origin,
      (await new PushServiceClient(push.url).subscribe()).subscription,
      'start',
    );
    cleanups.push(() => phone.close());
    await phone.page.goto(link);
    await phone.page.getByRole('button', { name: 'Pair with Face ID' }).click();
    await phone.page.getByText(/^Paired with /).waitFor({ timeout: 30_000 });

    // Then asks, as the docs show, and approves on the "phone".
    const demo = { ...process.env, LATCH_HOME: join(state, 'home'), XDG_RUNTIME_DIR: '' };
    const request = spawn(
      process.execPath,
      [join(ROOT, 'daemon/bin/latch.cjs'), 'request', '--title', 'Deploy the site', '--risk', 'low'],
      { env: demo, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let said = '';
    request.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await openPending(phone, origin, /Deploy the site/);
    await phone.page.getByRole('button', { name: 'Approve with Face ID' }).click();
    const code = await new Promise((resolve) => request.once('exit', resolve));
    expect({ code, said }).toEqual({ code: 0, said: 'approved: approved on Browser\n' });

    // Ctrl-C: SIGINT to the terminal's foreground process group.
    process.kill(-started.pid!, 'SIGINT');
    // Everything it started is gone: its process group empties, the relay's port closes.
    await expect
      .poll(
        () => {
          try {
            process.kill(-started.pid!, 0);
            return 'running';
          } catch {
            return 'gone';
          }
        },
        { timeout: 30_000 },
      )
      .toBe('gone');
    expect(await portIsClosed(port)).toBe(true);
    expect(existsSync(join(state, 'home', 'run', 'daemon.sock'))).toBe(false);
  });
});
