import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** The relay as the package ships it: built by scripts/relay-bundle.ts. */
export function relayBuild(packageRoot: string) {
  const folder = join(packageRoot, 'dist', 'relay');
  return { folder, config: join(folder, 'wrangler.json'), worker: join(folder, 'index.js') };
}

/** A wrangler config, as far as Latch reads it; wrangler reads the rest. */
export interface RelayWranglerConfig {
  name: string;
  main: string;
  assets: { directory: string; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * The wrangler config `latch relay deploy` runs: the package's own (wrangler.toml made JSON at
 * build time, with the same Durable Objects and migrations), with its paths made absolute, since
 * the copy lives in Latch's home and the package may move, and the Worker named as asked.
 * Undefined when the package holds no built relay.
 */
export function relayWranglerConfig(packageRoot: string, name?: string): RelayWranglerConfig | undefined {
  const build = relayBuild(packageRoot);
  if (!existsSync(build.config) || !existsSync(build.worker)) return undefined;
  const config = JSON.parse(readFileSync(build.config, 'utf8')) as RelayWranglerConfig;
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(build.folder, path));
  return {
    ...config,
    ...(name ? { name } : {}),
    main: absolute(config.main),
    assets: { ...config.assets, directory: absolute(config.assets.directory) },
  };
}
