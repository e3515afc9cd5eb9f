/**
 * What the transaction worker gives the step of each kind (`payin.step.ts`, `payout.step.ts`,
 * `refund.step.ts`): the services a step records through, the clock, and the worker's batches.
 */
import type { Database } from '../db/database.ts';
import type { ChannelOutcomes } from '../live/outcomes.ts';
import type { FinalityService } from '../finality/finality.service.ts';
import type { Accepted, Rescheduled } from '../transactions/transaction-claims.repository.ts';
import type { SendContext } from './send-once.ts';

export interface StepDeps {
  database: Database;
  finality: FinalityService;
  outcomes: ChannelOutcomes;
  now: () => number;
  /** CHANNEL_STUCK_AFTER_S in ms: a live transaction not final after it is an exception. */
  stuckAfterMs: number;
  /** What `sendOnce` needs to hand a payout or refund of this channel over. */
  send: SendContext;
  /** Records a payout or refund the channel accepted as PROCESSING (batched with the others). */
  accepted(a: Accepted): Promise<void>;
  /** Gives back a transaction asked about with no outcome yet (batched with the worker's other polls). */
  pollAgain(r: Rescheduled): Promise<void>;
}
