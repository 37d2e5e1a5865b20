import { join } from 'node:path';

/**
 * The `latch` executable the tests run: the repository's own, or, when LATCH_TEST_PACKAGE names
 * an installed package's directory, that package's (scripts/test-other-nodes.ts runs what users install).
 */
export const LATCH_PACKAGE =
  process.env['LATCH_TEST_PACKAGE'] || new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

export const LATCH_BIN = join(LATCH_PACKAGE, 'daemon/bin/latch.cjs');
