import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { detailsBinding } from '../../shared/approvals/approvalBinding.ts';
import type { CapabilityToken, RequestDetails } from '../../shared/messages/approvals.ts';
import { PROTOCOL_VERSION } from '../../shared/version.ts';
import { Grants } from '../../daemon/grants/grants.ts';
import { StateStore } from '../../daemon/state/stateStore.ts';

let dir: string;
let store: StateStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'latch-grant-ids-'));
  store = new StateStore(join(dir, 'state.db'));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

// Found in CI: a base64url id that began with '-' made `latch policy revoke <id>` a usage error.
it('gives every grant an id a person can type after latch policy revoke: hex, never an option', async () => {
  const now = Date.UTC(2026, 5, 1);
  const details: RequestDetails = {
    v: PROTOCOL_VERSION,
    fleet: 'fleet-1',
    host: 'host-1',
    hostName: 'build box',
    requestId: 'request-1',
    agent: 'claude-code',
    tool: 'Bash',
    title: 'git push',
    detail: 'git push',
    risk: 'medium',
    createdAt: now,
    exp: now + 300_000,
    nonce: 'AAAAAAAAAAAAAAAAAAAAAA',
    salt: 'BBBBBBBBBBBBBBBBBBBBBB',
    shortened: false,
    similar: {
      tool: 'Bash',
      words: ['git', 'push'],
      thenAnyName: false,
      folder: '/srv/app',
      policyRule: 'pushes',
    },
  };
  const record = {
    requestId: 'request-1',
    dedupKey: 'request-1',
    details,
    binding: await detailsBinding(details),
    state: 'approved' as const,
  };
  // Only the fields a grant records; the signature was checked before add is called.
  const token = { grant: 'half_hour', device: 'phone-1' } as CapabilityToken & { grant: 'half_hour' };
  const grants = new Grants(store.db);
  // 300 ids: were they base64url, one would start with '-' or '_' with odds of 1 - (62/64)^300 > 99.99%.
  const ids = Array.from({ length: 300 }, () => grants.add(record, token, now)!.id);
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  expect(new Set(ids).size).toBe(ids.length);
});
