import { existsSync } from 'node:fs';
import { verifyAuditLog } from '../../audit/auditLog.ts';
import { latchFiles, latchHome } from '../../config/paths.ts';
import { StateStore } from '../../state/stateStore.ts';
import { fail } from '../home.ts';
import { printJson } from '../printJson.ts';

/** `latch audit verify --json`'s one object (docs/daemon.md#for-scripts). */
export type AuditVerifyJson = { ok: true; lines: number } | { ok: false; line: number; problem: string };

/** Reads the state directly, not through openHome: it must also report a state that does not match. */
export async function run(options: { json?: boolean }): Promise<void> {
  const files = latchFiles(latchHome());
  if (!existsSync(files.state)) fail(`${files.state} is missing; nothing vouches for the audit log`, 1);
  const store = new StateStore(files.state);
  const seq = store.meta('audit_seq');
  const hash = store.meta('audit_hash');
  store.close();
  const verdict = verifyAuditLog(files.audit, seq && hash ? { seq: Number(seq), hash } : undefined);
  if (options.json)
    printJson(
      (verdict.ok
        ? { ok: true, lines: verdict.lines }
        : { ok: false, line: verdict.line, problem: verdict.problem }) satisfies AuditVerifyJson,
    );
  else if (verdict.ok) process.stdout.write(`ok: ${verdict.lines} lines, the chain is intact\n`);
  else process.stdout.write(`broken at line ${verdict.line}: ${verdict.problem}\n`);
  process.exit(verdict.ok ? 0 : 1);
}
