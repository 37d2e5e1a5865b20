import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import type { Verdict } from '../../daemon/policy/policy.ts';
import { protectedPlaces, type ProtectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import {
  SELF_PROTECTION_RULES,
  selfProtection,
  type Guard,
  type ProtectedCall,
} from '../../daemon/policy/selfProtection.ts';

/** The daemon's pid, as the places are told it. */
export const DAEMON_PID = 4242;

/** Node and Latch installed in the home folder, as nvm installs them: the user's to write. */
export const NODE_IN_HOME = '.nvm/versions/node/v20/bin/node';
export const LATCH_IN_HOME = '.nvm/versions/node/v20/lib/node_modules/@latchhq/latch';

/**
 * A user's home with Latch set up in ~/.latch, Node and Latch's program installed by nvm, Claude
 * Code's and Codex's settings, a project with hook settings of its own, and links an agent could
 * have made into Latch's home. Made in a
 * test file's beforeAll: the bindings are live, so its cases can name the folders.
 */
export let root: string;
export let home: string;
export let project: string;
export let places: ProtectedPlaces;

/** The name `latch init --reset` gives the state it moves aside. */
export const STATE_COPY = 'state.db.replaced-2026-12-07T22-00-00-000Z';

export function makeProtectedHome(): void {
  root = mkdtempSync(join(tmpdir(), 'latch-self-protection-'));
  home = join(root, 'home');
  project = join(home, 'project');
  // paths.ts and agentConfigDir read the home folder from the environment, as the daemon does.
  vi.stubEnv('HOME', home);
  const files = {
    '.latch/config.toml': '',
    '.latch/policy.toml': '',
    '.latch/audit.log': '',
    '.latch/totp.json': '{"secret":"x"}',
    '.latch/host-key.json': '{}',
    '.latch/host-token': 'x',
    '.latch/state.db': '',
    // The copy `latch init --reset` keeps, with the old state's key.
    [`.latch/${STATE_COPY}`]: '',
    '.latch/run/.keep': '',
    '.claude/settings.json': '{}',
    '.claude/commands/review.md': '',
    '.codex/hooks.json': '{}',
    'project/README.md': '',
    'project/package.json': '{}',
    'project/src/latch.ts': '',
    'project/.claude/settings.json': '{}',
    [NODE_IN_HOME]: '',
    [`${LATCH_IN_HOME}/daemon/bin/latch.cjs`]: '',
    [`${LATCH_IN_HOME}/dist/latch/hook.cjs`]: '',
    [`${LATCH_IN_HOME}/node_modules/better-sqlite3/lib/index.js`]: '',
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(home, path, '..'), { recursive: true });
    writeFileSync(join(home, path), text);
  }
  symlinkSync(join(home, '.latch/totp.json'), join(project, 'x'));
  // Another name for the same file, which no comparison of paths sees (as a bind mount is).
  linkSync(join(home, '.latch/host-key.json'), join(project, 'key-copy.json'));
  symlinkSync(join(home, '.latch'), join(project, 'conf'));
  symlinkSync(join(home, '.claude/settings.json'), join(project, 'claude-link'));
  // Links to where a file would be: writing through one creates it.
  symlinkSync(join(home, '.latch/state.db-wal'), join(project, 'wal'));
  symlinkSync(join(home, '.latch/policy.toml.new'), join(project, 'new-policy'));
  places = protectedPlaces(
    { HOME: home },
    DAEMON_PID,
    [
      join(home, NODE_IN_HOME),
      ...['daemon/bin/latch.cjs', 'dist/latch', 'node_modules/better-sqlite3'].map((path) =>
        join(home, LATCH_IN_HOME, path),
      ),
    ],
    // The system's places in a folder of the test's, not this machine's: as root, /etc's are guarded.
    join(root, 'system'),
  );
}

export function removeProtectedHome(): void {
  vi.unstubAllEnvs();
  rmSync(root, { recursive: true, force: true });
}

export const expected = (guard: Guard | undefined): Verdict | undefined =>
  guard && {
    action: guard === 'secrets' ? 'deny' : 'ask',
    risk: 'critical',
    rule: SELF_PROTECTION_RULES[guard],
  };

/** What a call is judged to touch, without what the person is shown of it (asserted apart). */
export function judged(
  call: ProtectedCall,
  on: ProtectedPlaces = places,
): Omit<Verdict, 'target' | 'reaches'> | undefined {
  const verdict = selfProtection(call, on);
  if (!verdict) return undefined;
  const { target: _target, reaches: _reaches, ...rest } = verdict;
  return rest;
}

// `H/` in a case stands for the home folder, `P/` for the project: both are made at run time.
const withHome = (text: string) => text.replace(/(?<![\w$])H(?=\/|$)/g, home);
export const at = (path: string) => withHome(path).replace(/^P(?=\/|$)/, project);
export const tool = (name: string, path: string): ProtectedCall => ({
  tool: name,
  paths: [at(path)],
  cwd: project,
});
export const bash = (command: string): ProtectedCall => ({
  tool: 'Bash',
  paths: [],
  command: withHome(command),
  cwd: project,
});
export const mcp = (name: string, input: unknown): ProtectedCall => ({
  tool: name,
  paths: [],
  input: withHome(JSON.stringify(input)),
});
