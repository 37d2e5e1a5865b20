import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import webpush from 'web-push';
import { defineConfig } from 'vitest/config';

// VAPID keys for the relay under test: real keys, made fresh for each run.
const vapid = webpush.generateVAPIDKeys();

// A timeout is a hang detector, not a speed check (benchmarks measure speed): generous, since
// the whole suite shares two cores in CI and a busy moment must not fail a correct test.
const hangAfter = { testTimeout: 60_000, hookTimeout: 60_000 };

// One run, several runtimes: the protocol's tests run in Node and again inside workerd, to prove
// shared/ runs unchanged in both; the relay's tests run in workerd against the real Worker.
export default defineConfig({
  test: {
    // Once per run, before every project: the run's marker in every process it starts, and, at
    // the end, whatever a test left running stopped (noOrphans.ts); dist/ rebuilt if the sources
    // changed since it was built, since the tests run the built `latch`, relay and app.
    globalSetup: ['tests/support/noOrphans.ts', 'tests/support/freshBuild.ts'],
    projects: [
      {
        test: {
          name: 'node',
          include: [
            'tests/shared/**/*.test.ts',
            'tests/daemon/**/*.test.ts',
            'tests/relay/**/*.node.test.ts',
          ],
          environment: 'node',
          ...hangAfter,
          // Polls wait on spawned daemons and CLIs, which a busy CI moment slows well past
          // vitest's 1 s default: a failure is a hang, not a slow answer.
          expect: { poll: { timeout: 30_000 } },
        },
      },
      {
        plugins: [
          cloudflareTest({
            miniflare: { compatibilityDate: '2026-04-20', compatibilityFlags: ['nodejs_compat'] },
          }),
        ],
        test: {
          name: 'workerd',
          include: ['tests/shared/**/*.test.ts'],
          // *.node.test.ts read files from disk, which a Worker cannot.
          exclude: ['**/*.node.test.ts'],
          ...hangAfter,
        },
      },
      {
        // Real processes and a real browser: the relay in workerd, the daemon, Chromium.
        test: {
          name: 'browser',
          include: ['tests/pwa/**/*.test.ts', 'tests/e2e/**/*.test.ts'],
          environment: 'node',
          // A Chromium found, or installed where the machine allows, before any browser test.
          globalSetup: ['tests/support/browserSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // What a page or a phone should show soon: polled up to a minute, for the same reason.
          expect: { poll: { timeout: 60_000 } },
        },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                VAPID_PUBLIC_KEY: vapid.publicKey,
                VAPID_PRIVATE_KEY: vapid.privateKey,
                VAPID_SUBJECT: 'mailto:relay-tests@latch.test',
                // The push stand-in listens on loopback (relay/push/pushServices.ts).
                PUSH_SERVICE_HOSTS: '127.0.0.1',
                // The billable-event meter's route (tests/relay/billableMeter.test.ts).
                BILLABLE_METER: 'on',
              },
            },
          }),
        ],
        test: {
          name: 'relay',
          include: ['tests/relay/**/*.test.ts'],
          exclude: ['**/*.node.test.ts'],
          globalSetup: ['tests/support/globalSetup.ts'],
          ...hangAfter,
        },
      },
    ],
  },
});
