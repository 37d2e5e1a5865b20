import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { SqliteDatabase } from '../../daemon/state/sqlite.ts';

describe('a state.db from before freeze ids', () => {
  it('opens with its switch as it was: frozen under no id, the epoch kept, and takes new freezes by id', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'latch-state-')), 'state.db');
    const old = new SqliteDatabase(path);
    old.exec(`
      CREATE TABLE switch (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        frozen INTEGER NOT NULL,
        epoch INTEGER NOT NULL,
        reason TEXT,
        cause TEXT
      );
      INSERT INTO switch VALUES (1, 1, 4, 'before the upgrade', 'relay');
    `);
    old.close();

    const upgradedFrom = Date.now();
    const frozenAt: (number | undefined)[] = [];
    for (const _opening of [1, 2]) {
      const store = new StateStore(path);
      frozenAt.push(store.frozenAt());
      expect(store.switchState()).toEqual({
        frozen: true,
        epoch: 4,
        freeze: null,
        reason: 'before the upgrade',
        cause: 'relay',
      });
      store.close();
    }
    // Its freeze is ordered from the upgrade, the first opening, and from no later one.
    expect(frozenAt[0]).toBeGreaterThanOrEqual(upgradedFrom);
    expect(frozenAt[1]).toBe(frozenAt[0]);
    // An earlier version run again (a downgrade) leaves a freeze it applied with no time: the next
    // open takes it as applied then.
    const downgraded = new SqliteDatabase(path);
    downgraded.exec('UPDATE switch SET frozen_at = NULL');
    downgraded.close();
    const reopenedAt = Date.now();
    const reopened = new StateStore(path);
    expect(reopened.frozenAt()).toBeGreaterThanOrEqual(reopenedAt);
    reopened.close();
    const store = new StateStore(path);
    expect(
      store.applyFreeze(
        { id: 'a-freeze', reason: 'again', cause: 'relay', signedAt: Date.now() },
        Date.now(),
      ),
    ).toMatchObject({
      epoch: 5,
      freeze: 'a-freeze',
    });
    store.close();
  });
});
