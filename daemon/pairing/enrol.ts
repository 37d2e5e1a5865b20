import { writeFileSync } from 'node:fs';
import type { AuditLog } from '../audit/auditLog.ts';
import type { Gatekeeper } from '../gate/gatekeeper.ts';
import type { GateAnswer } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import { enrolmentChange, readEnrolment } from './enrolment.ts';

export interface EnrolDeps {
  gatekeeper: Gatekeeper;
  store: StateStore;
  audit: AuditLog;
  totpPath: string;
  hostName: string;
}

/**
 * `POST /v1/enrol`: adds a phone or a TOTP secret once a paired phone approves exactly that.
 * The daemon writes it itself, so nothing but that approval adds it.
 */
export async function enrol(
  body: unknown,
  deps: EnrolDeps,
): Promise<{ status: number; body: GateAnswer | { error: { code: string; message: string } } }> {
  const enrolment = readEnrolment(body);
  if ('error' in enrolment)
    return { status: 400, body: { error: { code: 'invalid_request', message: enrolment.error } } };
  const answer = await deps.gatekeeper.approveChange(enrolmentChange(enrolment, deps.hostName));
  if (answer.decision !== 'allow') {
    deps.audit.append({ event: 'enrolment_refused', kind: enrolment.kind, reason: answer.reason });
    return { status: 200, body: answer };
  }
  if (enrolment.kind === 'phone') {
    deps.store.addDevice(enrolment.device, Date.now());
    deps.audit.append({
      event: 'paired',
      device: enrolment.device.id,
      name: enrolment.device.name,
      approvedIn: answer.requestId,
    });
  } else {
    writeFileSync(deps.totpPath, `${JSON.stringify({ secret: enrolment.secret })}\n`, { mode: 0o600 });
    deps.audit.append({ event: 'totp_enrolled', approvedIn: answer.requestId });
  }
  return { status: 200, body: answer };
}
