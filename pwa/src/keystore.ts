import { toBase64url } from '../../shared/encoding/base64url.ts';
import {
  exportPublicKey,
  generateEcdhKeyPair,
  generateSigningKeyPair,
  keyId,
} from '../../shared/keys/p256.ts';
import type { Registration } from '../../shared/messages/pairing.ts';

/**
 * What the phone keeps, in IndexedDB (readable by the page and the service worker alike). The
 * private keys are non-extractable CryptoKeys: script can use them, never read them out.
 */
export interface DeviceIdentity {
  id: string;
  name: string;
  signing: CryptoKeyPair;
  ecdh: CryptoKeyPair;
  deviceKey: string;
  ecdhKey: string;
}

export interface Passkey {
  credentialId: string;
  /** Kept to present again when pairing with further hosts (its challenge binds our keys). */
  registration: Registration;
}

export interface Membership {
  fleet: string;
  hosts: { id: string; name: string }[];
  joinedAt: number;
}

const DB = 'latch';
const STORE = 'keys';

function database(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function read<T>(key: string): Promise<T | undefined> {
  const db = await database();
  return new Promise((resolve, reject) => {
    const request = db.transaction(STORE, 'readonly').objectStore(STORE).get(key);
    request.onsuccess = () => resolve(request.result as T | undefined);
    request.onerror = () => reject(request.error);
  });
}

async function write(key: string, value: unknown): Promise<void> {
  const db = await database();
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(STORE, 'readwrite');
    transaction.objectStore(STORE).put(value, key);
    transaction.oncomplete = () => resolve();
    transaction.onerror = () => reject(transaction.error);
  });
}

/**
 * The relay's last answer to one of the app's reads, kept to show offline: what the relay sent,
 * so requests stay sealed boxes here, opened only when shown.
 */
export interface LastKnown {
  at: number;
  json: string;
}

/** The sealed box a tapped notification's push carried: its request's screen then needs no fetch. */
export interface TappedPush {
  fleet: string;
  requestId: string;
  box: string;
  pushedAt: number;
}

export const loadIdentity = () => read<DeviceIdentity>('identity');
export const saveTappedPush = (tapped: TappedPush) => write('tapped-push', tapped);
/** Used once: a screen opened again (a reload, from the list) asks the relay how the request stands. */
export async function takeTappedPush(): Promise<TappedPush | undefined> {
  const tapped = await read<TappedPush | null>('tapped-push');
  if (tapped) await write('tapped-push', null);
  return tapped ?? undefined;
}
export const loadLastKnown = (path: string) => read<LastKnown>(`last-known ${path}`);
export const saveLastKnown = (path: string, kept: LastKnown) => write(`last-known ${path}`, kept);
export const loadPasskey = () => read<Passkey>('passkey');
export const savePasskey = (passkey: Passkey) => write('passkey', passkey);
export const loadMemberships = async () => (await read<Membership[]>('memberships')) ?? [];
/** The rules this phone allowed with an approval (allowedRules.ts): kept here, never on the relay. */
export const loadAllowedRules = async <T>() => (await read<T[]>('allowed-rules')) ?? [];
export const saveAllowedRules = (rules: unknown[]) => write('allowed-rules', rules);
/** Lock-screen privacy: notifications then name the host alone. Off until the person turns it on. */
export const loadLockScreenPrivacy = async () => (await read<boolean>('lock-screen-privacy')) === true;
export const saveLockScreenPrivacy = (on: boolean) => write('lock-screen-privacy', on);

/** This phone's keys, made on first use: a device key to sign with and an ECDH key to decrypt with. */
export async function ensureIdentity(name: string): Promise<DeviceIdentity> {
  const existing = await loadIdentity();
  if (existing) return existing;
  const signing = await generateSigningKeyPair(false);
  const ecdh = await generateEcdhKeyPair(false);
  const deviceKeyRaw = await exportPublicKey(signing.publicKey);
  const identity: DeviceIdentity = {
    id: await keyId(deviceKeyRaw),
    name,
    signing,
    ecdh,
    deviceKey: toBase64url(deviceKeyRaw),
    ecdhKey: toBase64url(await exportPublicKey(ecdh.publicKey)),
  };
  await write('identity', identity);
  return identity;
}

export async function addMembership(fleet: string, host: { id: string; name: string }): Promise<void> {
  const memberships = await loadMemberships();
  const existing = memberships.find((membership) => membership.fleet === fleet);
  if (existing) {
    if (!existing.hosts.some((known) => known.id === host.id)) existing.hosts.push(host);
  } else {
    memberships.push({ fleet, hosts: [host], joinedAt: Date.now() });
  }
  await write('memberships', memberships);
}
