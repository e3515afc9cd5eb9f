/**
 * Opens the store named by DATABASE_URL: SQLite through better-sqlite3 (the embedded default)
 * or PostgreSQL through a `pg` pool. Both sit behind one kysely instance, so repositories are
 * written once; what differs between the two (row locks, advisory locks, LISTEN/NOTIFY, how the
 * hottest reads are grouped) is a method of the `Database` this returns, and no code outside
 * `src/db/` asks which database it has.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  type SelectQueryBuilder,
  type TransactionBuilder,
} from 'kysely';
import type { Tables } from './schema.ts';
import { migrationProvider } from './migration-provider.ts';
import { SqliteReads } from './sqlite-reads.ts';
import { connectionLog, silentLogger, type ConnectionLog, type DatabaseLogger } from './connection-health.ts';
import { PgListener } from './pg-listener.ts';
import { pgPool } from './pg-pool.ts';
import { cachingSqlite, ImmediateSqliteDialect } from './sqlite-connection.ts';
import { isUnavailableError } from './errors.ts';
import { postgresStatusReader, sqliteStatusReader, type StatusReader } from './status-reads.ts';
import type { DatabaseKind } from './kind.ts';

export type { DatabaseKind };

export interface Database {
  readonly kind: DatabaseKind;
  readonly db: Kysely<Tables>;
  /** For PostgreSQL, the connection string (LISTEN/NOTIFY needs a connection of its own). */
  readonly url: string;
  /** The database for messages and logs: host, port and name, or the file; never credentials. */
  readonly label: string;
  /**
   * A transaction's status view by id, merchant and kind, for the hottest read: status queries.
   * Reads that arrive together are grouped (`status-reads.ts`); on SQLite they skip kysely's
   * connection queue and never see a write batch's uncommitted rows. Not for use inside a
   * transaction: on SQLite a read asked for while the caller's own transaction is open would wait
   * for that transaction.
   */
  readStatus: StatusReader;
  /**
   * A transaction that reads rows before it writes what they decide. On SQLite it takes the write
   * lock at its start (BEGIN IMMEDIATE, waiting as any write does): a deferred transaction that read
   * first would be refused at its first write, without waiting, had another process committed in
   * between (SQLITE_BUSY_SNAPSHOT). On PostgreSQL an ordinary transaction: its reads take row locks.
   */
  writeTransaction(): TransactionBuilder<Tables>;
  /**
   * The rows `query` selects, locked for the caller's transaction on PostgreSQL: `wait` for rows
   * to be updated (other writers wait), `skip-locked` for claiming work (rows another process
   * holds are passed over). On SQLite the query as it is: a write transaction holds the whole file.
   */
  lockRows<DB, TB extends keyof DB, O>(
    query: SelectQueryBuilder<DB, TB, O>,
    mode: 'wait' | 'skip-locked',
  ): SelectQueryBuilder<DB, TB, O>;
  /**
   * Serialises transactions that take the same `key` (until `tx` ends), for work that must happen
   * once across processes: PostgreSQL's transaction-level advisory lock. On SQLite, where a write
   * transaction already excludes every other, nothing.
   */
  advisoryLock(tx: Kysely<Tables>, key: number): Promise<void>;
  /** Throws when the store cannot answer. */
  ping(): Promise<void>;
  /**
   * Calls `onSignal` on each `notify(channel)` from any process, and once after every (re)connect.
   * Null where one process serves the database (SQLite) and there is nobody else to hear.
   */
  listen(channel: string, onSignal: () => void): { stop(): Promise<void> } | null;
  /** Wakes the listeners of `channel` in every process; nothing on SQLite. */
  notify(channel: string): Promise<void>;
  /**
   * Calls `onBack` each time the store answers again after it was found unavailable: on
   * PostgreSQL a new connection or the LISTEN connection restored, on SQLite the first write that
   * succeeds after one was refused (a full disk, an I/O error). Returns the unsubscribe.
   */
  onAvailable(onBack: () => void): () => void;
  /** A caller found the store unavailable (`isUnavailableError`; anything else is ignored). */
  unavailable(err: unknown): void;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** How long a new PostgreSQL connection may take before the request fails (503). */
  connectTimeoutMs?: number;
  /** Where a lost connection is reported: once per outage, never with credentials. */
  logger?: DatabaseLogger;
}

/** The SQLite file named by a DATABASE_URL, or null for PostgreSQL. */
export function sqlitePath(url: string): string | null {
  if (/^postgres(ql)?:\/\//i.test(url)) return null;
  return url.startsWith('sqlite:') ? url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '') : url;
}

