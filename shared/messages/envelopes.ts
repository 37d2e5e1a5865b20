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

export const REPORT_SCOPES = ['session', 'fleet'] as const;
export type ReportScope = (typeof REPORT_SCOPES)[number];

/**
 * A phone refuses one request. Safe to honour even when it cannot be verified end to end.
 * `report` is "I didn't expect this": the host also refuses the agent session from then on, or
 * freezes the fleet; it acts on a report only once it has verified the signature itself.
 */
export const denyEnvelopeSchema = /* @__PURE__ */ envelopeSchema(
  'deny',
  f.object({
    fleet: f.id(),
    host: f.id(),
    requestId: f.id(),
    report: f.optional(f.object({ scope: f.oneOf(REPORT_SCOPES) })),
  }),
);
export type DenyEnvelope = Infer<typeof denyEnvelopeSchema>;

/**
 * A phone revokes a rule it allowed with its approval of `requestId` (docs/policy.md#grants). The
 * relay never learns the rule. Revoking only tightens, so a host honours it even unverified.
 */
export const revokeGrantEnvelopeSchema = /* @__PURE__ */ envelopeSchema(
  'revoke-grant',
  f.object({ fleet: f.id(), host: f.id(), requestId: f.id() }),
);
export type RevokeGrantEnvelope = Infer<typeof revokeGrantEnvelopeSchema>;

/** The panic button: freezes every agent of the fleet. */
export const freezeEnvelopeSchema = /* @__PURE__ */ envelopeSchema(
  'freeze',
  f.object({ fleet: f.id(), reason: f.text(LIMITS.reasonBytes) }),
);
export type FreezeEnvelope = Infer<typeof freezeEnvelopeSchema>;

/** A host confirms that it checked a phone's pairing MAC and now trusts its keys. */
export const pairConfirmEnvelopeSchema = /* @__PURE__ */ envelopeSchema(
  'pair-confirm',
  f.object({ fleet: f.id(), offerId: f.id(), device: f.id() }),
);
export type PairConfirmEnvelope = Infer<typeof pairConfirmEnvelopeSchema>;

export type SignedEnvelope = DenyEnvelope | RevokeGrantEnvelope | FreezeEnvelope | PairConfirmEnvelope;
export type EnvelopeKind = SignedEnvelope['kind'];
export type EnvelopeOf<K extends EnvelopeKind> = Extract<SignedEnvelope, { kind: K }>;
export type EnvelopeBody<K extends EnvelopeKind> = EnvelopeOf<K>['body'];

export const envelopeSchemas = {
  deny: denyEnvelopeSchema,
  'revoke-grant': revokeGrantEnvelopeSchema,
  freeze: freezeEnvelopeSchema,
  'pair-confirm': pairConfirmEnvelopeSchema,
} as const;
