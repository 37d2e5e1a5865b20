import { dirname, join } from 'node:path';
import { codeLoadingVariable, nodeOptionsLoadCode } from './loadedCode.ts';
import {
  NOTHING_RUNS,
  NPM_CODE_SETTINGS,
  NPM_PLACE_SETTINGS,
  type Named,
  type SettingsFile,
} from './scriptNames.ts';

/**
 * The files of settings a package runner reads beside a project, which may make a script the
 * phone is shown run otherwise: another shell for it (`.npmrc`'s `script-shell`), Node's options,
 * variables that load code or pick programs (yarn's `.env.yarn`, bun's `.env`), other settings
 * files, another package's folder. Code a runner loads itself (yarn's `yarnPath`, pnpm's
 * `.pnpmfile.cjs`, bun's `preload`) is, like a script's imports, not read. Files of settings are
 * looked for in the package's folder and each above it, and in the home folder (the user's own);
 * environment files where the runner runs and in the package's folder.
 */
const SETTINGS_FILES: Record<string, { above: readonly string[]; environment: readonly string[] }> = {
  npm: { above: ['.npmrc'], environment: [] },
  pnpm: { above: ['.npmrc'], environment: [] },
  yarn: { above: ['.npmrc', '.yarnrc', '.yarnrc.yml'], environment: ['.env.yarn'] },
  bun: {
    above: [],
    environment: ['', '.local', '.development', '.development.local', '.production', '.production.local']
      .concat(['.test', '.test.local'])
      .map((suffix) => `.env${suffix}`),
  },
};
const SETTINGS_OF_FILE: Record<string, SettingsFile> = {
  '.npmrc': 'npmrc',
  '.yarnrc': 'yarnrc',
  '.yarnrc.yml': 'yarnrc.yml',
};

/** The settings files `runner` may read for the scripts of the package.json at `packageJson`, run from `runFolder`. */
export function runnerSettingsFiles(
  runner: string,
  packageJson: string,
  runFolder: string,
  home: string | undefined,
): Named[] {
  const files = SETTINGS_FILES[runner];
  if (files === undefined) return [];
  const folders: string[] = [];
  for (let folder = dirname(packageJson); ; folder = dirname(folder)) {
    folders.push(folder);
    if (dirname(folder) === folder) break;
  }
  if (home !== undefined && !folders.includes(home)) folders.push(home);
  const settingsFile = (path: string, settings: SettingsFile): Named => ({
    path,
    shell: false,
    ifFound: true,
    settings,
  });
  return [
    ...folders.flatMap((folder) =>
      files.above.map((file) => settingsFile(join(folder, file), SETTINGS_OF_FILE[file]!)),
    ),
    ...[...new Set([runFolder, dirname(packageJson)])].flatMap((folder) =>
      files.environment.map((file) => settingsFile(join(folder, file), 'environment')),
    ),
  ];
}

/**
 * `.npmrc` keys, any case and `_` for `-` as npm reads them, that change what runs or where:
 * `prefix` there moves global packages only (`npm config set prefix ~/.npm-global`).
 */
const NPM_KEYS_RUNNING_CODE = new Set([
  ...NPM_CODE_SETTINGS,
  ...NPM_PLACE_SETTINGS.filter((setting) => setting !== 'prefix'),
]);
/** yarn 1's options in `.yarnrc` that change where or how its scripts run. */
const YARNRC_RUNNING_CODE = /^\s*["']?(script-shell|--(cwd|use-yarnrc|modules-folder|script-shell))\b/;

/**
 * What in a file of settings makes code run that Latch does not read, said unread; else
 * NOTHING_RUNS. Its text is never shown: such files hold secrets (an `.npmrc`'s tokens).
 */
export function settingsRunningCode(
  settings: SettingsFile,
  read: { text?: string; unread?: string },
): { text?: string; unread?: string } {
  if (read.text === undefined) return { unread: read.unread! };
  const found = settingFound(settings, read.text);
  return found === undefined
    ? { unread: NOTHING_RUNS }
    : { unread: `it sets ${found}, whose code Latch does not read` };
}

function settingFound(settings: SettingsFile, text: string): string | undefined {
  if (settings === 'environment') return codeLoadingVariable(text);
  const lines = text.split(/\r\n|\r|\n/);
  if (settings === 'npmrc')
    for (const line of lines) {
      const [, written, value = ''] =
        /^\s*["']?([^=\s"'[\]]+)["']?(?:\[\])?\s*(?:=\s*(.*))?$/s.exec(line) ?? [];
      const key = written?.toLowerCase().replaceAll('_', '-').split(':')[0];
      // npm expands `${VAR}` in a key too: what it names is known only when npm runs.
      if (key === undefined || key.startsWith(';') || key.startsWith('#')) continue;
      if (key.includes('${')) return written;
      if (NPM_KEYS_RUNNING_CODE.has(key) && (key !== 'node-options' || nodeOptionsLoadCode(value)))
        return key;
    }
  // yarn 1's `.yarnrc`: its shell for scripts, and options given to every command (`--cwd x`).
  if (settings === 'yarnrc') return lines.map((line) => YARNRC_RUNNING_CODE.exec(line)?.[1]).find(Boolean);
  // yarn 2's `.yarnrc.yml` names the environment files it loads into scripts; an escape may
  // spell that name.
  if (settings === 'yarnrc.yml')
    return /injectEnvironmentFiles|\\[xuU]/i.test(text) ? 'injectEnvironmentFiles' : undefined;
  return undefined;
}
