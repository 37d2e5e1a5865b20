import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

// One run, several runtimes: the protocol's tests run in Node and again inside workerd, to prove
// shared/ runs unchanged in both; the relay's tests run only in workerd.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          include: ['tests/shared/**/*.test.ts', 'tests/daemon/**/*.test.ts'],
          environment: 'node',
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
        },
      },
    ],
  },
});
