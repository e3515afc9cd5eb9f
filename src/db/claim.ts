/**
 * Claiming due work with a lease, the one way background work is taken in this codebase (the
 * transaction worker and the callback dispatcher): a row is due when its due time has come and no
 * lease is running on it; claiming sets the lease and returns the rows. Several processes on
 * PostgreSQL claim side by side and never take the same row (`FOR UPDATE SKIP LOCKED`, as
 * graphile-worker's getJobs does); on SQLite the single statement is atomic on its own.
 *
 * A claim whose answer is lost (the connection dropped after PostgreSQL had applied it) leaves
 * rows leased to nobody. A claim with an owner marks its rows with it (`lease_owner`, a column
 * of the claim's own that nothing else reads), so that once the database is back the claimant can
 * give exactly those rows back (`giveBack`) instead of leaving them until their lease runs out.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './database.ts';
import { isUnavailableError } from './errors.ts';
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

/**
 * `status in ('A', 'B')` with the open values written into the statement: a partial index on the
 * open rows serves only a statement whose condition is the index's own, which SQLite checks on the
 * statement's text and PostgreSQL cannot check against a parameter of a generic plan.
 */
export function isOpen<T extends keyof Tables>(work: WorkTable<T>): RawBuilder<boolean> {
  for (const value of work.open) if (!/^[A-Za-z_]+$/.test(value)) throw new Error(`not a state: ${value}`);
  const values = work.open.map((v) => `'${v}'`).join(', ');
  return sql<boolean>`${sql.ref(work.stateColumn ?? 'status')} in (${sql.raw(values)})`;
}

export async function claimDue<T extends keyof Tables>(
  database: Pick<Database, 'db' | 'lockRows'>,
  work: WorkTable<T>,
  now: number,
  leaseMs: number,
  limit: number,
  owner?: string,
  /** Keys the claimant still has in hand (their leases may have run out): not claimed again. */
  inHand: readonly string[] = [],
  /** Only the rows whose `column` holds `value` (one channel's transactions, say). */
  only?: { column: keyof Tables[T] & string; value: string },
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
    .$if(only !== undefined, (q) => q.where(only!.column as string, '=', only!.value))
    .where(isOpen(work))
    .where(dueAt, '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .$if(inHand.length > 0, (q) => q.where(key, 'not in', inHand))
    .orderBy(dueAt)
    .limit(limit);
  const rows = await db
    .updateTable(table)
    .set({ ...work.alsoSet, lease_until: now + leaseMs, ...(owner !== undefined && { lease_owner: owner }) })
    // No second status condition here: the subquery already has it (PostgreSQL re-checks it on the
    // locked rows), and on SQLite a condition on the outer UPDATE makes it scan every open row.
    .where(key, 'in', database.lockRows(due, 'skip-locked'))
    .returningAll()
    .execute();
  return rows as unknown as Tables[T][];
}

/** A claim as its claimant knows it: the owner it marked its rows with, when, and until when. */
export interface Claim {
  owner: string;
  now: number;
  leaseUntil: number;
  /** The claim took only the rows whose `column` holds `value` (`claimDue`'s `only`). */
  only?: { column: string; value: string };
}

/**
 * Gives back the rows `claim` took: only rows still carrying its owner and lease (nobody has
 * claimed them since). `undo` reverses the claim's `alsoSet` and may set `lease_until` itself
 * (null by default); both read the row as the claim left it.
 */
export async function giveBack<T extends keyof Tables>(
  database: Pick<Database, 'db'>,
  work: WorkTable<T>,
  claim: Claim,
  undo: Record<string, RawBuilder<unknown>> = {},
): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const db = database.db as unknown as Kysely<any>;
  const table: string = work.table;
  const dueAt: string = work.dueAt;
  await db
    .updateTable(table)
    .set({ lease_until: null, ...undo })
    // The claim took due rows and left their due time alone: the due index finds them.
    .$if(claim.only !== undefined, (q) => q.where(claim.only!.column, '=', claim.only!.value))
    .where(isOpen(work))
    .where(dueAt, '<=', claim.now)
    .where('lease_until', '=', claim.leaseUntil)
    .where('lease_owner', '=', claim.owner)
    .execute();
}

/**
 * The claims of one loop whose outcome is unknown because the database became unavailable during
 * them. Given back when it answers again; one whose lease has run out needs nothing more.
 */
export class LostClaims {
  private lost: Claim[] = [];

  /** A new claim, made now for `leaseMs`. */
  static start(now: number, leaseMs: number): Claim {
    return { owner: randomUUID(), now, leaseUntil: now + leaseMs };
  }

  /** The claim failed with `err`: its rows are to be given back if the database was unavailable. */
  failed(claim: Claim, err: unknown): void {
    if (isUnavailableError(err)) this.lost.push(claim);
  }

  /** Gives each lost claim back with `giveBackOne`; one that fails again stays for the next call. */
  async giveBack(now: number, giveBackOne: (claim: Claim) => Promise<void>): Promise<void> {
    this.lost = this.lost.filter((c) => c.leaseUntil > now);
    while (this.lost.length > 0) {
      await giveBackOne(this.lost[0]!);
      this.lost.shift();
    }
  }
}
