/**
 * Opens the store named by DATABASE_URL: SQLite through better-sqlite3 (the embedded default)
 * or PostgreSQL through a `pg` pool. Both sit behind one kysely instance, so repositories are
 * written once; what differs between the two (row locks, advisory locks, LISTEN/NOTIFY, how the
 * hottest reads are grouped) is a method of the `Database` this returns, and no code outside
 * `src/db/` asks which database it has.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  SqliteDialect,
  sql,
  type DatabaseConnection,
  type Driver,
  type SelectQueryBuilder,
  type TransactionBuilder,
  type TransactionSettings,
} from 'kysely';
import type { Tables } from './schema.ts';
import { migrationProvider } from './migration-provider.ts';
import { SqliteReads } from './sqlite-reads.ts';
import { connectionLog, silentLogger, type ConnectionLog, type DatabaseLogger } from './connection-health.ts';
import { PgListener } from './pg-listener.ts';
import { nameStatements, StatementNames } from './pg-statements.ts';
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

/**
 * better-sqlite3 compiles a statement on every `prepare`; kysely prepares on every query.
 * Caching the compiled statements by their text removes that cost from every request. Batched
 * statements keep one text whatever their size (`json-records.ts`), so the set of texts is small;
 * a text longer than `MAX_CACHED_SQL` (none of ours) is compiled each time rather than kept.
 */
const MAX_CACHED_SQL = 4096;
const MAX_CACHED = 500;

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

/**
 * Reports each write's outcome to `health`: a refusal for being unavailable as lost, a success as
 * back. On SQLite nothing else can tell that a full disk has room again. COMMIT counts as a write
 * (SQLite calls it read-only, but in WAL mode it is where the pages are written).
 */
function watchWrites(stmt: BetterSqlite3.Statement, source: string, health: ConnectionLog): void {
  if (stmt.readonly && !/^\s*commit\b/i.test(source)) return;
  for (const method of ['run', 'all'] as const) {
    const call = stmt[method].bind(stmt) as (...args: unknown[]) => unknown;
    (stmt as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      try {
        const result = call(...args);
        health.back();
        return result;
      } catch (err) {
        if (isUnavailableError(err)) health.lost(err as Error);
        throw err;
      }
    };
  }
}

function cachingSqlite(file: string, health: ConnectionLog): BetterSqlite3.Database {
  const raw = new BetterSqlite3(file);
  raw.pragma('busy_timeout = 5000');
  enableWal(raw);
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  // Statistics for the planner, as SQLite advises for a long-lived connection: without them a
  // list filtered by a rare status walks the wrong index (docs/performance.md, Dashboard).
  // analysis_limit bounds the work to a sample of each index, so opening stays fast at any size.
  raw.pragma('analysis_limit = 1000');
  raw.pragma('optimize = 0x10002');
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((source: string) => {
    let stmt = cache.get(source);
    if (stmt) return stmt;
    stmt = prepare(source);
    watchWrites(stmt, source, health);
    if (source.length <= MAX_CACHED_SQL) {
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(source, stmt);
    }
    return stmt;
  }) as typeof raw.prepare;
  return raw;
}

/**
 * SQLite's dialect, with `writeTransaction`'s BEGIN IMMEDIATE. SQLite runs every transaction
 * serializable whatever it is asked for; the one level it is told, `serializable`, is the sign for
 * a transaction that must hold the write lock from its start. Every other begins deferred, as
 * kysely's does (the read-only snapshots of the ledger and the console among them).
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection, settings: TransactionSettings) => {
      const begin = settings.isolationLevel === 'serializable' ? 'begin immediate' : 'begin';
      await connection.executeQuery(CompiledQuery.raw(begin));
    };
    return driver;
  }
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
  const unavailable = (err: unknown) => {
    if (isUnavailableError(err)) health.lost(err as Error);
  };
  if (file !== null) {
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

  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // Without it, pg waits for a connection forever; with it, a request fails (503) in bounded time.
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    // No JIT compilation: a statement of the gateway runs in a millisecond, and compiling one costs
    // hundreds. PostgreSQL compiles when a plan's estimated cost passes jit_above_cost, and a range
    // whose bounds come from another table is estimated at a fixed share of its table (the sums of
    // refunds by their pay-ins' key ranges: 400 ms a batch at 850,000 transactions). An `options`
    // in DATABASE_URL takes the place of this one.
    options: '-c jit=off',
    // int8 columns hold paise and epoch milliseconds: both well inside Number's exact range.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An 'error' event without a listener ends the process. The pool listens on its idle
  // connections only; a connection checked out (between a transaction's statements, say) needs
  // its own. The query in flight fails with the error (503); the pool drops the connection.
  pool.on('error', (err) => health.lost(err));
  const names = new StatementNames();
  pool.on('connect', (client) => {
    client.on('error', (err) => health.lost(err));
    nameStatements(client, names);
    health.back();
  });
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
