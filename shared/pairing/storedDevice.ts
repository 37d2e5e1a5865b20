import type { PairedCredential } from '../webauthn/pairedCredential.ts';

/**
 * The first columns of a paired phone's row, which the daemon (state.db) and the relay (each
 * fleet's store) both keep, in SQLite's text. Each side adds its own, then `revoked_at`.
 */
export const PAIRED_DEVICE_COLUMNS = `
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  device_key TEXT NOT NULL,
  ecdh_key TEXT NOT NULL,
  credential_id TEXT NOT NULL UNIQUE,
  credential_key TEXT NOT NULL,
  counter INTEGER NOT NULL,`;

export interface PairedDeviceRow {
  id: string;
  name: string;
  device_key: string;
  ecdh_key: string;
  credential_id: string;
  credential_key: string;
  counter: number;
  revoked_at: number | null;
}

/** The passkey a stored phone signs with, as the verifiers take it. */
export function credentialOfRow(row: PairedDeviceRow): PairedCredential {
  return { id: row.credential_id, publicKey: row.credential_key, counter: row.counter, device: row.id };
}
