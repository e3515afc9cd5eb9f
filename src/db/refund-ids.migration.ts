/**
 * A refund's id begins with its pay-in's (`REFUND_ID_PREFIX` characters, `newRefundId`), so the
 * refunds of a pay-in are a range of the primary key next to it, which the pay-in's read has just
 * brought in: the index on `refund_of` goes. It held each refund at a random place, a page written
 * per refund. Refunds made before keep an index of their own: only those whose id does not begin
 * with their pay-in's are in it, so a new refund writes no entry.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function refundIds(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('transactions_refund_of').execute();
      await db.schema
        .createIndex('transactions_refund_of_apart')
        .on('transactions')
        .column('refund_of')
        .where(sql<boolean>`refund_of is not null and substr(payment_id, 1, 20) <> substr(refund_of, 1, 20)`)
        .execute();
    },
  };
}
