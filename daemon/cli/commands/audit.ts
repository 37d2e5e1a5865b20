import { existsSync } from 'node:fs';
import { auditAnchor, verifyAuditLog, type AuditVerdict } from '../../audit/verifyAuditLog.ts';
import { latchFiles, latchHome } from '../../config/paths.ts';
import { StateStore } from '../../state/stateStore.ts';
import { fail } from '../home.ts';
import { printJson } from '../printJson.ts';

/**
 * `latch audit verify --json`'s one object (docs/daemon.md#for-scripts): the files checked, in
 * chain order, and the first line kept; or the file and line (within that file) of the break.
 */
export type AuditVerifyJson = AuditVerdict;

/** Reads the state directly, not through openHome: it must also report a state that does not match. */
export async function run(options: { json?: boolean }): Promise<void> {
  const files = latchFiles(latchHome());
  if (!existsSync(files.state)) fail(`${files.state} is missing; nothing vouches for the audit log`, 1);
  const store = new StateStore(files.state);
  const anchor = auditAnchor(store);
  store.close();
  const verdict = verifyAuditLog(files.audit, anchor);
  if (options.json) printJson(verdict);
  else if (verdict.ok)
    process.stdout.write(
      `ok: ${verdict.lines} lines from line ${verdict.firstSeq} in ${verdict.files.length} ${verdict.files.length === 1 ? 'file' : 'files'}, the chain is intact\n`,
    );
  else process.stdout.write(`broken in ${verdict.file} at line ${verdict.line}: ${verdict.problem}\n`);
  process.exit(verdict.ok ? 0 : 1);
}
