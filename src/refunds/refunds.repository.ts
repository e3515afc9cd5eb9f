/** SQL for refunds: the pay-ins they draw on, locked, and what each pay-in has refunded so far. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import { findTransactions, type TransactionRow } from '../transactions/transactions.repository.ts';

/** The most pay-ins read in one statement. */
const MAX_READ = 100;

/**
 * Reads the pay-ins that refund requests name, those that arrive together in one statement: under
 * load a refund then costs a share of one query rather than a query of its own, as a payout costs
 * none. Not for use inside a transaction (on SQLite the read would wait for it). What it reads only
 * decides the request's refusals and copies the customer onto the refund; the amounts are checked
 * again under lock in the batch (`refund-batch.writer.ts`).
 */
export function payinReader(db: Kysely<Tables>): (paymentId: string) => Promise<TransactionRow | undefined> {
  const group = new BatchQueue<string, TransactionRow | undefined>(
    async (ids) => {
      const byId = new Map((await findTransactions(db, [...new Set(ids)])).map((r) => [r.payment_id, r]));
      return ids.map((id) => byId.get(id));
    },
    MAX_READ,
    // No id can make the read fail: a failure is the database's, and the group fails as one.
    () => false,
  );
  return (paymentId) => group.submit(paymentId);
}

/**
 * The amounts of pay-ins, their rows locked for the caller's transaction on PostgreSQL (in
 * payment_id order, so that two batches never lock two pay-ins in opposite orders): every refund
 * of a pay-in is checked against its total under this lock. On SQLite the write transaction already
 * excludes every other.
 */
export async function lockPayins(
  db: Kysely<Tables>,
  locks: Pick<Database, 'lockRows'>,
  paymentIds: string[],
): Promise<Map<string, number>> {
  const amounts = new Map<string, number>();
  if (paymentIds.length === 0) return amounts;
  const query = db
    .selectFrom('transactions')
    .select(['payment_id', 'amount'])
    .where('payment_id', 'in', [...new Set(paymentIds)])
    .where('kind', '=', 'payin')
    .orderBy('payment_id');
  for (const r of await locks.lockRows(query, 'wait').execute()) amounts.set(r.payment_id, r.amount);
  return amounts;
}

/** What the refunds of each pay-in that are not FAILED add up to, in paise (read after `lockPayins`). */
export async function refundedSums(db: Kysely<Tables>, paymentIds: string[]): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  if (paymentIds.length === 0) return sums;
  const rows = await db
    .selectFrom('transactions')
    .select(['refund_of', sql<string>`cast(sum(amount) as text)`.as('total')])
    .where('refund_of', 'in', [...new Set(paymentIds)])
    .where('status', '<>', 'FAILED')
    .groupBy('refund_of')
    .execute();
  for (const r of rows) if (r.refund_of) sums.set(r.refund_of, Number(r.total));
  return sums;
}

/** The refunds of a pay-in, oldest first. */
export async function refundsOf(db: Kysely<Tables>, paymentId: string) {
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('refund_of', '=', paymentId)
    .orderBy('created_at')
    .orderBy('payment_id')
    .execute();
}
