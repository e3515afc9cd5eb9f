/**
 * Migration 0021_account_transfers, listed in `migration-provider.ts`: Paygate's own provider
 * account (CONTRACT §10). A payout whose transfer the provider failed for the account is sent again
 * under a new transfer id once the operator resolves its exception: `transfer_attempt` is the
 * number of the payout's current transfer (1: the payment_id itself), and `payout_transfers` keeps
 * each transfer failed that way beside it, with the exception it waits on. Exceptions of the kinds
 * that are one while open free their key when resolved (their reference gains `#id`), so that the
 * next outage opens a new one; those resolved before this migration are freed here.
 */
import { sql, type Kysely, type Migration } from 'kysely';

/** The kinds that were one while open when this migration was written. */
const ONE_WHILE_OPEN = ['channel_account', 'low_balance', 'channel_silent', 'signature_failures'];

export function accountTransfers(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('transactions')
        .addColumn('transfer_attempt', 'bigint', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .createTable('payout_transfers')
        .addColumn('payment_id', 'text', (c) => c.notNull())
        .addColumn('attempt', 'bigint', (c) => c.notNull())
        .addColumn('transfer_id', 'text', (c) => c.notNull())
        .addColumn('channel_txn_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('status_code', 'text', (c) => c.notNull())
        .addColumn('exception_id', 'bigint', (c) => c.notNull())
        .addColumn('recorded_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('payout_transfers_pk', ['payment_id', 'attempt'])
        .execute();
      await db.schema
        .createIndex('payout_transfers_exception')
        .on('payout_transfers')
        .column('exception_id')
        .execute();
      await sql`update channel_exceptions set reference = reference || '#' || cast(id as text)
        where resolved_at is not null and kind in (${sql.join(ONE_WHILE_OPEN)})`.execute(db);
    },
  };
}
