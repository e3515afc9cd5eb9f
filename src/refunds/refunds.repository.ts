/** SQL for refunds: the pay-ins they draw on, locked, and what each pay-in has refunded so far. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
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
