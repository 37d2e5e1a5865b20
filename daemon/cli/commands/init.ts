import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { ownerOnlyPlaces, tightenToOwnerOnly } from '../../config/fileModes.ts';
import { toBase64url } from '../../../shared/encoding/base64url.ts';
import { randomBytes } from '../../../shared/encoding/bytes.ts';
import { LIMITS } from '../../../shared/messages/limits.ts';
import { validateId } from '../../../shared/text/validateId.ts';
import { rotatedFiles } from '../../audit/auditFiles.ts';
import { AuditLog } from '../../audit/auditLog.ts';
import { ConfigError, loadConfig, parseConfig } from '../../config/config.ts';
import { configTemplate } from '../../config/configTemplate.ts';
import { isHostName } from '../../config/hostName.ts';
import { ConfigKeeper } from '../../config/configKeeper.ts';
import { latchFiles, latchHome, socketPath, type LatchFiles } from '../../config/paths.ts';
import { createHostIdentity } from '../../identity/hostIdentity.ts';
import { DEFAULT_POLICY } from '../../policy/defaultPolicy.ts';
import { PolicyKeeper } from '../../policy/policyKeeper.ts';
import { otherDaemonOf, pidFileOf } from '../../socket/daemonPidFile.ts';
import { checkSocketPathLength } from '../../socket/securePath.ts';
import { StateStore } from '../../state/stateStore.ts';
import { fail } from '../home.ts';

/**
 * A new state whose approved baselines are `policy` and `config`: what the person approves by
 * running `latch init`. The files on disk are then judged against them like any later change.
 */
function newState(files: LatchFiles, baselines: { policy: string; config: string }, event: object): void {
  const store = new StateStore(files.state);
  const audit = new AuditLog(files.audit, store, { redactContent: false });
  new PolicyKeeper(files.policy, store, audit).approve(baselines.policy, 'latch init');
  new ConfigKeeper(files.config, store, audit).approve(baselines.config, 'latch init');
  audit.append({ event: 'init', ...event });
  store.close();
}

/**
 * Moves an earlier state and audit log, rotated files too, aside (kept, never deleted); returns
 * their new suffix. Refused while a daemon runs on them: it would go on writing the copy, which
 * it does not guard as a secret until it starts again (policy/protectedPlaces, stateCopies).
 */
function moveStateAside(files: LatchFiles): string {
  let running;
  try {
    running = otherDaemonOf(pidFileOf(socketPath()));
  } catch (error) {
    fail((error as Error).message);
  }
  if (running && existsSync(files.state))
    fail(
      `the daemon still runs on this state (pid ${running.pid}): stop it first (Ctrl-C where latch daemon runs, or systemctl --user stop latch), then try again`,
      1,
    );
  const aside = `replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const rotated = rotatedFiles(files.audit).map(({ path }) => path);
  for (const path of [files.state, `${files.state}-wal`, `${files.state}-shm`, ...rotated, files.audit]) {
    if (existsSync(path)) renameSync(path, `${path}.${aside}`);
  }
  return aside;
}

/**
 * `latch init --reset`: the state can no longer be trusted (lost, replaced). The old state and
 * audit log are moved aside; the new baselines are Latch's defaults, not the files as they are
 * now, so a looser policy or config waits for a phone once one is paired again.
 */
function reset(files: LatchFiles): void {
  if (!existsSync(files.config)) fail('nothing to reset: Latch is not set up here; run latch init', 1);
  let config;
  try {
    config = loadConfig(files.config);
  } catch (error) {
    fail(`fix ${files.config} first: ${(error as Error).message}`, 1);
  }
  const aside = moveStateAside(files);
  const defaults = configTemplate({
    relayUrl: config.relay.url,
    hostName: config.host.name,
    fleet: config.host.fleet,
    quorum: 1,
  });
  newState(files, { policy: DEFAULT_POLICY, config: defaults }, { reset: true, previous: aside });
  const { quorum } = config.killSwitch;
  process.stdout.write(
    `Latch starts over in ${latchHome()}: the old state and audit log are kept as *.${aside}.\n` +
      'Pair your phones again (latch pair). Where policy.toml or config.toml are looser than the defaults, a phone must approve them first.\n' +
      // Stricter than the defaults holds at once: a quorum kept above 1 needs that many phones paired anew.
      (quorum > 1
        ? `Note: config.toml keeps kill_switch.quorum = ${quorum}, which holds at once: resuming after a freeze takes ${quorum} phones paired again. Lower it in ${files.config} first if you will pair fewer.\n`
        : ''),
  );
}

export async function run(options: {
  relay: string;
  name: string;
  fleet?: string;
  quorum: number;
  reset?: boolean;
}): Promise<void> {
  const home = latchHome();
  const files = latchFiles(home);
  if (options.reset) return reset(files);
  if (existsSync(files.config)) fail(`already initialised: ${files.config} exists`, 1);
  const { quorum } = options;
  const fleet = options.fleet ?? `fleet-${toBase64url(randomBytes(16))}`;
  if (!validateId(fleet).ok) fail('--fleet is not a valid fleet id');
  if (!isHostName(options.name))
    fail(
      `--name must be 1 to ${LIMITS.nameBytes} bytes, without control or invisible characters (without --name, this machine's host name is used: pass --name if it is not)`,
    );

  // No daemon could listen at a socket path past sun_path: said before anything is written.
  try {
    checkSocketPathLength(socketPath());
  } catch (error) {
    fail((error as Error).message);
  }

  const config = configTemplate({ relayUrl: options.relay, hostName: options.name, fleet, quorum });
  // Read as the daemon will read it: a config it would refuse (an http relay elsewhere than this
  // machine, say) is refused now, before anything is written.
  try {
    parseConfig(config, files.config);
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : String(error));
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  // A home kept from before (or made by hand) may be open to others: closed before anything is written.
  tightenToOwnerOnly(ownerOnlyPlaces(home), (line) => process.stdout.write(`${line}\n`));
  writeFileSync(files.config, config, { mode: 0o600, flag: 'wx' });
  if (!existsSync(files.policy)) writeFileSync(files.policy, DEFAULT_POLICY, { mode: 0o600 });
  const identity = existsSync(files.hostKey) ? undefined : await createHostIdentity(files.hostKey);
  // A state left from an earlier set-up would vouch for nothing: keep it aside, start anew.
  moveStateAside(files);
  newState(files, { policy: DEFAULT_POLICY, config }, { fleet, ...(identity ? { host: identity.id } : {}) });
  process.stdout.write(
    `Latch is set up in ${home}\n  config  ${files.config}\n  policy  ${files.policy}\n  fleet   ${fleet}\nNext: latch daemon (keep it running), then latch pair.\n`,
  );
}
