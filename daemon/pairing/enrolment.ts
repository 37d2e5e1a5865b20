import { createHash } from 'node:crypto';
import { p256PublicKey } from '../../shared/messages/common.ts';
import { LIMITS } from '../../shared/messages/limits.ts';
import { f, type Infer } from '../../shared/schema/index.ts';
import { parse } from '../../shared/schema/parse.ts';
import type { ChangeRequest } from '../gate/gatekeeper.ts';

/**
 * What `latch pair` asks the daemon to add once a phone is already paired: a new phone (checked
 * by `latch pair` against its QR secret) or a TOTP secret. The daemon adds it only when a paired
 * phone approves, so an agent that runs `latch pair` cannot enrol a "phone" of its own.
 */
export const enrolmentSchema = f.variant('kind', {
  phone: f.object({
    kind: f.literal('phone'),
    device: f.object({
      id: f.id(),
      name: f.text(LIMITS.nameBytes),
      deviceKey: p256PublicKey(),
      ecdhKey: p256PublicKey(),
      credential: f.object({
        id: f.base64url(1, LIMITS.credentialIdBytes),
        publicKey: f.base64url(1, LIMITS.attestationObjectBytes),
        counter: f.integer(0, 0xffffffff),
        device: f.id(),
      }),
    }),
  }),
  totp: f.object({ kind: f.literal('totp'), secret: f.base64url(20) }),
});
export type Enrolment = Infer<typeof enrolmentSchema>;

export function readEnrolment(body: unknown): Enrolment | { error: string } {
  const parsed = parse(enrolmentSchema, body);
  if (!parsed.ok) return { error: parsed.error.message };
  if (parsed.value.kind === 'phone' && parsed.value.device.credential.device !== parsed.value.device.id)
    return { error: 'the passkey belongs to another device' };
  return parsed.value;
}

/**
 * A hash of every key the new phone brings (its device and ECDH keys, its passkey) with its id
 * and name: what a paired phone's approval is bound to, so that another enrolment under the same
 * id and name, with keys of its own, is another request and never rides on this one's approval.
 */
function enrolmentHash(enrolment: Enrolment): string {
  // A TOTP secret by its own hash: a same-user process may ask to enrol a secret of its own, and
  // the person tells theirs by these letters, which latch pair --totp prints.
  if (enrolment.kind === 'totp') return createHash('sha256').update(enrolment.secret).digest('hex');
  const { id, name, deviceKey, ecdhKey, credential } = enrolment.device;
  return createHash('sha256')
    .update(JSON.stringify([id, name, deviceKey, ecdhKey, credential.id, credential.publicKey]))
    .digest('hex');
}

/** The start of that hash as people compare it: `latch pair` prints it, the phone asked shows it. */
export function enrolmentFingerprint(enrolment: Enrolment): string {
  return enrolmentHash(enrolment)
    .slice(0, 12)
    .replace(/(.{4})(?=.)/g, '$1 ');
}

/** How the phones are asked: what is added, to which host, and what it will be able to do. */
export function enrolmentChange(enrolment: Enrolment, hostName: string): ChangeRequest {
  if (enrolment.kind === 'phone') {
    const { id, name } = enrolment.device;
    return {
      kind: 'phone',
      key: enrolmentHash(enrolment),
      title: `Add phone "${name}" to ${hostName}?`,
      // The keys on a line of their own, first: the phone wraps detail as a terminal does, and a
      // person compares them with latch pair's.
      detail: `keys ${enrolmentFingerprint(enrolment)}\n\nA phone named "${name}" (device ${id}) scanned ${hostName}'s pairing code. Once added, it approves this host's requests and votes to resume it. Approve only if latch pair shows the same keys; if you did not just pair a phone, deny.`,
      risk: 'high',
      target: name,
    };
  }
  return {
    kind: 'totp',
    key: enrolmentHash(enrolment).slice(0, 16),
    title: `Add a TOTP authenticator to ${hostName}?`,
    detail: `key ${enrolmentFingerprint(enrolment)}\n\nlatch pair --totp asks to enrol an authenticator app on ${hostName}. Its codes, typed on the terminal, approve requests when no phone can be reached. Approve only if latch pair --totp shows the same key; if you did not just run it, deny.`,
    risk: 'high',
    target: 'totp',
  };
}
