/**
 * Reconciliation reads the day's transactions (`createdPage`) and the lookback's (`changeablePage`) a
 * page at a time from a cursor: every transaction once, in (time, payment_id) order, when many share
 * a time across a page's end; the lookback's only those the provider can still change. Both
 * databases; the index each page reads through is checked in test/db/query-plans.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { migrate, openDatabase } from '../../src/db/database.ts';
import type { TransactionKind, TransactionStatus } from '../../src/db/schema.ts';
import { changeablePage, createdPage, type ReconcileTxn } from '../../src/reconcile/reconcile-reads.ts';
import { DATABASES, createDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { newPayin } from '../support/hot-paths.ts';
import { fillHotTables, valuesOf } from '../support/query-plans.ts';

const MERCHANT = 'mrc_pages';
const DAY = 1_800_000_000_000;
const DAY_MS = 86_400_000;
const PAGE = 4;

/** Pages through `read` from no cursor until a short page; answers the ids in the order read. */
async function pageThrough<T extends { payment_id: string }>(
  read: (after: T | null) => Promise<T[]>,
): Promise<string[]> {
  const ids: string[] = [];
  let after: T | null = null;
  for (;;) {
    const page = await read(after);
    ids.push(...page.map((t) => t.payment_id));
    if (page.length < PAGE) return ids;
    after = page.at(-1)!;
  }
}

for (const kind of DATABASES) {
  describe(`reconciliation's pages (${kind})`, async () => {
    it(
      'reads each transaction of the day and of the lookback once, in order, when times are shared across pages',
      { skip: await skipFor(kind) },
      async () => {
        const store = await createDatabase(kind);
        const database = openDatabase(store.url);
        try {
          await migrate(database);
          await fillHotTables(database, MERCHANT, 10);
          const v = valuesOf(MERCHANT);
          const row = (id: string, at: number, txnKind: TransactionKind, status: TransactionStatus) => ({
            ...newPayin({ ...v, paymentId: id, orderNo: `pages-${id}` }),
            kind: txnKind,
            channel: 'setu',
            status,
            created_at: at,
            finalized_at: at + 1000,
          });
          // The day's: 14, three to a time (ids out of time order), one on the day's last millisecond.
          const day = Array.from({ length: 14 }, (_, i) =>
            row(
              `pay_day_${String(13 - i).padStart(2, '0')}`,
              DAY + Math.floor(i / 3) * 60_000,
              'payin',
              'SUCCESS',
            ),
          );
          day.push(row('pay_day_last', DAY + DAY_MS - 1, 'payin', 'SUCCESS'));
          // The lookback's: three days, five to a time of becoming final, of every kind the provider
          // can still change and of those it cannot.
          const changing: [TransactionKind, TransactionStatus][] = [
            ['payin', 'FAILED'],
            ['refund', 'SUCCESS'],
            ['payout', 'SUCCESS'],
            ['refund', 'FAILED'],
            ['payout', 'FAILED'],
          ];
          const lookback = Array.from({ length: 15 }, (_, i) => {
            const [k, s] = changing[i % changing.length]!;
            return row(
              `pay_back_${String(14 - i).padStart(2, '0')}`,
              DAY - (1 + Math.floor(i / 5)) * DAY_MS,
              k,
              s,
            );
          });
          const settled = [
            row('pay_back_paid', DAY - DAY_MS, 'payin', 'SUCCESS'),
            { ...row('pay_back_reversed', DAY - DAY_MS, 'payout', 'SUCCESS'), reversed_at: DAY - 1 },
            row('pay_back_too_old', DAY - 9 * DAY_MS, 'payin', 'FAILED'),
            { ...row('pay_back_sandbox', DAY - DAY_MS, 'payin', 'FAILED'), channel: 'sandbox' },
          ];
          await database.db
            .insertInto('transactions')
            .values([...day, ...lookback, ...settled])
            .execute();

          const inOrder = (rows: typeof day, time: (r: (typeof day)[number]) => number) =>
            [...rows]
              .sort((a, b) => time(a) - time(b) || (a.payment_id < b.payment_id ? -1 : 1))
              .map((r) => r.payment_id);

          const dayRead = await pageThrough<ReconcileTxn>((after) =>
            createdPage(
              database.db,
              'setu',
              DAY,
              DAY + DAY_MS,
              after && { createdAt: after.created_at, paymentId: after.payment_id },
              PAGE,
            ),
          );
          assert.deepEqual(
            dayRead,
            inOrder(day, (r) => r.created_at),
          );

          const window = { from: DAY - 7 * DAY_MS, to: DAY, createdBefore: DAY };
          const lookbackRead = await pageThrough<ReconcileTxn & { finalized_at: number }>((after) =>
            changeablePage(
              database.db,
              'setu',
              window,
              after && { finalizedAt: after.finalized_at, paymentId: after.payment_id },
              PAGE,
            ),
          );
          assert.deepEqual(
            lookbackRead,
            inOrder(lookback, (r) => r.finalized_at),
          );
        } finally {
          await database.close();
          await store.drop();
        }
      },
    );
  });
}
