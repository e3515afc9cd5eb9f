/** SQL for refunds: the pay-ins they draw on, locked, and what each pay-in has refunded so far. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { namedPaymentIds, type TransactionRow } from '../transactions/transactions.repository.ts';

/** What a refund is checked against and copies from the pay-in it returns. */
export const REFUNDED_PAYIN_COLUMNS = [
  'payment_id',
  'kind',
  'merchant_id',
  'status',
  'amount',
  'currency',
  'channel',
  'user_name',
  'user_phone',
  'user_email',
  'callback_url',
  'channel_payment_id',
  'channel_payment_txn_id',
] as const;

export type RefundedPayin = Pick<TransactionRow, (typeof REFUNDED_PAYIN_COLUMNS)[number]>;

/**
 * The pay-ins among `paymentIds`, their rows locked for the caller's transaction on PostgreSQL (in
 * payment_id order, so that two batches never lock two pay-ins in opposite orders): a refund is
 * checked against its pay-in's status and total under this lock. On SQLite the write transaction
 * already excludes every other.
 */
export async function lockPayins(
  db: Kysely<Tables>,
  locks: Pick<Database, 'lockRows'>,
  paymentIds: string[],
): Promise<Map<string, RefundedPayin>> {
  const payins = new Map<string, RefundedPayin>();
  const named = namedPaymentIds(db, paymentIds);
  if (!named) return payins;
  const query = db
    .selectFrom('transactions')
    .select(REFUNDED_PAYIN_COLUMNS)
    .where('payment_id', 'in', named)
    .where('kind', '=', 'payin')
    .orderBy('payment_id');
  for (const r of await locks.lockRows(query, 'wait').execute()) payins.set(r.payment_id, r);
  return payins;
}

/** What the refunds of each pay-in that are not FAILED add up to, in paise (read after `lockPayins`). */
export async function refundedSums(db: Kysely<Tables>, paymentIds: string[]): Promise<Map<string, number>> {
  const sums = new Map<string, number>();
  const named = namedPaymentIds(db, paymentIds);
  if (!named) return sums;
  const rows = await db
    .selectFrom('transactions')
    .select(['refund_of', sql<string>`cast(sum(amount) as text)`.as('total')])
    .where('refund_of', 'in', named)
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
