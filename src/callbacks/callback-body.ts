/** The callback body of a final transaction, in the shape of its kind: a refund's (contract §12) or a payment's (§7). */
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { callbackBody, refundCallbackBody } from './signature.ts';

export function callbackBodyOf(
  txn: Pick<
    TransactionRow,
    'payment_id' | 'kind' | 'refund_of' | 'merchant_order_no' | 'amount' | 'currency' | 'utr'
  > & { status: 'SUCCESS' | 'FAILED' },
): string {
  if (txn.kind === 'refund') {
    return refundCallbackBody({
      refundId: txn.payment_id,
      paymentId: txn.refund_of ?? '',
      merchantRefundNo: txn.merchant_order_no,
      amount: txn.amount,
      currency: txn.currency,
      status: txn.status,
      utr: txn.utr,
    });
  }
  return callbackBody({
    paymentId: txn.payment_id,
    merchantOrderNo: txn.merchant_order_no,
    amount: txn.amount,
    currency: txn.currency,
    status: txn.status,
    utr: txn.utr,
  });
}
