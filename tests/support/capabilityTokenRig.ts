import { beforeEach } from 'vitest';
import type { ApprovalBinding } from '../../shared/approvals/approvalChallenge.ts';
import { MemorySingleUseStore } from '../../shared/approvals/singleUseStore.ts';
import {
  verifyCapabilityToken,
  type TokenExpectation,
} from '../../shared/approvals/verifyCapabilityToken.ts';
import { fromBase64url, toBase64url } from '../../shared/encoding/base64url.ts';
import { utf8 } from '../../shared/encoding/bytes.ts';
import type { CapabilityToken } from '../../shared/messages/approvals.ts';
import type { PairedCredential } from '../../shared/webauthn/pairedCredential.ts';
import {
  bindingFor,
  NOW,
  pairedFleet,
  requestDetails,
  type PairedFleet,
} from '../../scripts/lib/approvalFixture.ts';
import { TEST_ORIGIN, TEST_RP_ID } from '../../scripts/lib/softwarePhone.ts';

export interface CapabilityTokenRig {
  fleet: PairedFleet;
  /** What the host asks the phone to sign for one of the fleet's requests. */
  binding: ApprovalBinding;
  /** What the host expects of a token for that request. */
  expected: TokenExpectation;
  /** The passkey as the host stored it at pairing. */
  credential: PairedCredential;
  store: MemorySingleUseStore;
  /**
   * verifyCapabilityToken against the rig's expectation (changed by `overrides`) and its stored
   * credential, or `paired` in its place (null: the host stored none).
   */
  verify(
    token: CapabilityToken,
    overrides?: Partial<TokenExpectation>,
    paired?: PairedCredential | null,
  ): ReturnType<typeof verifyCapabilityToken>;
}

/** A freshly paired fleet and an empty single-use store before each test, so no test sees another's use. */
export function capabilityTokenRigForEachTest(): CapabilityTokenRig {
  const rig = {
    verify: (token, overrides = {}, paired = rig.credential) =>
      verifyCapabilityToken(token, { ...rig.expected, ...overrides }, paired ?? undefined, rig.store),
  } as CapabilityTokenRig;
  beforeEach(async () => {
    rig.fleet = await pairedFleet();
    rig.binding = await bindingFor(requestDetails(rig.fleet));
    rig.expected = { ...rig.binding, origins: [TEST_ORIGIN], rpId: TEST_RP_ID, now: NOW };
    rig.credential = { ...rig.fleet.device.credential };
    rig.store = new MemorySingleUseStore(() => NOW);
  });
  return rig;
}

/** The token with its clientDataJSON decoded, edited and encoded again (its signature no longer fits). */
export function withClientData(
  token: CapabilityToken,
  edit: (clientData: Record<string, unknown>) => void,
): CapabilityToken {
  const clientData = JSON.parse(new TextDecoder().decode(fromBase64url(token.assertion.clientDataJSON)));
  edit(clientData);
  return {
    ...token,
    assertion: { ...token.assertion, clientDataJSON: toBase64url(utf8(JSON.stringify(clientData))) },
  };
}

/** base64url `text` with one bit of the byte at `index` flipped. */
export function flipByte(text: string, index: number): string {
  const bytes = fromBase64url(text);
  bytes[index % bytes.length]! ^= 0x01;
  return toBase64url(bytes);
}

/** The token with one bit of its signature's byte at `index` flipped. */
export function withSignatureByteFlipped(token: CapabilityToken, index: number): CapabilityToken {
  return {
    ...token,
    assertion: { ...token.assertion, signature: flipByte(token.assertion.signature, index) },
  };
}
