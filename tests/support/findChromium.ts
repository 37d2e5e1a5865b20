import { existsSync } from 'node:fs';

/** Where Chrome and Chromium install themselves, on Linux and on macOS. */
const SYSTEM_BROWSERS = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
];

/**
 * The browser the tests drive: `CHROMIUM_PATH` if set (and then only it: a wrong setting is an
 * error, not a reason to pick another), else the first system Chrome or Chromium found.
 * Notifications need a full Chromium; a headless shell from npm reports them denied.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const chosen = env['CHROMIUM_PATH'];
  if (chosen) return existsSync(chosen) ? chosen : undefined;
  return SYSTEM_BROWSERS.find((path) => existsSync(path));
}
