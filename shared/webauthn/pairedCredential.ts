/** A phone's passkey as the host stored it at pairing. */
export interface PairedCredential {
  /** The credential id, base64url. */
  id: string;
  /** The COSE_Key from the registration's attested credential data, base64url. */
  publicKey: string;
  /** The highest signature counter seen so far. */
  counter: number;
  /** The device (phone) this passkey was created with. */
  device: string;
}
