/** SQL for refunds: the pay-ins they draw on, with what each has refunded so far. */
import { sql, type Kysely } from 'kysely';
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

/** A pay-in as a refund reads it, with what its refunds that are not FAILED add up to (paise). */
export type RefundablePayin = RefundedPayin & { refunded: number };

/**
 * The pay-ins among `paymentIds`, each with the sum of its refunds that are not FAILED, in one
 * statement. The caller holds the lock of every wallet these pay-ins' refunds draw on
 * (`lockAvailable`), and every refund of a pay-in is written under its wallet's lock: read after
 * that lock, in a statement of its own (PostgreSQL's read-committed snapshot is taken when a
 * statement starts), the sums include each refund committed before it. A pay-in's own row is not
 * locked: once SUCCESS it never changes.
 */
export async function refundablePayins(
  db: Kysely<Tables>,
  paymentIds: string[],
): Promise<Map<string, RefundablePayin>> {
  const payins = new Map<string, RefundablePayin>();
  const named = namedPaymentIds(db, paymentIds);
  if (!named) return payins;
  const rows = await db
    .selectFrom('transactions as p')
    .select(REFUNDED_PAYIN_COLUMNS)
    .select((eb) =>
      eb
        .selectFrom('transactions as r')
        .select(sql<string>`cast(coalesce(sum(r.amount), 0) as text)`.as('total'))
        .whereRef('r.refund_of', '=', 'p.payment_id')
        .where('r.status', '<>', 'FAILED')
        .as('refunded'),
    )
    .where('p.payment_id', 'in', named)
    .where('p.kind', '=', 'payin')
    .execute();
  for (const { refunded, ...payin } of rows)
    payins.set(payin.payment_id, { ...payin, refunded: Number(refunded ?? 0) });
  return payins;
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
