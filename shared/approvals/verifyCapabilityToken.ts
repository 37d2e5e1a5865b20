import { toBase64url } from '../encoding/base64url.ts';
import { attempt, LatchError, type Result } from '../errors.ts';
import type { CapabilityToken, Decision } from '../messages/approvals.ts';
import type { PairedCredential } from '../webauthn/pairedCredential.ts';
import { verifyAssertion, type RelyingParty } from '../webauthn/verifyAssertion.ts';
import { approvalChallenge, type ApprovalBinding } from './approvalChallenge.ts';
import type { SingleUseStore } from './singleUseStore.ts';

/** What the daemon knows of its own request, plus where the PWA lives. */
export interface TokenExpectation extends ApprovalBinding, RelyingParty {
  now?: number;
}

export interface VerifiedToken {
  device: string;
  decision: Decision;
  /** Store this as the credential's counter. */
  counter: number;
}

/**
 * Verifies a capability token end to end and uses it up. `credential` is the paired passkey
 * whose id the token's assertion names (undefined when there is none); `store` makes the token
 * single-use. The relay is never trusted: everything is checked against the daemon's own records.
 */
export function verifyCapabilityToken(
  token: CapabilityToken,
  expected: TokenExpectation,
  credential: PairedCredential | undefined,
  store: SingleUseStore,
): Promise<Result<VerifiedToken>> {
  return attempt(async () => {
    // The token's own members name what it answers: each must be what the signature is checked
    // against (built from this side's record), or the token says one thing and does another.
    if (
      token.fleet !== expected.fleet ||
      token.host !== expected.host ||
      token.requestId !== expected.requestId
    ) {
      throw new LatchError('context_mismatch', 'the token names another request');
    }
    // A token only approves: a refusal is a deny envelope, signed by the device key.
    if (token.decision !== expected.decision) {
      throw new LatchError('invalid_field', 'the token names another decision');
    }

    const challenge = await approvalChallenge(expected);
    const { counter } = await verifyAssertion(
      token.assertion,
      { challenge, origins: expected.origins, rpId: expected.rpId },
      credential,
    );

    // The passkey belongs to the paired phone that claims to have decided.
    if (credential!.device !== token.device) {
      throw new LatchError('device_mismatch', 'the passkey belongs to another device');
    }

    // The deadline is exclusive: at `exp` the token is already worthless.
    if ((expected.now ?? Date.now()) >= expected.exp) {
      throw new LatchError('expired', 'the request expired before the token arrived');
    }

    // Last, so that only a token that passed every check uses up its challenge.
    if (!(await store.consume(toBase64url(challenge), expected.exp))) {
      throw new LatchError('already_used', 'this token was already used');
    }

    return { device: token.device, decision: expected.decision, counter };
  });
}
