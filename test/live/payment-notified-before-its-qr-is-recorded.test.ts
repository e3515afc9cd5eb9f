/**
 * A Setu payment notified while its pay-in is still being opened (Setu made the QR, Paygate has not
 * recorded its id yet) is the pay-in's payment, not money that names no pay-in (CONTRACT §10: one
 * Setu payment is one payment). The notification waits, kept, until the pay-in is recorded, and is
 * then applied as any other: nothing goes to suspense, nothing is refunded at Setu, the pay-in is
 * SUCCESS once, by the worker's poll or by the kept notification, whichever comes first.
 *
 * Before this rule the notification was kept as `unknown_reference` in suspense and refunded by
 * AUTO_REFUND_UNMATCHED while the poll credited the same payment to the merchant: the customer's
 * one payment counted twice (a rehearsal then saw Setu refuse the merchant's refund of it).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { FakePayment } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { until, useLive, type LiveGateway } from '../support/live.ts';
import { findTransaction } from '../../src/transactions/transactions.repository.ts';

let n = 0;

/** A pay-in whose QR the customer pays, Setu notifying it, before Paygate has recorded the QR. */
async function paidWhileOpening(l: LiveGateway): Promise<{ paymentId: string; payment: FakePayment }> {
  const setu = l.gw.paygate.services.setu!;
  const open = setu.openPayin.bind(setu);
  let payment: FakePayment | undefined;
  setu.openPayin = async (p) => {
    const answer = await open(p);
    payment = await l.setu.pay(p.paymentId);
    return answer;
  };
  try {
    const res = await l.post('/payments/onsite/payin', {
      money: { amount: 1 },
      merchant_order_no: `opening-${process.pid}-${++n}`,
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(payment, 'paid while opening');
    return { paymentId: res.body.payment_id, payment };
  } finally {
    setu.openPayin = open;
  }
}

const kept = (l: LiveGateway, paymentId: string) =>
  l.gw.database.db
    .selectFrom('channel_events')
    .select(['state', 'type'])
    .where('payment_id', '=', paymentId)
    .where('type', '=', 'payment.success')
    .executeTakeFirst();

/** What the kept notification waits for (APPLY_GRACE_MS) passes: the worker applies it. */
async function keptApplied(l: LiveGateway, paymentId: string): Promise<void> {
  await l.gw.database.db
    .updateTable('channel_events')
    .set({ next_action_at: Date.now() })
    .where('payment_id', '=', paymentId)
    .where('state', '=', 'pending')
    .execute();
  await until(async () => (await kept(l, paymentId))?.state === 'applied', 'the kept notification applied');
}

/** One payment, once: SUCCESS with Setu's payment, no exception, nothing refunded at Setu, the ledger clean. */
async function oncePaid(l: LiveGateway, paymentId: string, payment: FakePayment, by: string): Promise<void> {
  const row = (await findTransaction(l.gw.database.db, paymentId))!;
  assert.equal(row.status, 'SUCCESS');
  assert.equal(row.channel_payment_id, payment.id);
  assert.equal(row.utr, payment.rrn);
  const events = await l.gw.database.db
    .selectFrom('transaction_events')
    .select('source')
    .where('payment_id', '=', paymentId)
    .where('status', '=', 'SUCCESS')
    .execute();
  assert.deepEqual(
    events.map((e) => e.source),
    [by],
  );
  assert.deepEqual(await l.exceptions(), [], 'nothing in suspense');
  await new Promise((r) => setTimeout(r, 300));
  const refunds = l.setu.requests.filter(
    (q) => q.method === 'POST' && q.path === '/api/v1/merchants/refunds',
  );
  assert.equal(refunds.length, 0, 'no refund sent to Setu');
}

await onEachDatabase('a Setu payment notified before its pay-in records the QR', (kind) => {
  describe(`the worker's poll first on ${kind}`, () => {
    const live = useLive(kind, { CHANNEL_POLL_MS: '1000' });
    afterEach(async () => live().ledgerOk());

    it('the notification waits, the poll settles the pay-in, the kept notification then changes nothing', async () => {
      const l = live();
      const { paymentId, payment } = await paidWhileOpening(l);
      assert.deepEqual(await l.exceptions(), [], 'not money naming no pay-in');
      assert.equal((await kept(l, paymentId))?.state, 'pending', 'the notification is kept');
      await l.waitStatus('payin', paymentId, 'SUCCESS');
      await keptApplied(l, paymentId);
      await oncePaid(l, paymentId, payment, 'poll:setu');
    });
  });

  describe(`the kept notification first on ${kind}`, () => {
    const live = useLive(kind);
    afterEach(async () => live().ledgerOk());

    it('the kept notification, applied once the pay-in is recorded, settles it', async () => {
      const l = live();
      const { paymentId, payment } = await paidWhileOpening(l);
      assert.equal((await kept(l, paymentId))?.state, 'pending', 'the notification is kept');
      assert.equal((await l.status('payin', paymentId)).status, 'PENDING');
      await keptApplied(l, paymentId);
      await oncePaid(l, paymentId, payment, 'notification:setu');
    });
  });
});
