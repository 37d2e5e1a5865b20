import { gateCall } from '../daemon/socket/gateClient.ts';
import { decidePendingAtRelay } from '../tests/support/phoneAtRelay.ts';
import { shippedJs, PWA_BUDGET_BYTES } from '../scripts/pwa-budget.ts';
import { pairBrowserPhone } from '../tests/support/browserFlows.ts';
import type { BenchEnvironment } from './environment.ts';
import { median, ms, percentile, type BenchRow } from './stats.ts';

/**
 * The app: its gzipped JavaScript, and the time from a notification click (a cold page opening
 * the request's URL) to the request screen being interactive (Approve enabled), in headless
 * Chromium with a virtual authenticator. Baseline: the same cold page loading a static file.
 */
export async function pwaStartup(env: BenchEnvironment, samples: number): Promise<BenchRow[]> {
  const total = shippedJs().reduce((sum, { gzipped }) => sum + gzipped, 0);
  const sizeRow: BenchRow = {
    name: 'PWA JavaScript',
    figure: `${(total / 1024).toFixed(1)} KB gzipped`,
    baseline: shippedJs()
      .map(({ file, gzipped }) => `${file} ${(gzipped / 1024).toFixed(1)}`)
      .join(', '),
    goal: `≤ ${PWA_BUDGET_BYTES / 1024} KB gzipped`,
    met: total <= PWA_BUDGET_BYTES,
    data: { gzippedBytes: total },
  };

  const paired = await pairBrowserPhone(env.machine, env.origin, env.push, 'Bench browser', {
    approve: async () => {
      await decidePendingAtRelay(
        env.driver,
        env.phone,
        env.fleet,
        (details) => details.tool === 'latch.phone',
      );
    },
  });
  const open: number[] = [];
  const bare: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      let requestId = '';
      const asked = new Promise<void>((resolve) => {
        void gateCall(
          { agent: 'bench', tool: 'bench', title: `cold ${i}`, interactive: false, canDefer: false },
          {
            socketPath: env.machine.socket,
            onPending: (pending) => {
              requestId = pending.requestId;
              resolve();
            },
          },
        );
      });
      await asked;
      // A cold page: a fresh document (the virtual authenticator belongs to this tab).
      const page = paired.browser.page;
      await page.goto('about:blank');
      const start = performance.now();
      await page.goto(
        `${env.origin}/requests/${encodeURIComponent(env.fleet)}/${encodeURIComponent(requestId)}`,
      );
      const approve = page.getByRole('button', { name: 'Approve with Face ID' });
      await approve.waitFor({ state: 'visible' });
      while (await approve.isDisabled()) await new Promise((resolve) => setTimeout(resolve, 5));
      open.push(performance.now() - start);
      await approve.click();
      await page.getByRole('status').getByText('Approval sent').waitFor();

      await page.goto('about:blank');
      const blankStart = performance.now();
      await page.goto(`${env.origin}/manifest.webmanifest`);
      bare.push(performance.now() - blankStart);
    }
  } finally {
    await paired.browser.close();
  }
  return [
    sizeRow,
    {
      name: 'notification click → interactive',
      figure: `median ${ms(median(open))}, max ${ms(percentile(open, 100))}`,
      baseline: `cold page, static file: median ${ms(median(bare))}`,
      goal: '≤ 500 ms',
      met: percentile(open, 100) <= 500,
      data: {
        samples: open.length,
        median: median(open),
        max: percentile(open, 100),
        bareMedian: median(bare),
      },
    },
  ];
}
