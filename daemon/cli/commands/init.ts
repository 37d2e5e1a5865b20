import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { toBase64url } from '../../../shared/encoding/base64url.ts';
import { randomBytes } from '../../../shared/encoding/bytes.ts';
import { validateId } from '../../../shared/text/validateId.ts';
import { AuditLog } from '../../audit/auditLog.ts';
import { configTemplate } from '../../config/config.ts';
import { latchFiles, latchHome } from '../../config/paths.ts';
import { createHostIdentity } from '../../identity/hostIdentity.ts';
import { DEFAULT_POLICY } from '../../policy/defaultPolicy.ts';
import { PolicyKeeper } from '../../policy/policyKeeper.ts';
import { StateStore } from '../../state/stateStore.ts';
import { fail } from '../home.ts';

export async function run(options: {
  relay: string;
  name: string;
  fleet?: string;
  quorum: string;
}): Promise<void> {
  const home = latchHome();
  const files = latchFiles(home);
  if (existsSync(files.config)) fail(`already initialised: ${files.config} exists`, 1);
  const quorum = Number(options.quorum);
  if (!Number.isInteger(quorum) || quorum < 1 || quorum > 32)
    fail('--quorum must be a whole number from 1 to 32');
  const fleet = options.fleet ?? `fleet-${toBase64url(randomBytes(16))}`;
  if (!validateId(fleet).ok) fail('--fleet is not a valid fleet id');

  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(
    files.config,
    configTemplate({ relayUrl: options.relay, hostName: options.name, fleet, quorum }),
    { mode: 0o600, flag: 'wx' },
  );
  if (!existsSync(files.policy)) writeFileSync(files.policy, DEFAULT_POLICY, { mode: 0o600 });
  const identity = existsSync(files.hostKey) ? undefined : await createHostIdentity(files.hostKey);
  const store = new StateStore(files.state);
  const audit = new AuditLog(files.audit, store, { redactContent: false });
  new PolicyKeeper(files.policy, store, audit).approve(DEFAULT_POLICY, 'latch init');
  audit.append({ event: 'init', fleet, ...(identity ? { host: identity.id } : {}) });
  store.close();
  process.stdout.write(
    `Latch is set up in ${home}\n  config  ${files.config}\n  policy  ${files.policy}\n  fleet   ${fleet}\nNext: latch daemon (keep it running), then latch pair.\n`,
  );
}
