import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedPlaces, type ProtectedPlaces } from '../../daemon/policy/protectedPlaces.ts';
import type { Guard, ProtectedCall } from '../../daemon/policy/selfProtection.ts';
import {
  DAEMON_PID,
  bash,
  expected,
  home,
  judged,
  makeProtectedHome,
  removeProtectedHome,
  root,
  tool,
} from '../support/protectedHome.ts';

beforeAll(makeProtectedHome);
afterAll(removeProtectedHome);

describe('self-protection: where the environment puts Latch', () => {
  let custom: ProtectedPlaces;
  let data: string;
  let runtime: string;
  beforeAll(() => {
    data = join(root, 'srv', 'latch-data');
    runtime = join(root, 'run');
    mkdirSync(join(runtime, 'latch'), { recursive: true });
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'totp.json'), '{}');
    custom = protectedPlaces(
      {
        HOME: home,
        LATCH_HOME: data,
        XDG_RUNTIME_DIR: runtime,
        CLAUDE_CONFIG_DIR: join(root, 'claude-config'),
      },
      DAEMON_PID,
    );
  });

  it.each<[string, () => ProtectedCall, Guard | undefined]>([
    ['Read of the secret in a custom LATCH_HOME', () => tool('Read', `${data}/totp.json`), 'secrets'],
    ['Read of ~/.latch/totp.json, no longer Latch’s', () => tool('Read', 'H/.latch/totp.json'), undefined],
    [
      'a command naming the custom home’s folder',
      () => bash(`cd ${join(root, 'srv')} && rm -rf latch-data`),
      'files',
    ],
    ['a command naming it by name alone', () => bash('tar czf /tmp/x.tgz latch-data'), 'files'],
    ['the socket in XDG_RUNTIME_DIR', () => bash('rm $XDG_RUNTIME_DIR/latch/daemon.sock'), 'files'],
    ['the socket’s folder, from a cd', () => bash(`cd ${runtime} && rm -r latch`), 'files'],
    ['Write in the socket’s folder', () => tool('Write', `${runtime}/latch/x`), 'files'],
    [
      'Edit of CLAUDE_CONFIG_DIR’s settings',
      () => tool('Edit', `${root}/claude-config/settings.json`),
      'hooks',
    ],
    [
      'a command through $CLAUDE_CONFIG_DIR',
      () => bash('echo {} > "$CLAUDE_CONFIG_DIR/settings.json"'),
      'hooks',
    ],
  ])('%s', (_name, call, guard) => {
    expect(judged(call(), custom)).toEqual(expected(guard));
  });
});
