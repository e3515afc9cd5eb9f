/**
 * Live refunds through Setu: a pay-in keeps the provider's payment that paid it (its id, which a
 * refund names, and its `txnId`, under which the provider lists the payment's refunds); a refund
 * keeps the same two of the payment it returns, so that it carries all its channel needs; and a
 * transaction FAILED by its channel keeps the channel's reason (an NPCI refusal of a refund).
 */
import type { Kysely, Migration } from 'kysely';

export function liveRefunds(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('transactions').addColumn('channel_payment_id', 'text').execute();
      await db.schema.alterTable('transactions').addColumn('channel_payment_txn_id', 'text').execute();
      await db.schema.alterTable('transactions').addColumn('failure_reason', 'text').execute();
    },
  };
}
