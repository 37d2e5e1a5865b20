import type { AuditLog } from '../audit/auditLog.ts';
import type { LatchConfig } from '../config/config.ts';
import { latchFiles, latchHome, type LatchFiles } from '../config/paths.ts';
import { openState } from '../state/openState.ts';
import type { StateStore } from '../state/stateStore.ts';
import { USAGE_EXIT } from './exitCodes.ts';

/** What most commands open: the home folder's files, its config in force, state and audit log. */
export interface Home {
  home: string;
  files: LatchFiles;
  /** The config in force: a loosening of config.toml that no phone approved is not. */
  config: LatchConfig;
  store: StateStore;
  audit: AuditLog;
}

/** Opens the home; a missing or untrustworthy state or config ends the command with the reason. */
export function openHome(): Home {
  const home = latchHome();
  const files = latchFiles(home);
  try {
    const { store, audit, config } = openState(files);
    return { home, files, config, store, audit };
  } catch (error) {
    fail((error as Error).message, 1);
  }
}

/** Ends the process with a message on stderr: a usage error unless `code` says otherwise. */
export function fail(message: string, code: number = USAGE_EXIT): never {
  process.stderr.write(`latch: ${message}\n`);
  process.exit(code);
}
