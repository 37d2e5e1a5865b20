import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SELF_PROTECTION_RULES } from '../../daemon/policy/selfProtection.ts';

/**
 * A bind mount is another name for the same folder, which no comparison of paths sees. Making one
 * needs a mount namespace of one's own: root, or unprivileged user namespaces (`unshare -Urm`).
 */
const UNSHARE = ['-Urm', '-m'].find((flags) => spawnSync('unshare', [flags, 'true']).status === 0);
const root = mkdtempSync(join(tmpdir(), 'latch-bind-mount-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('self-protection through a bind mount of the home folder', () => {
  it.skipIf(UNSHARE === undefined)('sees Latch’s places by what they are, not by their path', () => {
    const home = join(root, 'home');
    const alias = join(root, 'alias');
    for (const [path, text] of Object.entries({
      '.latch/totp.json': '{"secret":"x"}',
      '.latch/policy.toml': '',
      '.claude/settings.json': '{}',
      'project/README.md': '',
    })) {
      mkdirSync(join(home, path, '..'), { recursive: true });
      writeFileSync(join(home, path), text);
    }
    mkdirSync(alias);
    const judge = new URL('../support/bindMountJudge.ts', import.meta.url).pathname;
    const ran = spawnSync(
      'unshare',
      [
        UNSHARE!,
        'sh',
        '-c',
        'mount --bind "$1" "$2" && exec "$3" --import tsx "$4" "$1" "$2"',
        'sh',
        home,
        alias,
        process.execPath,
        judge,
      ],
      { encoding: 'utf8', timeout: 30_000 },
    );
    expect(ran.stderr).toBe('');
    expect(JSON.parse(ran.stdout)).toEqual({
      readSecret: SELF_PROTECTION_RULES.secrets,
      writePolicy: SELF_PROTECTION_RULES.files,
      writeNewFile: SELF_PROTECTION_RULES.files,
      writeHooks: SELF_PROTECTION_RULES.hooks,
      readProject: null,
    });
  });
});
