import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { launchPhone } from '../support/browserPhone.ts';
import { openPending } from '../support/browserFlows.ts';
import {
  afterThisTest,
  cleanUpRuns,
  LATCH,
  launch,
  newRun,
  processesOf,
  signalGroup,
  untilNoneLeft,
  untilRunning,
} from '../support/npmStartRun.ts';
import { startPushService } from '../support/pushService.ts';
import { PushServiceClient } from '../support/pushServiceClient.ts';

afterEach(cleanUpRuns);

describe('npm start', () => {
  it('runs relay, app and daemon, shows latch pair’s code, takes a phone and a request, and stops cleanly on Ctrl-C', async () => {
    const run = await newRun();
    const { job: started, output } = launch(run, 'exec npm start');
    await untilRunning(run, output);
    await expect
      .poll(() => /Waiting for your phone/.test(output()), { timeout: 30_000, interval: 500 })
      .toBe(true);
    const origin = `http://localhost:${run.port}`;
    expect(output()).toContain(`the phone app:  ${origin}`);
    expect(output()).toContain('▀'); // latch pair's QR code
    expect(existsSync(join(run.state, 'relay.env'))).toBe(true);

    // A person opens the printed link in a browser and pairs it.
    const link = /^(http\S+\/pair#\S+)$/m.exec(output())![1]!;
    const push = await startPushService();
    afterThisTest(() => push.close());
    const phone = await launchPhone(
      origin,
      (await new PushServiceClient(push.url).subscribe()).subscription,
      'start',
    );
    afterThisTest(() => phone.close());
    await phone.page.goto(link);
    await phone.page.getByRole('button', { name: 'Pair with Face ID' }).click();
    await phone.page.getByText(/^Paired with /).waitFor({ timeout: 30_000 });

    // Then asks, as the docs show, and approves on the "phone".
    const demo = { ...process.env, LATCH_HOME: join(run.state, 'home'), XDG_RUNTIME_DIR: '' };
    const request = spawn(
      process.execPath,
      [LATCH, 'request', '--title', 'Deploy the site', '--risk', 'low'],
      { env: demo, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let said = '';
    request.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await openPending(phone, origin, /Deploy the site/);
    await phone.page.getByRole('button', { name: 'Approve with Face ID' }).click();
    const code = await new Promise((resolve) => request.once('exit', resolve));
    expect({ code, said }).toEqual({ code: 0, said: 'approved: approved on Browser\n' });

    // Ctrl-C: SIGINT to the terminal's foreground process group. Everything it started is gone:
    // wrangler, workerd, the daemon (and its socket), the relay's port.
    signalGroup(started, 'SIGINT');
    await untilNoneLeft(run);
    expect(existsSync(join(run.state, 'home', 'run', 'daemon.sock'))).toBe(false);
  });

  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)(
    'stops every process it started on %s to its process group behind a pipe, though the pipe’s reader ends first',
    async (signal) => {
      const run = await newRun();
      // `npm start | cat`: the terminal's Ctrl-C (or its hang-up) reaches cat too, which ends at
      // once; start.ts's "stopping…" then meets a closed pipe (EPIPE).
      const { job, output } = launch(run, 'npm start 2>&1 | cat');
      await untilRunning(run, output);

      signalGroup(job, signal);
      await untilNoneLeft(run);
    },
  );

  it.each(['SIGTERM', 'SIGHUP'] as const)(
    'stops every process it started when npm alone gets %s',
    async (signal) => {
      const run = await newRun();
      const { output } = launch(run, 'npm start | cat');
      await untilRunning(run, output);
      // npm passes SIGTERM to its `sh -c` (which dies at once) and dies on SIGHUP: either way the
      // start script never sees the signal, only that what launched it is gone.
      const npm = processesOf(run).find(({ command }) => command === 'npm start');
      expect(npm).toBeDefined();
      process.kill(npm!.pid, signal);
      await untilNoneLeft(run);
    },
  );
});
