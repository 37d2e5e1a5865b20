import { fromBase64url } from '../../shared/encoding/base64url.ts';
import { keyId } from '../../shared/keys/p256.ts';
import type { AuditLog } from '../audit/auditLog.ts';
import { storeApprovedTotpSecret } from '../fallback/totpSecret.ts';
import type { Gatekeeper } from '../gate/gatekeeper.ts';
import type { GateAnswer } from '../socket/localApi.ts';
import type { StateStore } from '../state/stateStore.ts';
import { enrolmentChange, readEnrolment } from './enrolment.ts';
import { pairedBefore } from './pairedBefore.ts';

export interface EnrolDeps {
  gatekeeper: Gatekeeper;
  store: StateStore;
  audit: AuditLog;
  totpPath: string;
  hostName: string;
}

/**
 * `POST /v1/enrol`: adds a phone or a TOTP secret once a paired phone approves exactly that.
 * The daemon writes it itself, so nothing but that approval adds it; a phone is trusted only once
 * `latch pair` confirms it, after the relay took its pairing (cli/commands/pair.ts).
 */
export async function enrol(
  body: unknown,
  deps: EnrolDeps,
): Promise<{ status: number; body: GateAnswer | { error: { code: string; message: string } } }> {
  const enrolment = readEnrolment(body);
  if ('error' in enrolment)
    return { status: 400, body: { error: { code: 'invalid_request', message: enrolment.error } } };
  if (enrolment.kind === 'phone') {
    const { device } = enrolment;
    // An id names one device key (protocol.md): another key under it is another device.
    if (device.id !== (await keyId(fromBase64url(device.deviceKey))))
      return {
        status: 400,
        body: { error: { code: 'invalid_request', message: 'the device id is not its device key’s' } },
      };
    const refused = pairedBefore(deps.store, device.id);
    if (refused) return { status: 409, body: { error: refused } };
  }
  const answer = await deps.gatekeeper.approveChange(enrolmentChange(enrolment, deps.hostName));
  if (answer.decision !== 'allow') {
    deps.audit.append({ event: 'enrolment_refused', kind: enrolment.kind, reason: answer.reason });
    return { status: 200, body: answer };
  }
  if (enrolment.kind === 'phone') {
    // Another enrolment of this id may have been approved while this one waited.
    const refused = pairedBefore(deps.store, enrolment.device.id);
    if (refused) {
      deps.audit.append({ event: 'enrolment_refused', kind: 'phone', reason: refused.code });
      return { status: 409, body: { error: refused } };
    }
    // Trusted once `latch pair` has the relay's confirmation: a pairing it gives up adds no phone.
    // With the phone that approved it: one revoked before `latch pair` confirms leaves it untrusted.
    const approvedBy = answer.requestId ? deps.store.request(answer.requestId)?.approvedBy : undefined;
    deps.store.addDeviceAwaitingConfirmation(enrolment.device, Date.now(), approvedBy);
    deps.audit.append({
      event: 'pairing_approved',
      device: enrolment.device.id,
      name: enrolment.device.name,
      approvedIn: answer.requestId,
    });
  } else {
    storeApprovedTotpSecret(deps.store, deps.totpPath, enrolment.secret);
    deps.audit.append({ event: 'totp_enrolled', approvedIn: answer.requestId });
  }
  return { status: 200, body: answer };
}
