import { readFileSync } from 'node:fs';

/** What Latch reads from its own package.json: its version, and the wrangler it is tested with. */
export interface LatchPackage {
  version: string;
  devDependencies?: Record<string, string>;
}

/**
 * The package's root: this module runs as source in `daemon/cli/` or bundled in `dist/latch/`,
 * two levels below it either way (as `daemon/install/hookCommand.ts` finds `latch.cjs`).
 */
export const PACKAGE_ROOT = new URL('../../', import.meta.url);

export function latchPackage(): LatchPackage {
  return JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8')) as LatchPackage;
}
