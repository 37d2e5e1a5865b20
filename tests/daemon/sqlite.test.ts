import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../daemon/state/sqlite.ts';

let dir: string;
let db: SqliteDatabase;
const count = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'latch-sqlite-'));
  db = new SqliteDatabase(join(dir, 'test.db'));
  db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SQLite on this Node', () => {
  it('commits a transaction that returns, and gives back its result', () => {
    expect(db.transaction(() => db.prepare('INSERT INTO t VALUES (?)').run('a').changes)).toBe(1);
    expect(count()).toBe(1);
  });

  it('rolls back all of a transaction that throws, nested ones included, and rethrows its error', () => {
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    expect(() =>
      db.transaction(
        () => {
          insert.run('a');
          db.transaction(() => insert.run('b'));
          insert.run('a');
        },
        { immediate: true },
      ),
    ).toThrow(/UNIQUE/);
    expect(count()).toBe(0);
    // The database is usable again afterwards: no transaction was left open.
    db.transaction(() => insert.run('c'));
    expect(count()).toBe(1);
  });

  it('takes back an inner transaction’s outside work when the outer fails after it, last first', () => {
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const undone: string[] = [];
    expect(() =>
      db.transaction(
        () => {
          db.transaction(() => insert.run('a'), { undo: () => undone.push('inner') });
          insert.run('a');
        },
        { undo: () => undone.push('outer') },
      ),
    ).toThrow(/UNIQUE/);
    expect(undone).toEqual(['inner', 'outer']);
    // A transaction that commits takes nothing back.
    db.transaction(() => db.transaction(() => insert.run('b'), { undo: () => undone.push('late') }));
    expect(undone).toEqual(['inner', 'outer']);
  });

  it('runs what waits for the commit once the outermost transaction commits, and never after a rollback', () => {
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const seen: number[] = [];
    db.transaction(() => {
      insert.run('a');
      db.transaction(() => db.afterCommit(() => seen.push(count())));
      insert.run('b');
      expect(seen).toEqual([]);
    });
    // It saw both rows: it ran after the commit, not where it was asked for.
    expect(seen).toEqual([2]);
    expect(() =>
      db.transaction(() => {
        db.afterCommit(() => seen.push(-1));
        insert.run('a');
      }),
    ).toThrow(/UNIQUE/);
    expect(seen).toEqual([2]);
    // Outside a transaction there is nothing to wait for.
    db.afterCommit(() => seen.push(0));
    expect(seen).toEqual([2, 0]);
  });

  it('waits for another connection’s write lock instead of failing at once', () => {
    const other = new SqliteDatabase(join(dir, 'test.db'));
    try {
      expect((other.prepare('PRAGMA busy_timeout').get() as Record<string, number>)['timeout']).toBe(5000);
    } finally {
      other.close();
    }
  });
});
