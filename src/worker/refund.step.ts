/**
 * The worker's step for a refund that is due, driven as a payout is, from the refund's row alone
 * (a merchant's refund of a pay-in, or a refund of money that belongs to no pay-in): handed to its
 * channel exactly once (PENDING, `sendOnce`), or asked about (PROCESSING) on the channel's poll
 * schedule, with backoff. A refusal of its first send is FAILED with the channel's code; what the
 * channel reports goes through `ChannelOutcomes.refund` (an amount that does not fit is an
 * exception, not an outcome).
 */
import { unmatchedPayment } from '../exceptions/suspense-refunds.ts';
import type { Channel, RefundState, RefundSubmission } from '../channels/channel.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { refusedReason, sendOnce } from './send-once.ts';
import type { StepDeps } from './step.ts';

export async function refundStep(
  row: TransactionRow,
  channel: Channel,
  step: { sent: boolean },
  d: StepDeps,
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
      { status: 'FAILED', utr: '', channelTxnId: '', reason: refusedReason(channel.name, sent) },
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