/** A DATABASE_URL without its credentials and options: `postgres://host:port/name`, or the SQLite file. */
export function databaseLabel(url: string): string {
  const file = sqlitePath(url);
  if (file !== null) return file;
  try {
    const u = new URL(url);
    return `postgres://${u.host}${u.pathname}`;
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  const label = databaseLabel(url);
  const file = sqlitePath(url);
  const health = connectionLog(options.logger ?? silentLogger, label);
  const opened: Opened = {
    url,
    label,
    health,
    unavailable: (err: unknown) => {
      if (isUnavailableError(err)) health.lost(err as Error);
    },
  };
  return file !== null ? openSqlite(file, opened) : openPostgres(opened, options.connectTimeoutMs ?? 5000);
}

/** What both databases' `Database` shares: where it is, and how its outages are reported. */
interface Opened extends Pick<Database, 'url' | 'label' | 'unavailable'> {
  health: ConnectionLog;
}

function openSqlite(file: string, { url, label, health, unavailable }: Opened): Database {
  let raw: BetterSqlite3.Database;
  try {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    raw = cachingSqlite(file, health);
  } catch (err) {
    throw new DatabaseSetupError({ label }, err);
  }
  const db = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: raw }) });
  const reads = new SqliteReads(raw, (text, parameters) => queuedFirstRow(db, text, parameters));
  return {
    kind: 'sqlite',
    db,
    url,
    label,
    readStatus: sqliteStatusReader(db, reads),
    writeTransaction: () => db.transaction().setIsolationLevel('serializable'),
    lockRows: (query) => query,
    async advisoryLock() {},
    async ping() {
      raw.prepare('select 1').get();
    },
    listen: () => null,
    async notify() {},
    onAvailable: health.onBack,
    unavailable,
    async close() {
      await db.destroy();
    },
  };
}

function openPostgres({ url, label, health, unavailable }: Opened, connectTimeoutMs: number): Database {
  const pool = pgPool(url, health, connectTimeoutMs);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    url,
    label,
    readStatus: postgresStatusReader(db),
    writeTransaction: () => db.transaction(),
    lockRows: (query, mode) => (mode === 'skip-locked' ? query.forUpdate().skipLocked() : query.forUpdate()),
    async advisoryLock(tx, key) {
      await sql`select pg_advisory_xact_lock(${key})`.execute(tx);
    },
    async ping() {
      await pool.query('select 1');
    },
    listen(channel, onSignal) {
      return new PgListener(url, channel, onSignal, health, connectTimeoutMs);
    },
    async notify(channel) {
      await sql`select pg_notify(${channel}, '')`.execute(db);
    },
    onAvailable: health.onBack,
    unavailable,
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

/** The database could not be reached or used: one line naming it, never its credentials. */
export class DatabaseSetupError extends Error {
  readonly unavailable: boolean;

  constructor(database: Pick<Database, 'label'>, cause: unknown) {
    const unavailable = isUnavailableError(cause);
    super(
      `${unavailable ? 'cannot reach' : 'cannot use'} the database ${database.label}: ${(cause as Error)?.message ?? String(cause)}`,
    );
    this.unavailable = unavailable;
  }
}

/**
 * Migrates once the database can be reached: while it cannot (a server still starting, a network
 * not yet up), waits with backoff, calling `onWait` once per attempt. Any other failure (a wrong
 * password, a database that does not exist) is thrown at once.
 */
export async function migrateWhenReachable(
  database: Database,
  onWait: (attempt: number, retryInMs: number, reason: string) => void,
): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrate(database);
    } catch (err) {
      if (!isUnavailableError(err)) throw new DatabaseSetupError(database, err);
      const retryInMs = Math.min(500 * 2 ** attempt, 10_000);
      onWait(attempt, retryInMs, (err as Error).message);
      await new Promise((r) => setTimeout(r, retryInMs));
    }
  }
}

/**
 * Brings the schema up to date. Safe to run twice and from several processes at once:
 * kysely's migrator takes an advisory lock on PostgreSQL. On SQLite it takes none (it runs
 * outside a transaction there), so two processes could apply one migration's statements
 * interleaved; the run holds SQLite's write lock instead (BEGIN IMMEDIATE, which waits out
 * the busy timeout), and a run refused anyway is simply repeated.
 */
export async function migrate(database: Database): Promise<string[]> {
  const migrator = new Migrator({
    db: database.db,
    provider: migrationProvider(database.kind),
    // Migration numbers are handed out to work in progress, which lands in any order: a database
    // that already ran a later one still takes an earlier one that arrives after it.
    allowUnorderedMigrations: true,
  });
  // Only a run with something to apply takes SQLite's write lock: every CLI command migrates first,
  // and must not wait on a serving process's writes when the schema is already up to date.
  const exclusive =
    database.kind === 'sqlite' && (await migrator.getMigrations()).some((m) => m.executedAt === undefined);
  if (database.kind === 'sqlite' && !exclusive) return [];
  for (let attempt = 1; ; attempt++) {
    let run: Awaited<ReturnType<Migrator['migrateToLatest']>>;
    if (exclusive) {
      try {
        await sql`begin immediate`.execute(database.db);
      } catch (err) {
        run = { error: err };
      }
      run ??= await migrator.migrateToLatest();
      await sql
        .raw(run.error ? 'rollback' : 'commit')
        .execute(database.db)
        .catch(() => {});
    } else {
      run = await migrator.migrateToLatest();
    }
    const { error, results } = run;
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    const busy = /SQLITE_BUSY|database is locked|already exists|duplicate key/i.test(String(error));
    if (!busy || attempt >= 20) throw error;
    await new Promise((r) => setTimeout(r, 50 * attempt));
  }
}
