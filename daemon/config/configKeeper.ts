import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import type { AuditLog } from '../audit/auditLog.ts';
import type { StateStore } from '../state/stateStore.ts';
import { ConfigError, parseConfig, type LatchConfig } from './config.ts';
import { configChanges, type ConfigChange } from './configTightening.ts';
import { readRegularFile } from './readRegularFile.ts';

export type ConfigView =
  | {
      ok: true;
      /** The config in force: the file's, or, while a loosening waits, the last approved one. */
      config: LatchConfig;
      loosening?: { hash: string; text: string; changes: ConfigChange[] };
    }
  | { ok: false; message: string };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Keeps the config in force, as PolicyKeeper keeps the policy: the daemon remembers the last
 * approved config.toml. A change that only tightens takes effect at once; one that loosens (a
 * lower quorum, a fallback switched on, a longer timeout, strict off, more text in the audit,
 * another relay) waits, with the approved config in force, until a phone approves it.
 */
export class ConfigKeeper {
  readonly #path: string;
  readonly #store: StateStore;
  readonly #audit: AuditLog;
  readonly #env: NodeJS.ProcessEnv;
  #seen: { mtimeMs: number; size: number; approvedHash: string | undefined; view: ConfigView } | undefined;
  #approved: { text: string; config: LatchConfig | undefined } | undefined;

  constructor(path: string, store: StateStore, audit: AuditLog, env: NodeJS.ProcessEnv = process.env) {
    this.#path = path;
    this.#store = store;
    this.#audit = audit;
    this.#env = env;
  }

  /** Records `text` as approved: by `latch init`, or once a phone approved a loosening. */
  approve(text: string, by: string): void {
    this.#store.setMeta('config_text', text);
    this.#audit.append({ event: 'config_approved', hash: sha256(text), by });
    this.#seen = undefined;
  }

  /**
   * The config last approved, as the state database records it: the one in force, and still the
   * one while the file is broken or missing (for the audit log and the daemon's timers, which
   * must not fall back to defaults that may keep less). Read without looking at the file.
   * Undefined before any approval, or when the record no longer parses.
   */
  approved(): LatchConfig | undefined {
    const text = this.#store.meta('config_text');
    if (text === undefined) return undefined;
    if (this.#approved?.text !== text) {
      let config: LatchConfig | undefined;
      try {
        config = parseConfig(text, `${this.#path} (as last approved)`, this.#env);
      } catch {
        config = undefined;
      }
      this.#approved = { text, config };
    }
    return this.#approved.config;
  }

  /** The config to enforce now. Cheap when nothing changed (one stat, one lookup). */
  current(): ConfigView {
    if (!existsSync(this.#path))
      return { ok: false, message: `no configuration at ${this.#path}; run latch init` };
    const { mtimeMs, size } = statSync(this.#path);
    const approvedHash = this.#store.meta('config_text');
    if (
      this.#seen?.mtimeMs === mtimeMs &&
      this.#seen.size === size &&
      this.#seen.approvedHash === approvedHash
    )
      return this.#seen.view;
    const view = this.#read();
    this.#seen = { mtimeMs, size, approvedHash: this.#store.meta('config_text'), view };
    return view;
  }

  #read(): ConfigView {
    const read = readRegularFile(this.#path);
    if (!read.ok) return read;
    const { text } = read;
    let next: LatchConfig;
    try {
      next = parseConfig(text, this.#path, this.#env);
    } catch (error) {
      if (error instanceof ConfigError) return { ok: false, message: error.message };
      throw error;
    }
    const approvedText = this.#store.meta('config_text');
    if (approvedText === undefined) {
      // A state from before configs were kept: the file as found becomes the baseline, said aloud.
      this.approve(text, 'first start with a state that recorded no config');
      return { ok: true, config: next };
    }
    if (approvedText === text) return { ok: true, config: next };
    let approved: LatchConfig;
    try {
      approved = parseConfig(approvedText, `${this.#path} (as last approved)`, this.#env);
    } catch (error) {
      // An approval recorded by an older Latch that this one no longer reads: deny, and say why.
      if (error instanceof ConfigError) return { ok: false, message: error.message };
      throw error;
    }
    const changes = configChanges(approved, next);
    if (changes.every((change) => change.tightens)) {
      this.approve(
        text,
        `tightening (takes effect at once): ${changes.map((change) => change.setting).join(', ') || 'no setting changed'}`,
      );
      return { ok: true, config: next };
    }
    return { ok: true, config: approved, loosening: { hash: sha256(text), text, changes } };
  }
}
