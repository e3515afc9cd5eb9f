/**
 * What reconciliation compares, as pure functions: a transaction as Paygate recorded it against what
 * the provider holds (Cashfree's transfer, Setu's payments on the QR, Setu's refund), answered as the differences
 * in status, amount and bank reference. A provider status Paygate maps to the same outcome is no
 * difference (CONTRACT §10: REVERSED with no SUCCESS recorded is FAILED).
 */
import { rupeesToPaise } from '../channels/channel-http.ts';
import { cashfreeState } from '../channels/cashfree/cashfree.channel.ts';
import type { ReconcileTxn } from './reconcile-reads.ts';
import type { Difference } from './reconcile.repository.ts';

/** A difference before the run knows whether Paygate already kept it aside. */
export type Found = Omit<Difference, 'channel'>;

type View = 'OPEN' | 'SUCCESS' | 'FAILED' | 'REVERSED';

function paygateView(t: ReconcileTxn): View {
  if (t.status === 'SUCCESS') return t.reversed_at === null ? 'SUCCESS' : 'REVERSED';
  // Paid after FAILED: its money is out, and a reversal of it is money back.
  if (t.status === 'FAILED') return t.paid_after_failed ? 'SUCCESS' : 'FAILED';
  return 'OPEN';
}

function paygateValue(t: ReconcileTxn): string {
  return paygateView(t) === 'REVERSED' ? 'REVERSED' : t.status;
}

/** A provider's text as a value to store and compare: printable, bounded. */
function text(v: unknown): string {
  const s =
    typeof v === 'string' ? v : typeof v === 'number' ? String(v) : v == null ? '' : JSON.stringify(v);
  return s
    .replace(/[^\x20-\x7e]/g, '')
    .trim()
    .slice(0, 64);
}

const CASHFREE_VIEW: Record<string, View> = {
  SUCCESS: 'SUCCESS',
  ACKNOWLEDGED: 'SUCCESS',
  FAILED: 'FAILED',
  REJECTED: 'FAILED',
  MANUALLY_REJECTED: 'FAILED',
  REVERSED: 'REVERSED',
};

/** A payout against Cashfree's transfer of the same `transfer_id` (null: Cashfree has none). */
export function compareTransfer(t: ReconcileTxn, transfer: Record<string, unknown> | null): Found[] {
  const pg = paygateView(t);
  if (!transfer) {
    // Not found is right for a payout refused at its first send; one still open is open at both
    // ends (not sent yet, or not shown yet), which the worker follows.
    if (pg === 'FAILED' || pg === 'OPEN') return [];
    return [status(t, t.payment_id, 'NOT_FOUND', null)];
  }
  const raw = text(transfer.status).toUpperCase();
  // Failed for Paygate's own account: the payout waits on its `channel_account` exception, open at both ends.
  if (pg === 'OPEN' && cashfreeState(transfer)?.accountCode) return [];
  const provider = Object.hasOwn(CASHFREE_VIEW, raw) ? CASHFREE_VIEW[raw]! : 'OPEN';
  const cf = text(transfer.cf_transfer_id);
  const reference = cf || t.payment_id;
  const agrees = provider === pg || (pg === 'FAILED' && provider === 'REVERSED');
  const amount = rupeesToPaise(transfer.transfer_amount);
  if (!agrees) return [status(t, reference, raw || '(none)', amount)];
  const found: Found[] = [];
  if (amount !== t.amount)
    found.push({
      reference,
      field: 'amount',
      providerValue: amount === null ? text(transfer.transfer_amount) : String(amount),
      paygateValue: String(t.amount),
      paymentId: t.payment_id,
      amount,
    });
  if (t.status === 'SUCCESS') {
    const utr = text(transfer.transfer_utr);
    if (utr !== t.utr) found.push(utrDifference(t, reference, utr, amount));
  }
  return found;
}

