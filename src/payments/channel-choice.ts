/**
 * Channel choice: which channel a merchant's payment goes through. Test merchants get the sandbox;
 * live merchants get the live channel of the payment's kind (Setu for pay-ins, Cashfree for
 * payouts) within the rails' limits, or 403 when that channel is not configured.
 */
import type { Channel } from '../channels/channel.ts';
import type { TransactionKind } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import { toRupees } from '../money.ts';

/** Resolves the channel for a merchant's payment, or throws (403 not configured, 400 out of range). */
export type ChannelFor = (
  principal: Principal,
  kind: TransactionKind,
  amount: number,
  currency: string,
) => Channel;

/** The least a live rail takes, in paise (both UPI and IMPS): 1.00. */
export const LIVE_MIN_PAISE = 100;

export interface LiveChannels {
  payin: Channel | null;
  payout: Channel | null;
  /** The most a live payment of each kind may be, in paise. */
  maxPayin: number;
  maxPayout: number;
}

export function channelChoice(sandbox: Channel, live: LiveChannels): ChannelFor {
  return (p, kind, amount, currency) => {
    if (p.mode === 'test') return sandbox;
    const channel = kind === 'payin' ? live.payin : live.payout;
    if (!channel)
      throw new AppError(
        'LIVE_CHANNEL_NOT_CONFIGURED',
        `No live ${kind === 'payin' ? 'pay-in' : 'payout'} channel is configured for this gateway`,
      );
    if (currency !== 'INR')
      throw new AppError('VALIDATION_INVALID_CURRENCY', `Live payments are in INR only`, {
        supported_currencies: ['INR'],
      });
    const max = kind === 'payin' ? live.maxPayin : live.maxPayout;
    const outOfRange = liveRangeError(kind === 'payin' ? 'pay-in' : 'payout', amount, max);
    if (outOfRange) throw outOfRange;
    return channel;
  };
}

/**
 * 400 AMOUNT_OUT_OF_RANGE when a live payment (`what`: pay-in, payout, refund) of `amount` paise
 * is outside its rail's range, from LIVE_MIN_PAISE to `max`; null when it is inside.
 */
export function liveRangeError(what: string, amount: number, max: number): AppError | null {
  if (amount < LIVE_MIN_PAISE || amount > max)
    return new AppError(
      'AMOUNT_OUT_OF_RANGE',
      `A live ${what} must be from ${toRupees(LIVE_MIN_PAISE).toFixed(2)} to ${toRupees(max).toFixed(2)}`,
      { min: toRupees(LIVE_MIN_PAISE), max: toRupees(max) },
    );
  return null;
}
