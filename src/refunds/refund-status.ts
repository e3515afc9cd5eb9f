/** How a stored refund is shown to the merchant (`refund_status`, the sandbox's completion). */
import { toRupees } from '../money.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import type { RefundStatusResponse } from './refunds.schemas.ts';

/** A refund as `refund_status` shows it. */
export function toRefundStatus(r: TransactionRow): RefundStatusResponse {
  return {
    refund_id: r.payment_id,
    payment_id: r.refund_of ?? '',
    merchant_refund_no: r.merchant_order_no,
    status: r.status,
    money: { amount: toRupees(r.amount), currency: r.currency },
    utr: r.utr,
  };
}
