/**
 * The worker's step for a pay-in that is due: at its expiry, closed at the channel (a payment found
 * then wins) and otherwise FAILED, but kept PENDING while a payment the customer started is in
 * progress, until that payment is final or CHANNEL_STUCK_AFTER_S has passed; before its expiry, the
 * channel asked whether it was paid (no notification came).
 */
import type { Channel } from '../channels/channel.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import type { StepDeps } from './step.ts';

/** Why a pay-in that nobody paid in time is FAILED, as its page says. */
export const EXPIRED = 'expired: not paid before its expiry';

export async function payinStep(row: TransactionRow, channel: Channel, d: StepDeps): Promise<void> {
  const open = { paymentId: row.payment_id, channelTxnId: row.channel_txn_id, amount: row.amount };
  const pollAgain = (nextActionAt: number) =>
    d.pollAgain({ paymentId: row.payment_id, nextActionAt, status: row.status });
  const expired = d.now() >= (row.expires_at ?? 0);
  if (expired) {
    const ageMs = d.now() - row.created_at;
    if (channel.live) {
      const outcome = await channel.closePayin(open, { stuck: ageMs >= d.stuckAfterMs });
      if (outcome === null) {
        await pollAgain(d.now() + channel.pollDelayMs('payin', ageMs));
        return;
      }
      if (outcome.status === 'SUCCESS') await d.outcomes.payin(row, outcome, `expiry:${channel.name}`);
    }
    // Still PENDING (nothing paid it, or what came is an exception): it ran out of time.
    await d.finality.settle(
      row.payment_id,
      { status: 'FAILED', utr: '', channelTxnId: '', reason: EXPIRED },
      'expiry',
    );
    return;
  }
  const outcome = await channel.payinOutcome(open);
  if (outcome) {
    await d.outcomes.payin(row, outcome, `poll:${channel.name}`);
    return;
  }
  const next = d.now() + channel.pollDelayMs('payin', d.now() - row.created_at);
  await pollAgain(Math.min(row.expires_at ?? next, next));
}
