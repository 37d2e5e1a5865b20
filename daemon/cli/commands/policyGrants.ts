import { similarCommandText } from '../../../shared/approvals/similarCallText.ts';
import type { Grant } from '../../../shared/messages/approvals.ts';
import { GrantStore, type StoredGrant } from '../../grants/grantStore.ts';
import { fail, openHome } from '../home.ts';
import { printJson } from '../printJson.ts';

/** One rule as `latch policy grants --json` prints it (docs/daemon.md#for-scripts). */
export interface GrantJson {
  id: string;
  kind: Grant;
  tool: string;
  command: string;
  folder: string;
  /** The policy rule whose asks it answers. */
  policyRule: string;
  /** The conversation id a session grant is for; null for half_hour. */
  session: string | null;
  device: string;
  requestId: string;
  createdAt: string;
  expiresAt: string;
}

/** `latch policy grants --json` and `latch policy revoke --json`: the rules in force after it. */
export interface GrantsJson {
  grants: GrantJson[];
  revoked?: string[];
}

const asJson = (grant: StoredGrant): GrantJson => ({
  id: grant.id,
  kind: grant.kind,
  tool: grant.similar.tool,
  command: similarCommandText(grant.similar),
  folder: grant.similar.folder,
  policyRule: grant.similar.policyRule,
  session: grant.session,
  device: grant.device,
  requestId: grant.requestId,
  createdAt: new Date(grant.createdAt).toISOString(),
  expiresAt: new Date(grant.expiresAt).toISOString(),
});

function print(grants: StoredGrant[], json: boolean | undefined, revoked?: string[]): void {
  if (json)
    return printJson({ grants: grants.map(asJson), ...(revoked ? { revoked } : {}) } satisfies GrantsJson);
  if (revoked) process.stdout.write(`revoked ${revoked.length === 0 ? 'nothing' : revoked.join(', ')}\n`);
  else if (grants.length === 0) process.stdout.write('no rule allowed from a phone is in force\n');
  for (const grant of grants.map(asJson)) {
    const scope = grant.kind === 'session' ? `session ${grant.session}` : 'any session';
    process.stdout.write(
      `${grant.id}  ${grant.tool}: ${grant.command}  in ${grant.folder}  (${scope}, until ${grant.expiresAt})\n`,
    );
  }
}

/** `latch policy grants`: the rules phones allowed with an approval, still in force. */
export async function run(options: { json?: boolean }): Promise<void> {
  const { store } = openHome();
  print(new GrantStore(store.db).live(Date.now()), options.json);
}

/**
 * `latch policy revoke <id>` or `--all`: revoking tightens, so it needs no phone. An unknown id
 * (or one already lapsed) exits 1.
 */
export async function revoke(
  id: string | undefined,
  options: { all?: boolean; json?: boolean },
): Promise<void> {
  if ((id === undefined) === !options.all) fail('name one rule’s id, or --all');
  const { store, audit } = openHome();
  const grants = new GrantStore(store.db);
  const now = Date.now();
  const revoked = grants.revoke(options.all ? 'all' : { id: id! }, now);
  if (id !== undefined && revoked.length === 0) fail(`no rule in force has the id ${id}`, 1);
  audit.append({ event: 'grant_revoked', grants: revoked, by: 'host', verified: true });
  print(grants.live(now), options.json, revoked);
}
