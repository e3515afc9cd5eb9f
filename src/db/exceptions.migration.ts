/**
 * Migration 0014_exceptions, listed in `migration-provider.ts`: exceptions an operator resolves.
 * Each keeps the merchant it concerns and the money it holds (`holds`: suspense or receivable, and
 * the paise still `outstanding`), the refund in flight for it, and when, by whom and how it was
 * resolved. A payout paid after FAILED that was journaled into the receivable before this
 * migration (and not reversed since) holds its amount from now on.
 */
import { sql, type Kysely, type Migration } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export function exceptions(): Migration {
  return {
    async up(db: AnyDb) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      const add = (name: string, type: 'text' | 'bigint') =>
        db.schema.alterTable('channel_exceptions').addColumn(name, type).execute();
      await add('merchant_id', 'text');
      await db.schema
        .alterTable('channel_exceptions')
        .addColumn('currency', 'text', (c) => c.notNull().defaultTo('INR'))
        .execute();
      await add('holds', 'text');
      await db.schema
        .alterTable('channel_exceptions')
        .addColumn('outstanding', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await add('refund_id', 'text');
      await add('resolved_at', 'bigint');
      await add('resolved_by', 'text');
      await add('resolution', 'text');
      await add('note', 'text');
      // Open ones first, newest first within each part.
      await db.schema
        .createIndex('channel_exceptions_open')
        .on('channel_exceptions')
        .columns(['resolved_at', 'id'])
        .execute();
      await db.schema
        .createIndex('channel_exceptions_refund')
        .on('channel_exceptions')
        .column('refund_id')
        .where(sql.ref('refund_id'), 'is not', null)
        .execute();
      await sql`
        update channel_exceptions set merchant_id = (
          select t.merchant_id from transactions t where t.payment_id = channel_exceptions.payment_id)
        where payment_id is not null`.execute(db);
      await sql`
        update channel_exceptions set holds = 'receivable', outstanding = amount
        where kind = 'payout_after_failed' and amount is not null
          and exists (select 1 from ledger_entries l
                      where l.payment_id = channel_exceptions.payment_id and l.kind = 'payout_receivable')
          and not exists (select 1 from ledger_entries l
                      where l.payment_id = channel_exceptions.payment_id and l.kind = 'payout_receivable_reversal')`.execute(
        db,
      );
    },
  };
}
