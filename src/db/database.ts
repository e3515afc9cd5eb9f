/**
 * Opens the store named by DATABASE_URL: SQLite through better-sqlite3 (the embedded default)
 * or PostgreSQL through a `pg` pool. Both sit behind one kysely instance, so repositories are
 * written once; the few statements that differ ask `kind`.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import type { Tables } from './schema.ts';
import { migrationProvider } from './migrations.ts';
import { SqliteReads } from './sqlite-reads.ts';

export type DatabaseKind = 'sqlite' | 'postgres';

export interface Database {
  readonly kind: DatabaseKind;
  readonly db: Kysely<Tables>;
  /** For PostgreSQL, the connection string (LISTEN/NOTIFY needs a connection of its own). */
  readonly url: string;
  /**
   * The first row of a compiled read-only query (placeholders of this database's dialect), for the
   * hottest reads: status queries. On SQLite these skip kysely's connection queue and pipeline and
   * run in groups, one read transaction for the reads that arrive together (`sqlite-reads.ts`);
   * they never see a write batch's uncommitted rows. Not for use inside a transaction: on SQLite a
   * read asked for while the caller's own transaction is open would wait for that transaction.
   */
  firstRow<T>(sql: string, parameters: readonly unknown[]): Promise<T | undefined>;
  /** Throws when the store cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The SQLite file named by a DATABASE_URL, or null for PostgreSQL. */
export function sqlitePath(url: string): string | null {
  if (/^postgres(ql)?:\/\//i.test(url)) return null;
  return url.startsWith('sqlite:') ? url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : url;
}

/**
 * better-sqlite3 compiles a statement on every `prepare`; kysely prepares on every query.
 * Caching the compiled statements by their text removes that cost from every request.
 *
 * Batched writes make statements of every size from 1 to 100 rows, and a compiled 100-row insert
 * holds about 160 KB of native memory: long texts get a small cache of their own, so that they
 * cannot grow the process by tens of megabytes, while the short, hot statements stay cached.
 */
const LONG_SQL = 2048;
const MAX_SHORT = 500;
const MAX_LONG = 24;

/**
 * Switches the file to WAL. SQLite does not wait (busy timeout) for the lock this takes, so two
 * processes opening one new file at once (two `paygate migrate`s) can be refused with SQLITE_BUSY:
 * tried again every 50 ms for up to 5 s, like any other busy wait.
 */
function enableWal(raw: BetterSqlite3.Database): void {
  for (let attempt = 1; ; attempt++) {
    try {
      raw.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || attempt >= 100) throw err;
      // Synchronous like the rest of opening a database; only ever waits while another process
      // is switching the same new file.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
}

function cachingSqlite(file: string): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file);
  raw.pragma('busy_timeout = 5000');
  enableWal(raw);
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  const short = new Map<string, BetterSqlite3.Statement>();
  const long = new Map<string, BetterSqlite3.Statement>();
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((source: string) => {
    const cache = source.length > LONG_SQL ? long : short;
    let stmt = cache.get(source);
    if (stmt) {
      // Most recently used last, so that the first key is the one to drop.
      if (cache === long) {
        long.delete(source);
        long.set(source, stmt);
      }
      return stmt;
    }
    stmt = prepare(source);
    if (cache === short && short.size >= MAX_SHORT) short.clear();
    if (cache === long && long.size >= MAX_LONG) long.delete(long.keys().next().value as string);
    cache.set(source, stmt);
    return stmt;
  }) as typeof raw.prepare;
  return raw;
}

export function openDatabase(url: string): Database {
  const file = sqlitePath(url);
  if (file !== null) {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const raw = cachingSqlite(file);
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: raw }) });
    const reads = new SqliteReads(raw, (text, parameters) => queuedFirstRow(db, text, parameters));
    return {
      kind: 'sqlite',
      db,
      url,
      firstRow: <T>(text: string, parameters: readonly unknown[]) => reads.firstRow<T>(text, parameters),
      async ping() {
        raw.prepare('select 1').get();
      },
      async close() {
        await db.destroy();
      },
    };
  }

  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    // int8 columns hold paise and epoch milliseconds: both well inside Number's exact range.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A dropped idle connection must not crash the process; the next query gets a fresh one.
  pool.on('error', () => {});
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    url,
    firstRow: <T>(text: string, parameters: readonly unknown[]) => queuedFirstRow<T>(db, text, parameters),
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await db.destroy();
    },
  };
}

async function queuedFirstRow<T>(
  db: Kysely<Tables>,
  text: string,
  parameters: readonly unknown[],
): Promise<T | undefined> {
  return (await db.executeQuery<T>(CompiledQuery.raw(text, [...parameters]))).rows[0];
}

/**
 * Brings the schema up to date. Safe to run twice and from several processes at once:
 * kysely's migrator takes an advisory lock on PostgreSQL; on SQLite a competing writer
 * shows up as SQLITE_BUSY, and the run is simply repeated.
 */
export async function migrate(database: Database): Promise<string[]> {
  const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.kind) });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    const busy = /SQLITE_BUSY|database is locked|already exists|duplicate key/i.test(String(error));
    if (!busy || attempt >= 20) throw error;
    await new Promise((r) => setTimeout(r, 50 * attempt));
  }
}
