import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRegularFile } from '../../daemon/config/readRegularFile.ts';
import { writeOwnerOnlyFile } from '../../daemon/config/writeOwnerOnlyFile.ts';

/** Latch's secret files, with a link in their place: a same-user program's, or another user's in a folder left open. */
const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function folderWithALinkedSecret() {
  const folder = mkdtempSync(join(tmpdir(), 'latch-secrets-'));
  folders.push(folder);
  mkdirSync(join(folder, 'home'), { mode: 0o700 });
  const target = join(folder, 'elsewhere');
  writeFileSync(target, 'the user’s own file\n', { mode: 0o666 });
  chmodSync(target, 0o666);
  const secret = join(folder, 'home', 'host-token');
  symlinkSync(target, secret);
  return { secret, target };
}

describe('a secret file with a link in its place', () => {
  it('is written as a file of its own, 0600, and the link’s target keeps its text and mode', () => {
    const { secret, target } = folderWithALinkedSecret();
    const umask = process.umask(0);
    try {
      writeOwnerOnlyFile(secret, 'the token\n');
    } finally {
      process.umask(umask);
    }
    expect(lstatSync(secret).isFile()).toBe(true);
    expect(lstatSync(secret).mode & 0o777).toBe(0o600);
    expect(readFileSync(secret, 'utf8')).toBe('the token\n');
    expect(readFileSync(target, 'utf8')).toBe('the user’s own file\n');
    expect(lstatSync(target).mode & 0o777).toBe(0o666);
  });

  it('is not read through the link', () => {
    const { secret } = folderWithALinkedSecret();
    expect(readRegularFile(secret, { followLinks: false })).toEqual({
      ok: false,
      message: `${secret} is a link`,
    });
    expect(readRegularFile(secret)).toEqual({ ok: true, text: 'the user’s own file\n' });
  });
});
