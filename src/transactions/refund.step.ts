/**
 * The worker's step for a refund that is due, driven as a payout is: handed to the pay-in's channel
 * (PENDING), or asked about (PROCESSING). A refund taken up before (`submit_attempts` above one)
 * may have reached the channel already: the channel is asked first, and only a refund it never saw
 * is sent again, under the same refund_id.
 */
import type { Database } from '../db/database.ts';
import { unmatchedPayment } from '../exceptions/suspense-refunds.ts';
import { ChannelFailure, type Channel, type RefundState } from '../channels/channel.ts';
import type { SettlementService } from './settlement.service.ts';
import type { TransactionRow } from './transactions.repository.ts';
import { reschedule, type Accepted } from './transaction-claims.repository.ts';

export interface RefundStepDeps {
  database: Database;
  settlement: SettlementService;
  now: () => number;
  /** A pay-in by payment_id (read with the other steps' in one query: `transactionReader`). */
  readPayin(paymentId: string): Promise<TransactionRow | undefined>;
  /** Records a refund the channel accepted as PROCESSING (batched with the worker's payouts). */
  accepted(a: Accepted): Promise<void>;
}

export async function refundStep(row: TransactionRow, channel: Channel, d: RefundStepDeps): Promise<void> {
  const rail = channel.refunds;
  if (!rail) throw new Error(`channel ${channel.name} makes no refunds`);
  const payin = row.refund_of ? await d.readPayin(row.refund_of) : undefined;
  // A refund from suspense returns a provider's payment that no pay-in kept: its exception names it.
  const unmatched = row.refund_of ? null : await unmatchedPayment(d.database.db, row.payment_id);
  const submission = {
    refundId: row.payment_id,
    paymentId: row.refund_of ?? unmatched?.paymentId ?? '',
    payinChannelTxnId: unmatched?.reference ?? payin?.channel_txn_id ?? '',
    amount: row.amount,
    currency: row.currency,
  };
  // markProcessing stamps updated_at with the submission time; rescheduling leaves it alone.
  const inFlight = { ...submission, channelTxnId: row.channel_txn_id, submittedAt: row.updated_at };
  const source = `channel:${channel.name}`;
  if (row.status === 'PENDING') {
    const sentBefore = row.submit_attempts > 1;
    let state: RefundState | null = sentBefore ? await rail.readRefund(inFlight) : null;
    if (!state) {
      try {
        state = await rail.submitRefund(submission);
      } catch (err) {
        if (!(err instanceof ChannelFailure) || err.kind !== 'rejected') throw err;
        // Refused. After an earlier attempt the refusal may be of a duplicate: the channel has it.
        state = sentBefore ? await rail.readRefund(inFlight) : null;
        if (!state) {
          await d.settlement.settle(
            row.payment_id,
            { status: 'FAILED', utr: '', channelTxnId: '' },
            `${source}:rejected:${err.code}`,
          );
          return;
        }
      }
    }
    if (state.outcome) await d.settlement.settle(row.payment_id, state.outcome, source);
    else
      await d.accepted({
        paymentId: row.payment_id,
        channelTxnId: state.channelTxnId,
        nextActionAt: d.now() + channel.pollDelayMs('refund', 0),
      });
    return;
  }
  const state = await rail.readRefund(inFlight);
  if (state?.outcome) await d.settlement.settle(row.payment_id, state.outcome, source);
  else
    await reschedule(
      d.database.db,
      row.payment_id,
      d.now() + channel.pollDelayMs('refund', d.now() - row.updated_at),
    );
}
