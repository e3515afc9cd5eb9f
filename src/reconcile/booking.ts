/**
 * What reconciliation finds that moved money, booked as if the provider had said it at the time
 * (CONTRACT §13): a provider's record goes through `ChannelOutcomes`, the one place where a channel's
 * report becomes a change, as a notification or a poll would. So a reversal reverses the payout
 * (with the merchant's REVERSED callback), a payment that no pay-in keeps goes into suspense, money
 * paid out after FAILED is owed from the receivable, and a transaction still open is settled. Each
 * is applied once, however often a run reads it again.
 */
import { cashfreeState } from '../channels/cashfree/cashfree.channel.ts';
import { setuRefundState } from '../channels/setu/setu-refunds.ts';
import { setuPaymentOutcome } from '../channels/setu/setu.channel.ts';
import type { ChannelOutcomes } from '../live/outcomes.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';

/** What a provider holds of one transaction, as reconciliation reads it. */
export type ProviderRecord =
  | { kind: 'transfer'; transfer: Record<string, unknown> | null }
  | { kind: 'payments'; payments: Record<string, unknown>[] }
  | { kind: 'refund'; refund: Record<string, unknown> | null };

export async function book(
  outcomes: ChannelOutcomes,
  txn: TransactionRow,
  record: ProviderRecord,
): Promise<void> {
  const source = `reconcile:${txn.channel}`;
  if (record.kind === 'transfer') {
    const state = record.transfer && cashfreeState(record.transfer);
    // A transfer failed for Paygate's own account parks its payout, as a poll would.
    if (state?.outcome || state?.accountCode) await outcomes.payout(txn, state, source);
  } else if (record.kind === 'refund') {
    const state = record.refund && setuRefundState(record.refund);
    if (state?.outcome) await outcomes.refund(txn, state, source);
  } else {
    // Every successful payment on the pay-in's QR, in Setu's order: the first may settle it, any
    // other is money no pay-in keeps.
    for (const payment of record.payments) {
      const outcome = setuPaymentOutcome(payment, txn.channel_txn_id);
      if (outcome) await outcomes.payin(txn, outcome, source);
    }
  }
}
