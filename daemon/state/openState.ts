import { existsSync, statSync } from 'node:fs';
import { AuditLog } from '../audit/auditLog.ts';
import { AUDIT_ROTATION_DEFAULTS } from '../audit/auditRotation.ts';
import { ConfigError, type LatchConfig } from '../config/config.ts';
import { ConfigKeeper } from '../config/configKeeper.ts';
import type { LatchFiles } from '../config/paths.ts';
import { LastingFault } from '../lastingFault.ts';
import { isDamagedDatabase, isLockedDatabase } from './sqlite.ts';
import { stateMatchesAudit } from './stateMatchesAudit.ts';
import { StateStore } from './stateStore.ts';

/** The state cannot be trusted: Latch refuses to run on it rather than guess. */
export class StateError extends LastingFault {
  readonly code: 'state_missing' | 'state_mismatch' | 'state_corrupt';
  constructor(code: StateError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

export interface LatchState {
  store: StateStore;
  audit: AuditLog;
  configKeeper: ConfigKeeper;
  /** The config in force when the state was opened (a waiting loosening is not). */
  config: LatchConfig;
}

const START_OVER = 'to start over, pairing your phones again: latch init --reset';

/**
 * Opens this host's state: the state database, the audit log, and the config in force. The
 * database is where the person's approvals live (policy, config, phones), so a database that is
 * missing, or does not match the audit log, is refused: a new one must never make whatever files
 * are on disk the approved baseline.
 */
export function openState(files: LatchFiles): LatchState {
  if (!existsSync(files.config))
    throw new ConfigError('config_missing', `no configuration at ${files.config}; run latch init`);
  if (!existsSync(files.state))
    throw new StateError(
      'state_missing',
      `${files.state} is missing: the record of the policy, config and phones you approved is gone, and Latch will not take the files as they are now; ${START_OVER}`,
    );
  const store = openStore(files.state);
  const check = stateMatchesAudit(store, files.audit);
  if (!check.ok) {
    store.close();
    throw new StateError(
      'state_mismatch',
      `${files.state} does not match ${files.audit} (${check.problem}): one of them was replaced or edited, so what it records as approved cannot be trusted; check with latch audit verify, and ${START_OVER}`,
    );
  }
  let configKeeper: ConfigKeeper | undefined;
  // The approved config's audit settings, even while the file is broken; with none recorded (or
  // one that no longer parses), the strictest reading: no agent text, no rotated file deleted.
  const audit = new AuditLog(files.audit, store, {
    redactContent: () => configKeeper?.approved()?.audit.content !== 'full',
    rotation: () =>
      configKeeper?.approved()?.audit ?? { ...AUDIT_ROTATION_DEFAULTS, keepFiles: Number.POSITIVE_INFINITY },
  });
  configKeeper = new ConfigKeeper(files.config, store, audit);
  const view = configKeeper.current();
  if (!view.ok) {
    store.close();
    throw new ConfigError('config_invalid', view.message);
  }
  return { store, audit, configKeeper, config: view.config };
}

/**
 * Opens the database, which must be one: an empty file, or one SQLite finds is not a database or
 * is damaged (cut short, overwritten), is a named refusal with what to do, never a stack trace.
 */
function openStore(path: string): StateStore {
  const damaged = (what: string) =>
    new StateError(
      'state_corrupt',
      `${path} is damaged (${what}): Latch will not guess what you approved; restore it (with its -wal file, if any) from a backup, or ${START_OVER}`,
    );
  if (statSync(path).size === 0) throw damaged('it is empty');
  try {
    return new StateStore(path);
  } catch (error) {
    if (isDamagedDatabase(error)) throw damaged((error as Error).message);
    // Not a lasting fault: a service manager's next start finds it free.
    if (isLockedDatabase(error))
      throw new Error(
        `${path} is locked by another process (a sqlite3 shell, a backup): close it, and the daemon starts`,
      );
    throw error;
  }
}
