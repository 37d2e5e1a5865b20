import type { SqliteDatabase, SqliteStatement } from './sqlite.ts';

/**
 * Each statement prepared once and kept: a statement prepared per call holds native memory until
 * a full GC finds it.
 */
export class PreparedStatements {
  readonly #db: SqliteDatabase;
  readonly #statements = new Map<string, SqliteStatement>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  get(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
