/**
 * The SQLite connection under the gateway's kysely instance: the file's settings, compiled
 * statements kept, write outcomes watched (nothing else can tell that a full disk has room again),
 * and the dialect whose write transactions take the lock at their start.
 */
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type TransactionSettings,
} from 'kysely';
import type { ConnectionLog } from './connection-health.ts';
import { isUnavailableError } from './errors.ts';

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

/**
 * A better-sqlite3 connection to `file` as the gateway uses it: WAL, a busy timeout, foreign keys,
 * fresh planner statistics, compiled statements cached, and every write's outcome reported to `health`.
 */
export function cachingSqlite(file: string, health: ConnectionLog): BetterSqlite3.Database {
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
export class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection, settings: TransactionSettings) => {
      const begin = settings.isolationLevel === 'serializable' ? 'begin immediate' : 'begin';
      await connection.executeQuery(CompiledQuery.raw(begin));
    };
    return driver;
  }
}
