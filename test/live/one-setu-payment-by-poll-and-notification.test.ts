/**
 * One Setu payment is one payment (CONTRACT §10, docs/decisions.md), whatever reports it and in
 * whatever order: the worker's read of the QR's payment (a poll) and Setu's `payment.success`
 * notification for the same payment, applied at the same moment, settle the pay-in SUCCESS once.
 * The one applied second finds it final and recognises the payment by Setu's payment id: no
 * `payment_after_final` exception, nothing in suspense, no refund sent to Setu, the ledger clean.
 *
 * Pairs race in waves, the poll first, the notification first, or both at once; half of the polls
 * carry no rrn yet (the pay-in keeps the notification's). On PostgreSQL a second connection holds
 * the wave's rows (`FOR UPDATE`) while both reports are sent, so that both read the pay-in PENDING
 * and wait on its row, and are let go together.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { findTransaction } from '../../src/transactions/transactions.repository.ts';
import { onEachDatabase } from '../support/harness.ts';
import { useLive, type LiveGateway } from '../support/live.ts';

/** Pairs raced per database (RACE_PAIRS), and how many race at once. */
const PAIRS = Number(process.env.RACE_PAIRS ?? 12);
const WAVE = 4;

let n = 0;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A pay-in paid at the fake Setu, not notified yet, and the worker's read of its payment;
 * `noRrn`: a read that does not carry the rrn yet (the notification does).
 */
async function paidUnnotified(l: LiveGateway, noRrn: boolean) {
  const res = await l.post('/payments/onsite/payin', {
    money: { amount: 1 },
    merchant_order_no: `race-${process.pid}-${++n}`,
  });
  assert.equal(res.status, 200, res.text);
  const paymentId: string = res.body.payment_id;
  const payment = await l.setu.pay(paymentId, { notify: false });
  const row = (await findTransaction(l.gw.database.db, paymentId))!;
  assert.equal(row.status, 'PENDING');
  const outcome = await l.gw.paygate.services.setu!.payinOutcome({
    paymentId,
    channelTxnId: row.channel_txn_id,
    amount: row.amount,
  });
  assert.ok(outcome, 'the poll reads the payment');
  return { row, qr: l.setu.qrFor(paymentId)!, payment, outcome: noRrn ? { ...outcome, utr: '' } : outcome };
}

type Pair = Awaited<ReturnType<typeof paidUnnotified>>;

type Order = 'poll first' | 'notification first' | 'together';
const ORDERS: Order[] = ['poll first', 'notification first', 'together'];

/** The poll's outcome applied as the worker applies it (`payinStep`), with the row it read before. */
function poll(l: LiveGateway, p: Pair): Promise<void> {
  return l.gw.paygate.services.outcomes.payin(p.row, p.outcome, 'poll:setu');
}

async function notify(l: LiveGateway, p: Pair): Promise<void> {
  assert.equal(await l.setu.notify('payment.success', p.qr, p.payment), 200);
}

/**
 * A wave of pairs. On PostgreSQL the rows are held by another connection while the reports named
 * first are sent, until they wait on the rows; then the others, and the rows are let go: both read
 * the pay-in PENDING, and the first in the queue settles it. On SQLite (one writer at a time) the
 * second report is applied after the first committed, the poll with the row it read before.
 */
async function wave(l: LiveGateway, pairs: Pair[], order: Order, barrier: Database | null): Promise<void> {
  const [first, second] = order === 'poll first' ? [poll, notify] : [notify, poll];
  if (order === 'together') {
    await Promise.all(pairs.flatMap((p) => [poll(l, p), notify(l, p)]));
    return;
  }
  if (!barrier) {
    await Promise.all(pairs.map((p) => first(l, p)));
    await Promise.all(pairs.map((p) => second(l, p)));
    return;
  }
  const ids = pairs.map((p) => p.row.payment_id);
  const sent: Promise<unknown>[] = [];
  await barrier.db.transaction().execute(async (tx) => {
    await sql`select payment_id from transactions where payment_id in (${sql.join(ids)}) for update`.execute(
      tx,
    );
    sent.push(...pairs.map((p) => first(l, p)));
    await waiting(barrier, 1);
    sent.push(...pairs.map((p) => second(l, p)));
    await waiting(barrier, 2);
  });
  await Promise.all(sent);
}

/** Waits (a bounded while) until `count` sessions wait on a row lock, and a moment more for the rest of a wave. */
async function waiting(barrier: Database, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where wait_event_type = 'Lock' and datname = current_database()`.execute(barrier.db);
    if (rows[0]!.n >= count || Date.now() > deadline) break;
    await pause(5);
  }
  await pause(50);
}

await onEachDatabase('one Setu payment reported by a poll and a notification at once', (kind) => {
  describe(`on ${kind}`, () => {
    const live = useLive(kind);

    it(`${PAIRS} pairs raced: each pay-in SUCCESS once, no payment after final, nothing refunded, the ledger clean`, async () => {
      const l = live();
      const barrier = kind === 'postgres' ? openDatabase(l.gw.testDb.url) : null;
      const ids: string[] = [];
      try {
        for (let first = 0; first < PAIRS; first += WAVE) {
          const pairs: Pair[] = [];
          for (let k = first; k < Math.min(PAIRS, first + WAVE); k++)
            pairs.push(await paidUnnotified(l, k % 2 === 1));
          await wave(l, pairs, ORDERS[(first / WAVE) % ORDERS.length]!, barrier);
          ids.push(...pairs.map((p) => p.row.payment_id));
        }
      } finally {
        await barrier?.close();
      }
      const db = l.gw.database.db;
      for (const id of ids) {
        const row = (await findTransaction(db, id))!;
        const paid = l.setu.qrFor(id)!.payment!;
        assert.equal(row.status, 'SUCCESS', id);
        assert.equal(row.channel_payment_id, paid.id, `${id}: Setu's payment id kept`);
        assert.equal(row.utr, paid.rrn, `${id}: the rrn kept`);
      }
      const successes = await db
        .selectFrom('transaction_events')
        .select(['payment_id', 'source'])
        .where('payment_id', 'in', ids)
        .where('status', '=', 'SUCCESS')
        .execute();
      assert.equal(successes.length, ids.length, 'one SUCCESS event per pay-in');
      assert.deepEqual(await l.exceptions(), [], 'no exception: one payment each');
      // An automatic refund from suspense, had there been one, is sent by the worker within this.
      await pause(500);
      const refundPosts = l.setu.requests.filter(
        (q) => q.method === 'POST' && q.path === '/api/v1/merchants/refunds',
      );
      assert.equal(refundPosts.length, 0, 'no refund sent to Setu');
      await l.ledgerOk();
      const by = (source: string) => successes.filter((s) => s.source === source).length;
      assert.ok(by('poll:setu') > 0 && by('notification:setu') > 0, 'each settled some pay-ins first');
      console.log(
        `${kind}: ${ids.length} pairs; settled by the poll ${by('poll:setu')}, by the notification ${by('notification:setu')}`,
      );
    });
  });
});
