/**
 * How an operator's `dispute-won` or `dispute-lost` is carried out. Disputes live above this room
 * (`src/disputes/`: a lost one refunds through the pay-in's refunds), so the wiring hands their
 * decider to `ExceptionService`.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import type { ExceptionRow } from './exceptions.repository.ts';

export type DisputeOutcome = 'won' | 'lost';

export interface DisputeDecider {
  /**
   * Records the outcome of the dispute `e` shows, inside the caller's transaction, which holds `e`
   * locked: won closes it; lost refunds the customer (see `src/disputes/`). `changed` false when the
   * same outcome was recorded already; throws 409 INVALID_STATE when the other one was.
   */
  decide(
    tx: Kysely<Tables>,
    e: ExceptionRow,
    outcome: DisputeOutcome,
    actor: string,
    at: number,
  ): Promise<{ changed: boolean; message: string }>;
}
