/** Byte caps of the wire, in one place so that parsers, cleaning and docs agree. */
export const LIMITS = {
  nameBytes: 64,
  titleBytes: 200,
  detailBytes: 4000,
  /** A diff (file edit, loosening): with the largest detail, the details still fit one box. */
  diffBytes: 3000,
  cwdBytes: 512,
  targetBytes: 200,
  reasonBytes: 200,
  /** Sealed request details for one device: the details' JSON plus 94 bytes of box. */
  sealedBoxBytes: 8192,
  devicesPerFleet: 16,
  votesPerFreeze: 32,
  urlBytes: 2048,
  /** WebAuthn §4: a credential id has at most 1023 bytes. */
  credentialIdBytes: 1023,
  clientDataBytes: 2048,
  authenticatorDataBytes: 1024,
  signatureBytes: 512,
  userHandleBytes: 64,
  attestationObjectBytes: 8192,
} as const;
