/** Live payouts made production-safe: when a payout was first found unknown to its channel after a send. */
import type { Kysely, Migration } from 'kysely';

export function livePayouts(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('transactions').addColumn('not_found_at', 'bigint').execute();
    },
  };
}
