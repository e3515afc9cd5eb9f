/**
 * What a provider does after Paygate decided (CONTRACT §13): reconciliation reads back the live
 * transactions that became final in the days before the one it reconciles, through an index of
 * when each became final. Entries are added as transactions finalise, so at its right end, never at
 * a random page. A refund from suspense keeps the exception whose money it returns, so that its
 * late success can still be booked against that money after the exception was freed.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function afterFinal(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('transactions').addColumn('exception_id', 'bigint').execute();
      await sql`create index transactions_finalized on transactions (channel, finalized_at, payment_id)
        where finalized_at is not null and channel <> 'sandbox'`.execute(db);
    },
  };
}
