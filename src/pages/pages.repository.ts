/** SQL for the hosted pages: one query per page view, the transaction with its merchant. */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';

/** A pay-in with what its page shows of the merchant. */
export interface PageRow {
  txn: TransactionRow;
  merchantName: string;
  merchantVpa: string;
}

/** The pay-in with this id and its merchant, or undefined (unknown id, or a payout). */
export async function findPagePayin(db: Kysely<Tables>, paymentId: string): Promise<PageRow | undefined> {
  const row = await db
    .selectFrom('transactions as t')
    .innerJoin('merchants as m', 'm.id', 't.merchant_id')
    .selectAll('t')
    .select(['m.name as merchant_name', 'm.vpa as merchant_vpa'])
    .where('t.payment_id', '=', paymentId)
    .where('t.kind', '=', 'payin')
    .executeTakeFirst();
  if (!row) return undefined;
  const { merchant_name, merchant_vpa, ...txn } = row;
  return { txn, merchantName: merchant_name, merchantVpa: merchant_vpa };
}
