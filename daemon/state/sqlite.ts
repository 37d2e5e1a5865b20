import { createRequire } from 'node:module';

type SqlValue = string | number | bigint | null | Uint8Array;

/** The part of a prepared statement Latch uses; node:sqlite's and better-sqlite3's agree on it. */
export interface SqliteStatement {
  run(...params: SqlValue[]): { changes: number | bigint };
  get(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): unknown[];
}

interface SqliteDriver {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  close(): unknown;
}

/** Node's own SQLite, typed here because @types/node 20 does not know it. */
interface NodeSqlite {
  DatabaseSync: new (path: string) => SqliteDriver;
}

/**
 * Node's own SQLite (`node:sqlite`, Node 22.13 and later) where Node has it, else better-sqlite3
 * (Node 20). Not better-sqlite3 everywhere: version 12 aborts the whole process on Node 24 when
 * the garbage collector frees a statement (an assertion in Node's ObjectWrap), and version 13,
 * which fixes that, does not run on Node 20.
 */
function openDriver(path: string): SqliteDriver {
  const nodeSqlite = withoutSqliteWarning(
    () => process.getBuiltinModule('node:sqlite') as NodeSqlite | undefined,
  );
  if (nodeSqlite) return new nodeSqlite.DatabaseSync(path);
  let BetterSqlite: new (path: string) => SqliteDriver;
  try {
    BetterSqlite = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite;
  } catch (error) {
    throw new Error(
      `Node ${process.versions.node} has no SQLite of its own, and better-sqlite3 does not load ` +
        `(${(error as Error).message.split('\n')[0]}): use Node 22.13 or later, or reinstall Latch ` +
        `so that npm builds better-sqlite3`,
    );
  }
  return new BetterSqlite(path);
}

/**
 * Node 22 warns on stderr that its SQLite is experimental, at every command and hook: a warning
 * the user can do nothing about. Only that one is dropped.
 */
function withoutSqliteWarning<T>(load: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (rest[0] === 'ExperimentalWarning' && String(warning).startsWith('SQLite ')) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return load();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** SQLite's primary result codes (sqlite.org/rescode.html) that Latch tells apart. */
const SQLITE_CODES = { BUSY: 5, CORRUPT: 11, NOTADB: 26 } as const;

/**
 * Whether SQLite failed with one of `codes`: better-sqlite3 names the code (SQLITE_BUSY, and the
 * extended codes after it), node:sqlite numbers it (errcode).
 */
function failedWith(error: unknown, codes: (keyof typeof SQLITE_CODES)[]): boolean {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  if (typeof errcode === 'number') return codes.some((name) => SQLITE_CODES[name] === (errcode & 0xff));
  return (
    typeof code === 'string' &&
    codes.some((name) => code === `SQLITE_${name}` || code.startsWith(`SQLITE_${name}_`))
  );
}

/** Whether SQLite found the file damaged or not a database. */
export const isDamagedDatabase = (error: unknown): boolean => failedWith(error, ['CORRUPT', 'NOTADB']);

/** Whether another connection holds the database's lock (past the busy timeout). */
export const isLockedDatabase = (error: unknown): boolean => failedWith(error, ['BUSY']);

/**
 * A SQLite database on either driver, with transactions that nest: the inner joins the outer, so
 * that what one decision records (its state, its counter, its audit lines) is one commit.
 */
export class SqliteDatabase {
  readonly #driver: SqliteDriver;
  #transactionDepth = 0;
  /** The undos of the outermost transaction's work so far, inner ones included. */
  #undos: (() => void)[] = [];
  /** What waits for the outermost commit: an answer is given only once its record is durable. */
  #afterCommit: (() => void)[] = [];

  constructor(path: string) {
    this.#driver = openDriver(path);
    // The CLI and the daemon share the file: wait for the other's write lock rather than fail.
    this.#driver.exec('PRAGMA busy_timeout = 5000');
  }

  exec(sql: string): void {
    this.#driver.exec(sql);
  }

  prepare(sql: string): SqliteStatement {
    return this.#driver.prepare(sql);
  }

  close(): void {
    this.#driver.close();
  }

  /**
   * Runs `work` in one transaction, committed when it returns and rolled back when it throws.
   * Inside another, it joins it: its writes commit or roll back with the outer work's.
   * `immediate` takes the write lock at the start, for work that reads what it then writes (an
   * inner transaction has the outer's lock). `undo` takes back what the work did outside the
   * database, when the work, any work after it in the same transaction, or the commit fails,
   * before the rollback lets another process write.
   */
  transaction<T>(
    work: () => T,
    { immediate = false, undo }: { immediate?: boolean; undo?: () => void } = {},
  ): T {
    if (this.#transactionDepth > 0) {
      if (undo) this.#undos.push(undo);
      return work();
    }
    this.#driver.exec(immediate ? 'BEGIN IMMEDIATE' : 'BEGIN');
    this.#transactionDepth++;
    this.#undos = undo ? [undo] : [];
    this.#afterCommit = [];
    let result: T;
    try {
      result = work();
      this.#driver.exec('COMMIT');
    } catch (error) {
      for (const undoOne of this.#undos.reverse()) this.#undo(undoOne);
      this.#rollBack();
      throw error;
    } finally {
      this.#transactionDepth--;
      this.#undos = [];
    }
    for (const effect of this.#afterCommit.splice(0)) effect();
    return result;
  }

  /**
   * Runs `effect` once what the transaction under way wrote is committed (at once outside one),
   * and never if it rolls back.
   */
  afterCommit(effect: () => void): void {
    if (this.#transactionDepth > 0) this.#afterCommit.push(effect);
    else effect();
  }

  /** An undo that fails too must not skip the rollback: the work's error is the one to report. */
  #undo(undo: () => void): void {
    try {
      undo();
    } catch {
      // What it could not take back, a check of its own finds (the audit chain at the next start).
    }
  }

  #rollBack(): void {
    try {
      this.#driver.exec('ROLLBACK');
    } catch {
      // SQLite has already rolled back after some errors (a full disk, an I/O error); the
      // error that ended the work is the one to report.
    }
  }
}
