/** Byte caps of the wire, in one place so that parsers, cleaning and docs agree. */
export const LIMITS = {
  nameBytes: 64,
  titleBytes: 200,
  detailBytes: 4000,
  /** A diff (file edit, loosening): with the largest detail, the details still fit one box. */
  diffBytes: 3000,
  /**
   * Latch's own notes on a command (the scripts it runs, what else its tool is given), all of them
   * together: a command has no diff, so with the largest detail its details still fit one box.
   */
  notesBytes: 3000,
  /** More than a command can have: 21 scripts at most (daemon/policy/scriptsRun) and its input. */
  notesPerRequest: 24,
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
