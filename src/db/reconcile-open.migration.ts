/**
 * Reconciliation reads a channel's open transactions through the index the worker's claims read
 * (`transactions_due`: the open ones by channel), so the index on (channel, status, payment_id)
 * goes. It held every transaction at a random place (by payment_id), so each creation and each
 * status change wrote a random page of it: on SQLite under load, about a fifth of the rate of
 * creating a pay-in or a payout.
 */
import type { Kysely, Migration } from 'kysely';

export function reconcileOpen(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('transactions_channel_status').execute();
    },
  };
}
