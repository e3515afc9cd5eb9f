/**
 * The worker's step for a refund that is due, driven as a payout is, from the refund's row alone
 * (a merchant's refund of a pay-in, or a refund of money that belongs to no pay-in): handed to its
 * channel exactly once (PENDING, `sendOnce`), or asked about (PROCESSING) on the channel's poll
 * schedule, with backoff. A refusal of its first send is FAILED with the channel's code; what the
 * channel reports goes through `ChannelOutcomes.refund` (an amount that does not fit is an
 * exception, not an outcome).
 */
import type { Database } from '../db/database.ts';
import { unmatchedPayment } from '../exceptions/suspense-refunds.ts';
import type { Channel, RefundState, RefundSubmission } from '../channels/channel.ts';
import type { ChannelOutcomes } from '../live/outcomes.ts';
import type { FinalityService } from '../finality/finality.service.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import type { Accepted, Rescheduled } from '../transactions/transaction-claims.repository.ts';
import { sendOnce, type SendContext } from './send-once.ts';

export interface RefundStepDeps {
  database: Database;
  finality: FinalityService;
  outcomes: ChannelOutcomes;
  now: () => number;
  send: SendContext;
  /** Records a refund the channel accepted as PROCESSING (batched with the worker's payouts). */
  accepted(a: Accepted): Promise<void>;
  /** Gives a refund asked about with no outcome yet back (batched with the worker's other polls). */
  pollAgain(r: Rescheduled): Promise<void>;
}

export async function refundStep(
  row: TransactionRow,
  channel: Channel,
  step: { sent: boolean },
  d: RefundStepDeps,
): Promise<void> {
  const rail = channel.refunds;
  if (!rail) throw new Error(`channel ${channel.name} makes no refunds`);
  // A refund from suspense returns a provider's payment that no pay-in kept: when the refund does
  // not carry it, its exception names it.
  const unmatched =
    row.refund_of || row.channel_payment_id ? null : await unmatchedPayment(d.database.db, row.payment_id);
  const submission: RefundSubmission = {
    refundId: row.payment_id,
    paymentId: row.refund_of ?? unmatched?.paymentId ?? '',
    channelPaymentId: row.channel_payment_id ?? unmatched?.reference ?? '',
    channelPaymentTxnId: row.channel_payment_txn_id ?? '',
    amount: row.amount,
    currency: row.currency,
  };
  // markProcessing stamps updated_at with the submission time; rescheduling leaves it alone.
  const inFlight = { ...submission, channelTxnId: row.channel_txn_id, submittedAt: row.updated_at };
  const source = `channel:${channel.name}`;
  const pollAt = (sinceMs: number) => d.now() + channel.pollDelayMs('refund', sinceMs);
  if (row.status !== 'PENDING') {
    const state = await rail.readRefund(inFlight);
    const settled = state?.outcome && (await d.outcomes.refund(row, state, source));
    if (!settled)
      await d.pollAgain({
        paymentId: row.payment_id,
        nextActionAt: pollAt(d.now() - row.updated_at),
        status: row.status,
      });
    return;
  }
  const sent = await sendOnce<RefundState>(
    row,
    {
      read: () => rail.readRefund(inFlight),
      send: (notAfter) => rail.submitRefund({ ...submission, notAfter }),
      accountRefused: (err) =>
        d.outcomes.accountRefused(
          channel.name,
          err.code,
          `${channel.name} refused Paygate's account (${err.code}): transactions wait PENDING with their holds`,
        ),
    },
    d.send,
    step,
  );
  if (!sent) return;
  if ('rejected' in sent) {
    await d.finality.settle(
      row.payment_id,
      { status: 'FAILED', utr: '', channelTxnId: '', reason: `refused by ${channel.name}: ${sent.rejected}` },
      `${source}:rejected:${sent.rejected}`,
    );
    return;
  }
  const { state } = sent;
  if (state.outcome && (await d.outcomes.refund(row, state, source))) return;
  // A first answer kept as an exception (an amount that does not fit) is asked about with backoff.
  await d.accepted({
    paymentId: row.payment_id,
    channelTxnId: state.channelTxnId,
    nextActionAt: pollAt(state.outcome ? d.now() - row.created_at : 0),
  });
}
