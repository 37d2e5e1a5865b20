import { AuditLog } from '../audit/auditLog.ts';
import { loadConfig, type LatchConfig } from '../config/config.ts';
import { latchFiles, latchHome, type LatchFiles } from '../config/paths.ts';
import { StateStore } from '../state/stateStore.ts';

/** What most commands open: the home folder's files, its configuration, state and audit log. */
export interface Home {
  home: string;
  files: LatchFiles;
  config: LatchConfig;
  store: StateStore;
  audit: AuditLog;
}

export function openHome(): Home {
  const home = latchHome();
  const files = latchFiles(home);
  const config = loadConfig(files.config);
  const store = new StateStore(files.state);
  return {
    home,
    files,
    config,
    store,
    audit: new AuditLog(files.audit, store, { redactContent: config.audit.content === 'none' }),
  };
}

/** Ends the process with a message on stderr: for usage errors and unusable state. */
export function fail(message: string, code = 2): never {
  process.stderr.write(`latch: ${message}\n`);
  process.exit(code);
}
