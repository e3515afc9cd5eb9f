/**
 * The callback body and its signature (docs/integration.md §5). The amount token is written with
 * exactly two decimals, and the signature signs that same text: `payment_id:amount:status`, or for
 * a refund `refund_id:amount:status`.
 */
import { createHmac } from 'node:crypto';
import { formatAmount } from '../money.ts';

export interface CallbackFields {
  paymentId: string;
  merchantOrderNo: string;
  /** paise */
  amount: number;
  currency: string;
  /** REVERSED: a SUCCESS payout whose money the beneficiary's bank sent back (a second callback). */
  status: 'SUCCESS' | 'FAILED' | 'REVERSED';
  utr: string;
}

/** The exact bytes of a callback body. Written by hand so the amount keeps its two decimals. */
export function callbackBody(f: CallbackFields): string {
  return (
    `{"payment_id":${JSON.stringify(f.paymentId)},"merchant_order_no":${JSON.stringify(f.merchantOrderNo)},` +
    `"amount":${formatAmount(f.amount)},"currency":${JSON.stringify(f.currency)},` +
    `"status":${JSON.stringify(f.status)},"utr":${JSON.stringify(f.utr)}}`
  );
}

export interface RefundCallbackFields {
  refundId: string;
  /** The refunded pay-in's payment_id. */
  paymentId: string;
  merchantRefundNo: string;
  /** paise */
  amount: number;
  currency: string;
  status: 'SUCCESS' | 'FAILED';
  utr: string;
}

/** The exact bytes of a refund's callback body (contract §12). */
export function refundCallbackBody(f: RefundCallbackFields): string {
  return (
    `{"refund_id":${JSON.stringify(f.refundId)},"payment_id":${JSON.stringify(f.paymentId)},` +
    `"merchant_refund_no":${JSON.stringify(f.merchantRefundNo)},` +
    `"amount":${formatAmount(f.amount)},"currency":${JSON.stringify(f.currency)},` +
    `"status":${JSON.stringify(f.status)},"utr":${JSON.stringify(f.utr)}}`
  );
}

/** Lowercase hex HMAC-SHA256 of `payment_id:amount:status`, `amountText` as it appears in the body. */
export function signCallback(secret: string, paymentId: string, amountText: string, status: string): string {
  return createHmac('sha256', secret).update(`${paymentId}:${amountText}:${status}`).digest('hex');
}

/** The signature of a stored callback body: a refund's is over its refund_id, any other's over its payment_id. */
export function signBody(secret: string, body: string): string {
  const parsed = JSON.parse(body) as { refund_id?: string; payment_id: string; status: string };
  const amountText = /"amount":(-?\d+(?:\.\d+)?)/.exec(body)?.[1] ?? '';
  return signCallback(secret, parsed.refund_id ?? parsed.payment_id, amountText, parsed.status);
}