/**
 * A pay-in against every payment Setu lists on its QR. One successful payment is the pay-in's when
 * Paygate recorded it SUCCESS (the one with its utr, else the first); any other successful payment
 * is money Paygate did not record.
 */
export function comparePayments(t: ReconcileTxn, payments: Record<string, unknown>[]): Found[] {
  const pg = paygateView(t);
  const paid = payments.filter((p) => p.status === 'success');
  const found: Found[] = [];
  let own: Record<string, unknown> | undefined;
  if (pg === 'SUCCESS') {
    own = paid.find((p) => text(p.rrn) === t.utr) ?? paid[0];
    if (!own) {
      const last = payments.at(-1);
      found.push(status(t, t.channel_txn_id, last ? text(last.status) : 'NO_PAYMENT', null));
    } else {
      const reference = text(own.id) || t.channel_txn_id;
      const amount = typeof own.amount === 'number' && Number.isSafeInteger(own.amount) ? own.amount : null;
      if (amount !== t.amount)
        found.push({
          reference,
          field: 'amount',
          providerValue: amount === null ? text(own.amount) : String(amount),
          paygateValue: String(t.amount),
          paymentId: t.payment_id,
          amount,
        });
      const rrn = text(own.rrn);
      if (rrn !== t.utr) found.push(utrDifference(t, reference, rrn, amount));
    }
  }
  for (const p of paid) {
    if (p === own) continue;
    const amount = typeof p.amount === 'number' && Number.isSafeInteger(p.amount) ? p.amount : null;
    found.push(status(t, text(p.id) || t.channel_txn_id, 'success', amount));
  }
  return found;
}

/** Setu's refund statuses as Paygate's outcomes; `pending` and `initiated` are still open. */
const SETU_REFUND_VIEW: Record<string, View> = { success: 'SUCCESS', failed: 'FAILED' };

/** A live refund against Setu's refund of the same id (null: Setu has none under it). */
export function compareRefund(t: ReconcileTxn, refund: Record<string, unknown> | null): Found[] {
  const pg = paygateView(t);
  // Not found is right for a refund refused at its first send, and says nothing of one still open.
  if (!refund)
    return pg === 'FAILED' || pg === 'OPEN'
      ? []
      : [status(t, t.channel_txn_id || t.payment_id, 'NOT_FOUND', null)];
  const raw = text(refund.status);
  const reference = text(refund.id) || t.channel_txn_id;
  const amount =
    typeof refund.amount === 'number' && Number.isSafeInteger(refund.amount) ? refund.amount : null;
  if ((Object.hasOwn(SETU_REFUND_VIEW, raw) ? SETU_REFUND_VIEW[raw]! : 'OPEN') !== pg)
    return [status(t, reference, raw || '(none)', amount)];
  const found: Found[] = [];
  if (amount !== t.amount)
    found.push({
      reference,
      field: 'amount',
      providerValue: amount === null ? text(refund.amount) : String(amount),
      paygateValue: String(t.amount),
      paymentId: t.payment_id,
      amount,
    });
  if (pg === 'SUCCESS') {
    // Kept as Paygate keeps it (`setuRefundState`): the reference's letters and digits.
    const crn = text(refund.crn).replace(/[^A-Za-z0-9]/g, '');
    if (crn !== t.utr) found.push(utrDifference(t, reference, crn, amount));
  }
  return found;
}

function status(t: ReconcileTxn, reference: string, providerValue: string, amount: number | null): Found {
  return {
    reference,
    field: 'status',
    providerValue,
    paygateValue: paygateValue(t),
    paymentId: t.payment_id,
    amount: amount ?? t.amount,
  };
}

function utrDifference(t: ReconcileTxn, reference: string, utr: string, amount: number | null): Found {
  return {
    reference,
    field: 'utr',
    providerValue: utr,
    paygateValue: t.utr,
    paymentId: t.payment_id,
    amount: amount ?? t.amount,
  };
}
