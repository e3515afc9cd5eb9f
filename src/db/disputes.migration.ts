/**
 * Migration 0022_disputes, listed in `migration-provider.ts`: a customer's dispute of a pay-in
 * (CONTRACT §10 "Disputes"). One row per provider dispute, beside the `dispute` exception that shows
 * it to operators (keyed by that exception's id): the pay-in it names (null when none here matches),
 * its amount, whether it is open, won or lost, and for a lost one the refund that returned it and the
 * part the merchant's balance lacked (the receivable). A refund reads the open disputes of its
 * pay-in through the index on `payin_id`.
 */
import type { Kysely, Migration } from 'kysely';

export function disputes(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('disputes')
        .addColumn('exception_id', 'bigint', (c) => c.primaryKey())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('dispute_id', 'text', (c) => c.notNull())
        .addColumn('payin_id', 'text')
        .addColumn('merchant_id', 'text')
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('refund_id', 'text')
        .addColumn('refunded', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('owed', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('opened_at', 'bigint', (c) => c.notNull())
        .addColumn('decided_at', 'bigint')
        .addColumn('decided_by', 'text')
        .execute();
      await db.schema.createIndex('disputes_payin').on('disputes').columns(['payin_id', 'status']).execute();
    },
  };
}
