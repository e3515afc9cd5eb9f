/** Small parts of the transaction worker: the logger it needs, its lease, its back-off after a failed step. */
import type { TransactionRow } from './transactions.repository.ts';

export interface WorkerLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** A claim's lease for a CHANNEL_TIMEOUT_MS: three calls and a second over, at least 5 s. */
export function workerLeaseMs(channelTimeoutMs: number): number {
  return Math.max(3 * channelTimeoutMs + 1000, 5000);
}

/**
 * A payout's submission backs off with its age (half of it, 1 s to 5 min, whether or not its
 * attempts were counted); a refund's with its attempts; a pay-in past its expiry as long as it has
 * been expired (1 s to 5 min); anything else at the next poll.
 */
export function retryDelay(
  row: Pick<TransactionRow, 'kind' | 'status' | 'created_at' | 'submit_attempts' | 'expires_at'>,
  channelFailed: boolean,
  now: number,
  pollMs: number,
): number {
  if (!channelFailed) return pollMs;
  if (row.kind === 'payout' && row.status === 'PENDING')
    return Math.min(Math.max((now - row.created_at) / 2, 1000), 300_000);
  if (row.kind === 'refund' && row.status === 'PENDING')
    return Math.min(1000 * 2 ** Math.min(Math.max(row.submit_attempts - 1, 0), 20), 300_000);
  if (row.kind === 'payin' && now >= (row.expires_at ?? 0))
    return Math.min(Math.max(now - (row.expires_at ?? 0), 1000), 300_000);
  return Math.max(pollMs, 1000);
}
