import { verifyAuditLog } from '../../audit/auditLog.ts';
import { openHome } from '../home.ts';

export async function run(): Promise<void> {
  const { files, store } = openHome();
  const seq = store.meta('audit_seq');
  const hash = store.meta('audit_hash');
  const verdict = verifyAuditLog(files.audit, seq && hash ? { seq: Number(seq), hash } : undefined);
  if (verdict.ok) {
    process.stdout.write(`ok: ${verdict.lines} lines, the chain is intact\n`);
    return;
  }
  process.stdout.write(`broken at line ${verdict.line}: ${verdict.problem}\n`);
  process.exit(1);
}
