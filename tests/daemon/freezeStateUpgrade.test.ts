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

    for (const _opening of [1, 2]) {
      const store = new StateStore(path);
      expect(store.switchState()).toEqual({
        frozen: true,
        epoch: 4,
        freeze: null,
        reason: 'before the upgrade',
        cause: 'relay',
      });
      store.close();
    }
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
