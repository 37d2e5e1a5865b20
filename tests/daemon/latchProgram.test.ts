import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latchProgram } from '../../daemon/policy/latchProgram.ts';
import { initMachine, newMachine, startDaemonForTest } from '../support/latchMachine.ts';
import { StandInRelay } from '../support/standInRelay.ts';

const REPOSITORY = realpathSync(join(import.meta.dirname, '..', '..'));
const DAEMON_BUNDLE = join(REPOSITORY, 'dist', 'latch', 'daemon.cjs');

let relay: StandInRelay;
beforeAll(async () => {
  relay = await StandInRelay.start();
});
afterAll(async () => {
  await relay.stop();
});

describe('what runs as Latch', () => {
  it('names the node binary, latch.cjs and the bundles the hook command runs', () => {
    const program = latchProgram();
    expect(program.slice(0, 3)).toEqual([
      process.execPath,
      join(REPOSITORY, 'daemon', 'bin', 'latch.cjs'),
      join(REPOSITORY, 'dist', 'latch'),
    ]);
  });

  it('names every folder Node looks in for a package before the one it is found in', () => {
    const program = latchProgram();
    // A better-sqlite3 planted here would be loaded in place of node_modules' own.
    expect(program).toContain(join(REPOSITORY, 'dist', 'node_modules', 'better-sqlite3'));
    expect(program).toContain(join(REPOSITORY, 'node_modules', 'better-sqlite3'));
    expect(program).not.toContain(join(REPOSITORY, '..', 'node_modules', 'better-sqlite3'));
  });

  // Node 22 and later use their own SQLite, and load nothing from node_modules.
  it.skipIf(process.getBuiltinModule('node:sqlite') !== undefined)(
    'holds every file the daemon’s bundle loads for SQLite',
    () => {
      // What `latch daemon` requires from its bundle, opened as it opens state.db; then every file
      // Node loaded for it.
      const loaded = spawnSync(
        process.execPath,
        [
          '-e',
          `const load = require('node:module').createRequire(${JSON.stringify(join(REPOSITORY, 'dist', 'latch', 'daemon.cjs'))});
           const Database = load('better-sqlite3');
           new Database(':memory:').prepare('SELECT 1').get();
           console.log(JSON.stringify(Object.keys(require.cache)));`,
        ],
        { encoding: 'utf8' },
      );
      expect(loaded.stderr).toBe('');
      const files = JSON.parse(loaded.stdout) as string[];
      expect(files.length).toBeGreaterThan(3);
      const folders = latchProgram().slice(3);
      expect(folders.length).toBeGreaterThan(0);
      const outside = files.filter((file) => !folders.some((folder) => file.startsWith(folder + sep)));
      expect(outside).toEqual([]);
    },
  );

  it('loads no optional add-on an agent plants where Node looks for packages (~/.node_modules)', async () => {
    const machine = newMachine();
    await initMachine(machine, { relay: relay.origin });
    const marker = join(machine.home, 'planted-code-ran');
    for (const name of ['bufferutil', 'utf-8-validate']) {
      const folder = join(machine.env['HOME']!, '.node_modules', name);
      mkdirSync(folder, { recursive: true });
      writeFileSync(
        join(folder, 'index.js'),
        `require('fs').writeFileSync(${JSON.stringify(marker)}, '${name}');`,
      );
    }
    // Node would find them from the daemon's bundle: ws asks for both when it loads.
    const found = spawnSync(
      process.execPath,
      [
        '-e',
        `console.log(require('node:module').createRequire(${JSON.stringify(DAEMON_BUNDLE)}).resolve('bufferutil'))`,
      ],
      { env: machine.env, encoding: 'utf8' },
    );
    expect(found.stdout.trim()).toBe(join(machine.env['HOME']!, '.node_modules', 'bufferutil', 'index.js'));

    await startDaemonForTest(machine);
    expect(existsSync(marker)).toBe(false);
  });
});
