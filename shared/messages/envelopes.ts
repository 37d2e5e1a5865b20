import { f, type Field, type Infer } from '../schema/index.ts';
import { nonce, signerSchema } from './common.ts';
import { LIMITS } from './limits.ts';

/**
 * A statement signed by a device or host key (ECDSA P-256, SHA-256, r ‖ s). The signature covers
 * the canonical JSON of every other member, so nothing in it can be changed or moved to another
 * kind of statement.
 */
function envelopeSchema<const Kind extends string, Body>(kind: Kind, body: Field<Body>) {
  return f.object({
    v: f.version(),
    kind: f.literal(kind),
    signer: signerSchema,
    body,
    ts: f.timestamp(),
    nonce: nonce(),
    sig: f.base64url(64),
  });
}

/** A phone refuses one request. Safe to honour even when it cannot be verified end to end. */
export const denyEnvelopeSchema = envelopeSchema(
  'deny',
  f.object({ fleet: f.id(), host: f.id(), requestId: f.id() }),
);
export type DenyEnvelope = Infer<typeof denyEnvelopeSchema>;

/** The panic button: freezes every agent of the fleet. */
export const freezeEnvelopeSchema = envelopeSchema(
  'freeze',
  f.object({ fleet: f.id(), reason: f.text(LIMITS.reasonBytes) }),
);
export type FreezeEnvelope = Infer<typeof freezeEnvelopeSchema>;

/** A host confirms that it checked a phone's pairing MAC and now trusts its keys. */
export const pairConfirmEnvelopeSchema = envelopeSchema(
  'pair-confirm',
  f.object({ fleet: f.id(), offerId: f.id(), device: f.id() }),
);
export type PairConfirmEnvelope = Infer<typeof pairConfirmEnvelopeSchema>;

export type SignedEnvelope = DenyEnvelope | FreezeEnvelope | PairConfirmEnvelope;
export type EnvelopeKind = SignedEnvelope['kind'];
export type EnvelopeOf<K extends EnvelopeKind> = Extract<SignedEnvelope, { kind: K }>;
export type EnvelopeBody<K extends EnvelopeKind> = EnvelopeOf<K>['body'];

export const envelopeSchemas = {
  deny: denyEnvelopeSchema,
  freeze: freezeEnvelopeSchema,
  'pair-confirm': pairConfirmEnvelopeSchema,
} as const;
