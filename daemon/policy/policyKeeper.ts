import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import type { AuditLog } from '../audit/auditLog.ts';
import type { StateStore } from '../state/stateStore.ts';
import { parsePolicy, PolicyError, type Policy } from './policy.ts';
import { isTightening } from './tightening.ts';
import { readRegularFile } from '../config/readRegularFile.ts';

export type PolicyView =
  | {
      ok: true;
      policy: Policy;
      hash: string;
      /** A looser file waiting for a phone; `approvedText` is the policy in force meanwhile. */
      loosening?: { hash: string; text: string; approvedText: string };
    }
  | { ok: false; message: string };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Keeps the policy in force. The daemon remembers the last approved policy (its text and hash).
 * When the file changes: a tightening takes effect at once; a loosening waits, with the approved
 * policy still in force, until a phone approves it (daemon/gate/loosening.ts). A file
 * that does not parse makes every gated call deny until it is fixed.
 */
export class PolicyKeeper {
  readonly #path: string;
  readonly #store: StateStore;
  readonly #audit: AuditLog;
  #seen: { mtimeMs: number; size: number; view: PolicyView } | undefined;

  constructor(path: string, store: StateStore, audit: AuditLog) {
    this.#path = path;
    this.#store = store;
    this.#audit = audit;
  }

  /** Records `text` as approved: by `latch init`, or once a phone approved a loosening. */
  approve(text: string, by: string): void {
    this.#store.setMeta('policy_text', text);
    this.#store.setMeta('policy_hash', sha256(text));
    this.#audit.append({ event: 'policy_approved', hash: sha256(text), by });
    this.#seen = undefined;
  }

  /** The policy to enforce now. Cheap when the file has not changed (one stat). */
  current(): PolicyView {
    if (!existsSync(this.#path)) return { ok: false, message: `no policy at ${this.#path}; run latch init` };
    const { mtimeMs, size } = statSync(this.#path);
    if (this.#seen && this.#seen.mtimeMs === mtimeMs && this.#seen.size === size && !this.#pendingChanged())
      return this.#seen.view;
    const view = this.#read();
    this.#seen = { mtimeMs, size, view };
    return view;
  }

  #pendingChanged(): boolean {
    const seen = this.#seen?.view;
    return seen !== undefined && seen.ok && seen.hash !== this.#store.meta('policy_hash');
  }

  #read(): PolicyView {
    const read = readRegularFile(this.#path);
    if (!read.ok) return read;
    const { text } = read;
    const hash = sha256(text);
    let next: Policy;
    try {
      next = parsePolicy(text);
    } catch (error) {
      if (error instanceof PolicyError)
        return { ok: false, message: `the policy ${this.#path} is malformed: ${error.message}` };
      throw error;
    }
    const approvedText = this.#store.meta('policy_text');
    if (approvedText === undefined) {
      // No record (a fresh state): the file as found is the baseline, and the audit says so.
      this.approve(text, 'first start');
      return { ok: true, policy: next, hash };
    }
    const approvedHash = sha256(approvedText);
    if (hash === approvedHash) return { ok: true, policy: next, hash };
    const approved = parsePolicy(approvedText);
    if (isTightening(approved, next)) {
      this.approve(text, 'tightening (takes effect at once)');
      return { ok: true, policy: next, hash };
    }
    return { ok: true, policy: approved, hash: approvedHash, loosening: { hash, text, approvedText } };
  }
}
