/**
 * The worker's step for a payout that is due: handed to its channel exactly once (PENDING,
 * `sendOnce`), or asked about (PROCESSING). It is FAILED only on the channel's own word: a read or
 * a notification, or a refusal of its first send; any refusal after that means "read it".
 */
import { ChannelFailure, type Channel, type PayoutState } from '../channels/channel.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { refusedReason, sendOnce } from './send-once.ts';
import type { StepDeps } from './step.ts';

export async function payoutStep(
  row: TransactionRow,
  channel: Channel,
  step: { sent: boolean },
  d: StepDeps,
): Promise<void> {
  const submission = {
    paymentId: row.payment_id,
    // Its current transfer: a later one after the provider failed the one before for the account.
    attempt: Number(row.transfer_attempt),
    amount: row.amount,
    currency: row.currency,
    receiver: {
      name: row.receiver_name ?? '',
      accountNo: row.receiver_account_no ?? '',
      ifsc: row.receiver_ifsc ?? '',
    },
  };
  // markProcessing stamps updated_at with the submission time; rescheduling leaves it alone.
  const inFlight = { ...submission, channelTxnId: row.channel_txn_id, submittedAt: row.updated_at };
  const accountRefused = (err: ChannelFailure) =>
    d.outcomes.accountRefused(
      channel.name,
      err.code,
      `${channel.name} refused Paygate's account (${err.code}): payouts wait PENDING with their holds`,
    );
  if (row.status !== 'PENDING') {
    const state = await channel.readPayout(inFlight).catch(async (err: unknown) => {
      if (err instanceof ChannelFailure && err.kind === 'account') await accountRefused(err);
      throw err;
    });
    const settled = state && ends(state) && (await d.outcomes.payout(row, state, `channel:${channel.name}`));
    if (!settled)
      await d.pollAgain({
        paymentId: row.payment_id,
        nextActionAt: pollAt(row, channel, d),
        status: row.status,
      });
    return;
  }
  const sent = await sendOnce<PayoutState>(
    row,
    {
      read: () => channel.readPayout(inFlight),
      send: (notAfter) => channel.submitPayout({ ...submission, notAfter }),
      accountRefused,
    },
    d.send,
    step,
  );
  if (!sent) return;
  if ('rejected' in sent) {
    await d.finality.settle(
      row.payment_id,
      { status: 'FAILED', utr: '', channelTxnId: '', reason: refusedReason(channel.name, sent) },
      `channel:${channel.name}:rejected:${sent.rejected}`,
    );
    return;
  }
  return accepted(row, channel, sent.state, d);
}

/** Whether a state ends the payout's transfer: an outcome, or a failure for Paygate's own account. */
function ends(state: PayoutState): boolean {
  return state.outcome !== null || state.accountCode !== undefined;
}

/** When to ask about a payout again: the channel's poll delay by the payout's age, growing as it ages. */
function pollAt(row: TransactionRow, channel: Channel, d: StepDeps): number {
  return d.now() + channel.pollDelayMs('payout', d.now() - row.created_at);
}

/**
 * A payout the channel has: final already, or recorded PROCESSING to be asked about later. A first
 * answer kept as an exception (an amount that does not fit) is PROCESSING too, asked about with backoff.
 */
async function accepted(
  row: TransactionRow,
  channel: Channel,
  state: PayoutState,
  d: StepDeps,
): Promise<void> {
  const settled = ends(state) && (await d.outcomes.payout(row, state, `channel:${channel.name}`));
  if (settled) return;
  // Recorded as soon as the channel accepted it, not at the end of the round: a slow call
  // for another payout must not keep this one PENDING while its lease runs down.
  await d.accepted({
    paymentId: row.payment_id,
    attempt: Number(row.transfer_attempt),
    channelTxnId: state.channelTxnId,
    nextActionAt: state.outcome ? pollAt(row, channel, d) : d.now() + channel.pollDelayMs('payout', 0),
  });
}
