/** The status view: how a stored payment of either kind is shown to the merchant (docs/integration.md §4). */
import type { Database } from '../db/database.ts';
import type { StatusView } from '../db/status-reads.ts';
import { AppError } from '../errors.ts';
import { toRupees } from '../money.ts';
import { findStatus, findStatusByOrderNo } from '../transactions/transactions.repository.ts';
import type { StatusResponse } from './payments.schemas.ts';

/** What a status query names (CONTRACT §9): the payment_id, or the merchant's own order number. */
export interface StatusRef {
  payment_id?: string;
  merchant_order_no?: string;
}

/**
 * One merchant's payment of one kind, by either name; another merchant's, the other kind's or an
 * unknown one is 404 PAYMENT_NOT_FOUND.
 */
export async function readStatusOf(
  database: Pick<Database, 'db' | 'readStatus'>,
  merchantId: string,
  kind: 'payin' | 'payout',
  ref: StatusRef,
): Promise<StatusView> {
  const byOrder = ref.merchant_order_no !== undefined;
  const row = byOrder
    ? await findStatusByOrderNo(database.db, merchantId, kind, ref.merchant_order_no!)
    : await findStatus(database, merchantId, kind, ref.payment_id ?? '');
  if (!row)
    throw new AppError(
      'PAYMENT_NOT_FOUND',
      `No ${kind === 'payin' ? 'pay-in' : 'payout'} with this ${byOrder ? 'merchant_order_no' : 'payment_id'}`,
    );
  return row;
}

/** A payment's status response, amounts in rupees. */
export function toStatusResponse(v: {
  status: string;
  amount: number;
  currency: string;
  channel_txn_id: string;
  utr: string;
}): StatusResponse {
  return {
    status: v.status as StatusResponse['status'],
    money: { amount: toRupees(v.amount), currency: v.currency },
    channel_txn_id: v.channel_txn_id,
    utr: v.utr,
  };
}
