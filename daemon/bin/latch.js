#!/usr/bin/env node
// The `latch` executable: runs the daemon's CLI from its bundle, built by `npm install` (prepare).
import { existsSync } from 'node:fs';

const bundle = new URL('../../dist/latch.mjs', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write(
    'latch: the CLI is not built; run `npm install` (or `npm run build`) in the repository\n',
  );
  process.exit(2);
}
await import(bundle.href);
