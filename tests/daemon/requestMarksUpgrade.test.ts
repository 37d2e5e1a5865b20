import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../daemon/grants/grantStore.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';
import { SqliteDatabase } from '../../daemon/state/sqlite.ts';

describe('a state.db from before marks were kept on the request they belong to', () => {
  it('keeps the old used_tokens marks: a request reported, a rule revoked before it came; no other', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'latch-state-')), 'state.db');
    const old = new SqliteDatabase(path);
    old.exec(`
      CREATE TABLE used_tokens (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
      CREATE TABLE requests (
        request_id TEXT PRIMARY KEY,
        dedup_key TEXT NOT NULL,
        details TEXT NOT NULL,
        binding TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      INSERT INTO requests VALUES ('reported-one', 'k1', '{}', '{}', 'denied', 1);
      INSERT INTO requests VALUES ('denied-only', 'k2', '{}', '{}', 'denied', 1);
      INSERT INTO requests VALUES ('revoked-rule', 'k3', '{}', '{}', 'pending', 1);
      INSERT INTO used_tokens VALUES ('report:reported-one', 1);
      INSERT INTO used_tokens VALUES ('grant-revoked:revoked-rule', 1);
    `);
    old.close();

    const store = new StateStore(path);
    expect(store.requestReported('reported-one')).toBe(true);
    expect(store.requestReported('denied-only')).toBe(false);
    const grants = new GrantStore(store.db);
    expect(grants.revokedBeforeItCame('revoked-rule')).toBe(true);
    expect(grants.revokedBeforeItCame('denied-only')).toBe(false);
    store.close();
  });
});
