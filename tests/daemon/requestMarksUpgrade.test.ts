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

  it('makes an earlier revoke of every rule (grants_ended_at) into the revokes and marks it stood for (review rv2)', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'latch-state-')), 'state.db');
    const now = Date.now();
    const before = new StateStore(path);
    before.db
      .prepare(
        `INSERT INTO devices (id, name, device_key, ecdh_key, credential_id, credential_key, counter, paired_at)
         VALUES ('phone', 'Phone', 'k', 'e', 'cred', 'ck', 0, ?)`,
      )
      .run(now);
    const rule = JSON.stringify({ tool: 'Bash', words: ['git', 'push'], folder: '/w', policyRule: 'r' });
    new GrantStore(before.db); // its table
    const grant = before.db.prepare(
      `INSERT INTO grants (id, kind, rule, risk, device, request_id, created_at, expires_at)
       VALUES (?, 'half_hour', ?, 'medium', 'phone', ?, ?, ?)`,
    );
    // One an earlier revoke --all missed (added while it ran), which its time kept dead; one after.
    grant.run('missed', rule, 'asked-before', now - 60_000, now + 20 * 60_000);
    grant.run('after', rule, 'asked-after', now - 10_000, now + 20 * 60_000);
    const request = before.db.prepare(
      "INSERT INTO requests (request_id, dedup_key, details, binding, state, created_at) VALUES (?, ?, '{}', '{}', 'pending', ?)",
    );
    request.run('waiting-before', 'k1', now - 40_000);
    request.run('waiting-after', 'k2', now - 5_000);
    before.setMeta('grants_ended_at', String(now - 30_000));
    before.close();

    const store = new StateStore(path);
    const grants = new GrantStore(store.db);
    expect(grants.live(now).map(({ id }) => id)).toEqual(['after']);
    expect(grants.revokedBeforeItCame('waiting-before')).toBe(true);
    expect(grants.revokedBeforeItCame('waiting-after')).toBe(false);
    expect(store.meta('grants_ended_at')).toBeUndefined();
    store.close();
  });
});
