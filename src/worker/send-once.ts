/**
 * Handing a PENDING payout or refund to its channel exactly once. The claim counted the send about
 * to be made before it is made (`submit_attempts`); a step that made none, or whose send the
 * channel certainly did not act on, takes it back (`step.sent`, see the worker's failure path).
 * One an earlier send may have reached is read first, and sent again only when two reads
 * CHANNEL_POLL_MS apart, made once that send can no longer arrive, both say the channel does not
 * know it (`notFoundWait`; `not_found_at` keeps the first).
 * A refusal of the first send is the channel's word on the transaction; a refusal after an
 * earlier send may be of a duplicate, and means "read it".
 */
import type { Kysely } from 'kysely';
import { ChannelFailure } from '../channels/channel.ts';
import type { Tables } from '../db/schema.ts';
import { reschedulePending } from '../transactions/transaction-claims.repository.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { notFoundWait } from './worker-support.ts';

/** What the channel does with one transaction: read it back, send it. */
export interface SendRail<S> {
  /** What the channel knows of it, or null when it does not know it. */
  read(): Promise<S | null>;
  /** Sends it, not after `notAfter` (epoch ms). Throws `ChannelFailure`. */
  send(notAfter: number | undefined): Promise<S>;
  /** The channel refused Paygate's own account: nothing was sent, the operator must look. */
  accountRefused(failure: ChannelFailure): Promise<void>;
}

export interface SendContext {
  db: Kysely<Tables>;
  /** The clock, read after each call (a read takes time: the gap is measured from its answer). */
  now: () => number;
  /** CHANNEL_POLL_MS: how far apart the two reads that allow a second send must be. */
  readGap: number;
  /** The channel's `inTransitMs`: how long after a send that got no answer a read that finds nothing says nothing. */
  inTransitMs: number;
  /** The worker's lease (ms), of which the row's `lease_until` is the end. */
  leaseMs: number;
}

/**
 * The channel's state of the transaction (it has it: sent now, or found by a read); `rejected` with
 * the channel's code and its words (`description`, '' when it gave none) when it refused the first
 * send; null when the step is over for now (it was rescheduled to be read again).
 */
export type SendResult<S> = { state: S } | { rejected: string; description: string } | null;

/** A FAILED transaction's reason when its channel refused the first send: its code and its words. */
export function refusedReason(channel: string, refusal: { rejected: string; description: string }): string {
  const words = refusal.description ? `: ${refusal.description}` : '';
  return `refused by ${channel}: ${refusal.rejected}${words}`;
}

export async function sendOnce<S>(
  row: TransactionRow,
  rail: SendRail<S>,
  c: SendContext,
  step: { sent: boolean },
): Promise<SendResult<S>> {
  const sentBefore = row.submit_attempts > 1;
  if (sentBefore) {
    const known = await rail.read().catch(async (err: unknown) => {
      // A read refused as Paygate's account (401/403) is the operator's, as a send's is.
      if (err instanceof ChannelFailure && err.kind === 'account') await rail.accountRefused(err);
      throw err;
    });
    if (known) return { state: known };
    const wait = notFoundWait(row, c.now(), c.readGap, c.inTransitMs);
    if (wait) {
      await reschedulePending(c.db, row.payment_id, wait.at, {
        unsent: true,
        notFoundAt: wait.notFoundAt,
        attempt: row.transfer_attempt,
      });
      return null;
    }
  }
  try {
    step.sent = true;
    // Sent only while this claim holds, with one call's time to spare (the lease is three calls
    // and a second): a send delayed past it (the throttle, a busy process) could race another
    // process's read of a not-found transaction, and that process may send it again.
    const notAfter = row.lease_until === null ? undefined : row.lease_until - (c.leaseMs - 1000) / 3;
    return { state: await rail.send(notAfter) };
  } catch (err) {
    if (!(err instanceof ChannelFailure)) throw err;
    if (err.kind === 'unavailable' || err.kind === 'account') step.sent = false;
    if (err.kind === 'account') await rail.accountRefused(err);
    if (err.kind !== 'rejected') throw err;
    if (sentBefore) {
      // An earlier send may have arrived: this refusal may be of a duplicate. Read it.
      await reschedulePending(c.db, row.payment_id, c.now() + c.readGap, {
        unsent: false,
        notFoundAt: null,
        attempt: row.transfer_attempt,
      });
      return null;
    }
    return { rejected: err.code, description: err.description };
  }
}
