import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandWords } from '../../daemon/policy/commandWords.ts';
import { realPath } from '../../daemon/policy/realPath.ts';
import { wordsTouch } from '../../daemon/policy/wordsTouch.ts';
import {
  home,
  makeProtectedHome,
  places,
  project,
  removeProtectedHome,
  STATE_COPY,
} from '../support/protectedHome.ts';

beforeAll(makeProtectedHome);
afterAll(removeProtectedHome);

/**
 * What the words of a command touch as paths, alone: without the search for Latch's names, which
 * self-protection runs beside it and which would hide a path read from the wrong folder.
 */
function touched(command: string, cwd: string | undefined): string[] {
  const notes: string[] = [];
  const words = commandWords(command.replaceAll('H/', `${home}/`), places.variables).flat();
  wordsTouch(words, cwd, places, realPath, (guard, target) => notes.push(`${guard} ${target}`));
  return [...new Set(notes)].sort();
}

/**
 * ~/.latch named is also the folder above each place in it, which moving it takes away (the
 * verdict is the same `files` guard as for the folder itself).
 */
const ABOVE_ITS_PLACES = [
  'host-key.json',
  'host-token',
  'relay-secrets.json',
  'run',
  'state.db',
  'state.db-shm',
  'state.db-wal',
  STATE_COPY,
  'totp.json',
].map((target) => `files ${target}`);
const latchHomeAnd = (...notes: string[]) => ['files .latch', ...ABOVE_ITS_PLACES, ...notes].sort();

describe('the paths a command’s words touch', () => {
  it('reads a relative word from a folder another word names, only when that is a folder', () => {
    // `ls ~/.latch totp.json` may have cd'd into ~/.latch first; config.toml is a file, so no cd there.
    expect(touched('ls H/.latch totp.json', project)).toEqual(latchHomeAnd('secrets totp.json'));
    expect(touched('cat H/.latch/config.toml ../run', project)).toEqual(['files .latch']);
    expect(touched('cat H/.latch/config.toml/x ../../run', project)).toEqual(['files .latch']);
    expect(touched('cat H/.latch/missing ../run', project)).toEqual(['files .latch']);
    // A folder that touches nothing of Latch's is no base, but two names of a place's are that
    // place wherever the command stands: ../../.latch/run is Latch's socket folder from two below ~.
    expect(touched('ls src ../../.latch/run', project)).toEqual(['files .latch', 'files run']);
  });

  it('notes nothing for a folder above Latch’s places', () => {
    expect(touched('ls H', project)).toEqual([]);
    expect(touched('ls ..', project)).toEqual([]);
  });

  it('still judges absolute paths and project settings where the cwd is unknown', () => {
    expect(touched('rm -rf H/.latch', undefined)).toEqual(latchHomeAnd());
    expect(touched('ls H/.latch totp.json', undefined)).toEqual(latchHomeAnd('secrets totp.json'));
    expect(touched('rm app/.claude/settings.json', undefined)).toEqual(['hooks settings.json']);
    expect(touched('rm .latch/config.toml', undefined)).toEqual(['files .latch']);
    expect(touched('rm dist/config.toml', undefined)).toEqual([]);
  });
});
