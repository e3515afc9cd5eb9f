/**
 * The transactions a reconciliation reads besides the day's own (`openIds`, then `transactionsOf` a
 * page at a time): a channel's transactions created before the day and still PENDING or
 * PROCESSING, of every kind, in payment_id order; not its final ones, not another channel's, not
 * the day's own. Both databases; the index they are read through is checked in test/db/query-plans.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrate, openDatabase } from '../../src/db/database.ts';
import type { TransactionStatus, TransactionKind } from '../../src/db/schema.ts';
import { openIds, transactionsOf } from '../../src/reconcile/reconcile-reads.ts';
import { DATABASES, createDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { newPayin } from '../support/hot-paths.ts';
import { fillHotTables, valuesOf } from '../support/query-plans.ts';

const MERCHANT = 'mrc_open';
const DAY = 1_800_000_000_000;

for (const kind of DATABASES) {
  describe(`reconciliation's open transactions from before the day (${kind})`, async () => {
    it(
      'reads the open ones of the channel created before the day, and only those',
      { skip: await skipFor(kind) },
      async () => {
        const store = await createDatabase(kind);
        const database = openDatabase(store.url);
        try {
          await migrate(database);
          await fillHotTables(database, MERCHANT, 10);
          const v = valuesOf(MERCHANT);
          const row = (
            id: string,
            channel: string,
            status: TransactionStatus,
            createdAt: number,
            txnKind: TransactionKind = 'payin',
          ) => ({
            ...newPayin({ ...v, paymentId: id, orderNo: `open-${id}` }),
            kind: txnKind,
            channel,
            status,
            amount: 1000 + id.charCodeAt(id.length - 1),
            created_at: createdAt,
          });
          await database.db
            .insertInto('transactions')
            .values([
              row('pay_open_d', 'setu', 'PENDING', DAY - 1),
              row('pay_open_b', 'setu', 'PROCESSING', DAY - 2 * 86_400_000, 'payout'),
              row('pay_open_f', 'setu', 'PROCESSING', DAY - 5, 'refund'),
              row('pay_open_a', 'setu', 'SUCCESS', DAY - 1000),
              row('pay_open_c', 'setu', 'FAILED', DAY - 1000),
              row('pay_open_e', 'setu', 'PENDING', DAY),
              row('pay_open_g', 'cashfree', 'PENDING', DAY - 1000, 'payout'),
            ])
            .execute();

          const ids = await openIds(database.db, 'setu', DAY);
          assert.deepEqual(ids, ['pay_open_b', 'pay_open_d', 'pay_open_f']);
          assert.deepEqual(await openIds(database.db, 'cashfree', DAY), ['pay_open_g']);
          assert.deepEqual(await openIds(database.db, 'cashfree', DAY - 1000), []);

          const page = await transactionsOf(database.db, ids);
          assert.deepEqual(
            page.map((t) => [t.payment_id, t.kind, t.status, t.amount, t.created_at]),
            [
              ['pay_open_b', 'payout', 'PROCESSING', 1098, DAY - 2 * 86_400_000],
              ['pay_open_d', 'payin', 'PENDING', 1100, DAY - 1],
              ['pay_open_f', 'refund', 'PROCESSING', 1102, DAY - 5],
            ],
          );
          assert.deepEqual(await transactionsOf(database.db, []), []);
        } finally {
          await database.close();
          await store.drop();
        }
      },
    );
  });
}
