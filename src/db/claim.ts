/**
 * Claiming due work with a lease, the one way background work is taken in this codebase (the
 * transaction worker and the callback dispatcher): a row is due when its due time has come and no
 * lease is running on it; claiming sets the lease and returns the rows. Several processes on
 * PostgreSQL claim side by side and never take the same row (`FOR UPDATE SKIP LOCKED`, as
 * graphile-worker's getJobs does); on SQLite the single statement is atomic on its own.
 */
import type { Kysely, RawBuilder } from 'kysely';
import type { Database } from './database.ts';
import type { Tables } from './schema.ts';

/** A work table: its key, its status column's open values, and the column holding the due time. */
export interface WorkTable<T extends keyof Tables> {
  table: T;
  key: keyof Tables[T] & string;
  open: readonly string[];
  /** The column holding the open values: `status` unless named. */
  stateColumn?: keyof Tables[T] & string;
  dueAt: keyof Tables[T] & string;
  /**
   * Further columns the claim sets, as expressions. They read the row as it was before the claim
   * (both databases evaluate SET on the old row), so they can tell a row whose last lease ran out.
   */
  alsoSet?: Partial<Record<keyof Tables[T] & string, RawBuilder<unknown>>>;
}

export async function claimDue<T extends keyof Tables>(
  database: Pick<Database, 'db' | 'lockRows'>,
  work: WorkTable<T>,
  now: number,
  leaseMs: number,
  limit: number,
): Promise<Tables[T][]> {
  // The columns are checked by WorkTable's types; kysely cannot follow a table chosen at run time.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const db = database.db as unknown as Kysely<any>;
  const table: string = work.table;
  const key: string = work.key;
  const dueAt: string = work.dueAt;
  const due = db
    .selectFrom(table)
    .select(key)
    .where(work.stateColumn ?? 'status', 'in', work.open)
    .where(dueAt, '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy(dueAt)
    .limit(limit);
  const rows = await db
    .updateTable(table)
    .set({ ...work.alsoSet, lease_until: now + leaseMs })
    // No second status condition here: the subquery already has it (PostgreSQL re-checks it on the
    // locked rows), and on SQLite a condition on the outer UPDATE makes it scan every open row.
    .where(key, 'in', database.lockRows(due, 'skip-locked'))
    .returningAll()
    .execute();
  return rows as unknown as Tables[T][];
}
