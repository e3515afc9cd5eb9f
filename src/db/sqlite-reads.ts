/**
 * The hottest reads on SQLite (status queries), run on its one connection without going through
 * kysely's connection queue and query pipeline, and grouped.
 *
 * Reads asked for while the event loop handles one round of I/O run together right after it
 * (`setImmediate`), in one read transaction. Each autocommit statement takes and releases SQLite's
 * WAL read lock (two `fcntl` calls and an `fstat`), which costs more than the primary-key lookup
 * itself; a group pays for that once (docs/performance.md).
 * Under load, the requests of one round arrive together, so groups form by themselves.
 *
 * A read never sees rows a transaction has written but not committed: when kysely has a
 * transaction open on the connection (a write batch awaiting between its statements), the group
 * queues behind it in kysely like any query.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { isUnavailableError } from './errors.ts';

interface Read {
  sql: string;
  parameters: readonly unknown[];
  resolve(row: unknown): void;
  reject(err: unknown): void;
}

export type QueuedRead = (sql: string, parameters: readonly unknown[]) => Promise<unknown>;

export class SqliteReads {
  private pending: Read[] = [];

  constructor(
    private readonly raw: BetterSqlite3.Database,
    /** The same read through kysely, for when a transaction holds the connection. */
    private readonly queued: QueuedRead,
  ) {}

  firstRow<T>(sql: string, parameters: readonly unknown[]): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve, reject) => {
      const read: Read = { sql, parameters, resolve: resolve as (row: unknown) => void, reject };
      if (this.pending.push(read) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const reads = this.pending;
    this.pending = [];
    if (this.raw.inTransaction) {
      for (const r of reads) this.queued(r.sql, r.parameters).then(r.resolve, r.reject);
      return;
    }
    let began = false;
    try {
      if (reads.length > 1) {
        this.raw.prepare('begin').run();
        began = true;
      }
      let unavailable: unknown = null;
      for (const r of reads) {
        if (unavailable) {
          // Each read would fail the same way, a busy database after waiting out the busy timeout
          // again with the event loop blocked meanwhile.
          r.reject(unavailable);
          continue;
        }
        try {
          r.resolve(this.raw.prepare(r.sql).get(r.parameters));
        } catch (err) {
          r.reject(err);
          if (isUnavailableError(err)) unavailable = err;
        }
      }
    } catch (err) {
      // `begin` failed: no read ran. (Rejecting a read that was already answered does nothing.)
      for (const r of reads) r.reject(err);
    } finally {
      if (began && this.raw.inTransaction) this.end();
    }
  }

  /** Ends the group's read transaction; it wrote nothing, so a failing commit can only roll back. */
  private end(): void {
    try {
      this.raw.prepare('commit').run();
    } catch {
      try {
        this.raw.prepare('rollback').run();
      } catch {
        // Nothing was written: a connection that cannot even roll back will fail the next query.
      }
    }
  }
}
