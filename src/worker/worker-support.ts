/** Small parts of the transaction worker: the logger it needs, its lease, its back-off after a failed step. */
import { CHANNEL_BACKOFF, CLAIM_EXPIRED, type ChannelFailure } from '../channels/channel.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';

export interface WorkerLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** A claim's lease for a CHANNEL_TIMEOUT_MS: three calls and a second over, at least 5 s. */
export function workerLeaseMs(channelTimeoutMs: number): number {
  return Math.max(3 * channelTimeoutMs + 1000, 5000);
}

/** The longest wait between two reads of a transaction whose reads fail (as between two polls, `pollDelay`). */
const MAX_READ_BACKOFF_MS = 3_600_000;

type RetriedRow = Pick<
  TransactionRow,
  'kind' | 'status' | 'created_at' | 'submit_attempts' | 'expires_at' | 'read_failures'
>;

/**
 * Whether a failed step was a read of the transaction that the channel failed (a pay-in before its
 * expiry asked about, a payout or refund asked for its outcome), counted in `read_failures`. A call
 * not sent (the throttle's queue, the provider's back-off) is no read.
 */
export function failedRead(
  row: Pick<RetriedRow, 'kind' | 'status' | 'expires_at'>,
  failure: Pick<ChannelFailure, 'code'> | null,
  now: number,
): boolean {
  if (!failure || failure.code === CLAIM_EXPIRED || failure.code === CHANNEL_BACKOFF) return false;
  return row.kind === 'payin' ? now < (row.expires_at ?? 0) : row.status !== 'PENDING';
}

/**
 * A call the throttle did not send within its claim, or that the provider's back-off held, waits a
 * poll interval (at least a second): the queue, not the transaction, held it. A payout's submission
 * backs off with its age (half of it, 1 s to 5 min, whether or not its attempts were counted); a
 * refund's with its attempts; a pay-in past its expiry as long as it has been expired (1 s to 5
 * min); a read that failed doubles the wait with each failure in a row (a poll interval, at least
 * a second, then two, four …, at most an hour; a pay-in is still asked at its expiry); anything
 * else at the next poll.
 */
export function retryDelay(
  row: RetriedRow,
  failure: Pick<ChannelFailure, 'code'> | null,
  now: number,
  pollMs: number,
): number {
  if (!failure) return pollMs;
  if (failure.code === CLAIM_EXPIRED || failure.code === CHANNEL_BACKOFF) return Math.max(pollMs, 1000);
  if (failedRead(row, failure, now)) {
    const doubled = Math.max(pollMs, 1000) * 2 ** Math.min(row.read_failures, 30);
    const delay = Math.min(doubled, MAX_READ_BACKOFF_MS);
    return row.kind === 'payin' ? Math.min(delay, (row.expires_at ?? 0) - now) : delay;
  }
  if (row.kind === 'payout' && row.status === 'PENDING')
    return Math.min(Math.max(Math.ceil((now - row.created_at) / 2), 1000), 300_000);
  if (row.kind === 'refund' && row.status === 'PENDING')
    return Math.min(1000 * 2 ** Math.min(Math.max(row.submit_attempts - 1, 0), 20), 300_000);
  if (row.kind === 'payin' && now >= (row.expires_at ?? 0))
    return Math.min(Math.max(now - (row.expires_at ?? 0), 1000), 300_000);
  return Math.max(pollMs, 1000);
}

/**
 * A PENDING payout sent before, which a read has just not found: whether it may be sent again now
 * (null), or when to read it again and the `not_found_at` to keep. Two not-found reads at least
 * `readGap` apart allow a send, and only reads made `inTransitMs` (the channel's) after the last
 * unanswered send count (`updated_at` dates it); until then it is read with a backoff that doubles
 * from that send.
 */
export function notFoundWait(
  row: Pick<TransactionRow, 'not_found_at' | 'updated_at' | 'created_at'>,
  now: number,
  readGap: number,
  inTransitMs: number,
): { at: number; notFoundAt: number | null } | null {
  // A PENDING payout's updated_at moves only when an unanswered send (or a lost step) dates it.
  const countsFrom = row.updated_at > row.created_at ? row.updated_at + inTransitMs : 0;
  if (now < countsFrom)
    return { at: Math.min(countsFrom, now + Math.max(readGap, now - row.updated_at)), notFoundAt: null };
  const firstNotFound = row.not_found_at !== null && row.not_found_at >= countsFrom ? row.not_found_at : now;
  return now - firstNotFound < readGap ? { at: firstNotFound + readGap, notFoundAt: firstNotFound } : null;
}
