/**
 * Money that moves after Paygate decided (CONTRACT §10, §13), on both databases, through the real
 * adapters against the fake providers behind their published documents (the spec proxies):
 * reconciliation reads back what became final in the lookback and books what moved money as if the
 * provider had said it at the time (a reversal, a late payment, a suspense refund paid twice); one
 * Setu payment is one payment by its id; a refund POST answered 504 is never sent again on the
 * strength of the error; a transaction open at both ends is no difference; a bare 404 says nothing.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DATABASES } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { RECEIVER, until, useLive, type LiveGateway } from '../support/live.ts';
import { cliAsync } from '../support/process.ts';
import { CASHFREE_SPEC, SETU_SPEC, type SpecProxy, useSpecProxy } from '../support/spec-proxy.ts';
import { istDate } from '../../src/ist.ts';

const DAY_MS = 86_400_000;
let n = 0;
const order = (prefix: string) => `${prefix}-${process.pid}-${++n}`;

async function payin(l: LiveGateway, amount = 250.5): Promise<string> {
  const res = await l.post('/payments/onsite/payin', { money: { amount }, merchant_order_no: order('in') });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id;
}

async function payout(l: LiveGateway, amount = 1200.75): Promise<string> {
  const res = await l.post('/payments/payout', {
    money: { amount },
    merchant_order_no: order('po'),
    receiver: RECEIVER,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id;
}

/** Moves a transaction's times `days` into the past, as if it had been created and decided then. */
async function age(l: LiveGateway, paymentId: string, days: number): Promise<void> {
  const ms = days * DAY_MS;
  await l.gw.database.db
    .updateTable('transactions')
    .set({
      created_at: sql`created_at - ${ms}`,
      updated_at: sql`updated_at - ${ms}`,
      finalized_at: sql`finalized_at - ${ms}`,
    })
    .where('payment_id', '=', paymentId)
    .execute();
}

/** The CLI as an operator runs it against the gateway's database, reaching the providers through `base`. */
function cli(l: LiveGateway, args: string[], base: { setu?: string; cashfree?: string }, env = {}) {
  return cliAsync([...args, '--json'], {
    DATABASE_URL: l.gw.testDb.url,
    ...l.setu.env(base.setu),
    ...l.cashfree.env(base.cashfree),
    AUTO_REFUND_UNMATCHED: 'false',
    ...env,
  });
}

async function exceptionsOf(l: LiveGateway, paymentId: string) {
  const rows = await l.gw.database.db
    .selectFrom('channel_exceptions')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), amount: r.amount === null ? null : Number(r.amount) }));
}

async function row(l: LiveGateway, paymentId: string) {
  return l.gw.database.db
    .selectFrom('transactions')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirstOrThrow();
}

/** A pay-in left to expire (FAILED), then paid at Setu with its notification dropped. */
async function latePayment(l: LiveGateway, amount: number) {
  const id = await payin(l, amount);
  await l.waitStatus('payin', id, 'FAILED', 30_000);
  const payment = await l.setu.pay(id, { notify: false });
  return { id, payment };
}

const cashfreeDocument = useSpecProxy(CASHFREE_SPEC);
const setuDocument = useSpecProxy(SETU_SPEC);

for (const kind of DATABASES) {
  describe(`after Paygate decided, on ${kind}`, { skip: await skipFor(kind) }, () => {
    const fakes = { setu: new FakeSetu(), cashfree: new FakeCashfree() };
    let proxies: { setu: SpecProxy; cashfree: SpecProxy };
    before(async () => {
      await fakes.setu.start();
      await fakes.cashfree.start();
      proxies = {
        setu: await setuDocument.route(fakes.setu.url),
        cashfree: await cashfreeDocument.route(fakes.cashfree.url),
      };
    });
    after(async () => {
      await fakes.setu.stop();
      await fakes.cashfree.stop();
    });
    const base = () => ({ setu: proxies.setu.url, cashfree: proxies.cashfree.url });
    const live = useLive(
      kind,
      { PAYIN_EXPIRY_S: '3', CHANNEL_POLL_MS: '300', AUTO_REFUND_UNMATCHED: 'false' },
      () => ({ proxies: base(), fakes }),
    );
    afterEach(async () => live().ledgerOk());

    it('books a reversal that only a read three days later reports: the merchant credited once, one REVERSED callback', async () => {
      const l = live();
      const id = await payout(l, 700);
      await l.waitStatus('payout', id, 'SUCCESS');
      await l.receiver.waitFor(() => l.receiver.forPayment(id).length === 1, 'the SUCCESS callback');
      // Days later the bank sends the money back; Cashfree's webhook is lost.
      l.cashfree.transfers.get(id)!.status = 'REVERSED';
      await age(l, id, 3);
      const before = await l.balance();
      for (let run = 0; run < 2; run++) {
        const r = await cli(l, ['reconcile', '--channel', 'cashfree'], base());
        assert.equal(r.status, 0, r.stderr + r.stdout);
        assert.equal(r.json.runs[0].date, istDate(Date.now() - DAY_MS));
      }
      assert.equal((await l.balance()).available - before.available, 70_000, 'credited once');
      const status = await l.status('payout', id);
      assert.equal(status.status, 'SUCCESS');
      assert.equal(status.reversed, true);
      await l.receiver.waitFor(
        () => l.receiver.forPayment(id).some((c) => c.body.status === 'REVERSED'),
        'the REVERSED callback',
      );
      await new Promise((r) => setTimeout(r, 300));
      const reversed = l.receiver.forPayment(id).filter((c) => c.body.status === 'REVERSED');
      assert.equal(reversed.length, 1, 'one REVERSED callback');
      assert.deepEqual(
        (await exceptionsOf(l, id)).map((e) => e.kind),
        ['reversal'],
        'the reversal is kept for the operator, and no reconcile_mismatch',
      );
    });

    it('journals a payment on a FAILED pay-in into suspense when reconcile finds it; the operator refunds it', async () => {
      const l = live();
      const { id, payment } = await latePayment(l, 321);
      await age(l, id, 2);
      const r = await cli(l, ['reconcile', '--channel', 'setu'], base(), { AUTO_REFUND_UNMATCHED: 'false' });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      const [e] = await exceptionsOf(l, id);
      assert.equal(e?.kind, 'payment_after_final');
      assert.equal(e.reference, payment.id);
      assert.equal(e.holds, 'suspense');
      assert.equal(Number(e.outstanding), 32_100);
      assert.equal((await l.status('payin', id)).status, 'FAILED', 'a final status never changes');
      const resolved = await cli(l, ['exceptions', 'resolve', String(e.id), '--action', 'refund'], base());
      assert.equal(resolved.status, 0, resolved.stderr + resolved.stdout);
      await until(async () => (await exceptionsOf(l, id))[0]!.resolved_at !== null, 'the refund', 15_000);
      const refunds = l.setu.refunds;
      assert.equal([...refunds.values()].filter((x) => x.paymentId === payment.id).length, 1);
      const closed = (await exceptionsOf(l, id))[0]!;
      assert.equal(closed.resolution, 'refund');
      assert.equal(Number(closed.outstanding), 0);
    });

    it('a suspense refund paid after it was recorded FAILED and the money credited: owed from the receivable, resolved by debit or dismissal', async () => {
      const l = live();
      for (const resolution of ['debit', 'dismiss'] as const) {
        const { id } = await latePayment(l, 200);
        await age(l, id, 2);
        assert.equal((await cli(l, ['reconcile', '--channel', 'setu'], base())).status, 0);
        const [e] = await exceptionsOf(l, id);
        assert.equal(e?.holds, 'suspense');
        // The refund to the customer fails at Setu: the exception is free again.
        l.setu.refundEnding = 'failed';
        const refunded = await cli(l, ['exceptions', 'resolve', String(e.id), '--action', 'refund'], base());
        assert.equal(refunded.status, 0, refunded.stderr + refunded.stdout);
        let refundId = '';
        await until(async () => {
          const r = await l.gw.database.db
            .selectFrom('transactions')
            .select(['payment_id', 'status'])
            .where('exception_id', '=', e.id)
            .executeTakeFirst();
          refundId = r?.payment_id ?? '';
          return r?.status === 'FAILED';
        }, 'the suspense refund FAILED');
        l.setu.refundEnding = 'success';
        // The operator credits the merchant with the money…
        const credited = await cli(l, ['exceptions', 'resolve', String(e.id), '--action', 'credit'], base());
        assert.equal(credited.status, 0, credited.stderr + credited.stdout);
        // …and then Setu says the refund went through after all: the customer is paid twice.
        const atSetu = [...l.setu.refunds.values()].find((x) => x.referenceId === refundId)!;
        atSetu.ending = 'success';
        await age(l, refundId, 1);
        const before = await l.balance();
        for (let run = 0; run < 2; run++)
          assert.equal((await cli(l, ['reconcile', '--channel', 'setu'], base())).status, 0);
        const owed = (await exceptionsOf(l, refundId)).filter((x) => x.kind === 'refund_after_failed');
        assert.equal(owed.length, 1, 'booked once');
        assert.equal(owed[0]!.holds, 'receivable');
        assert.equal(Number(owed[0]!.outstanding), 20_000);
        assert.equal(owed[0]!.merchant_id, l.merchant.merchant_id, 'owed by the merchant that was credited');
        await l.ledgerOk();
        const action =
          resolution === 'debit' ? ['--action', 'debit'] : ['--action', 'dismiss', '--note', 'written off'];
        const done = await cli(l, ['exceptions', 'resolve', String(owed[0]!.id), ...action], base());
        assert.equal(done.status, 0, done.stderr + done.stdout);
        const after = await l.balance();
        assert.equal(before.available - after.available, resolution === 'debit' ? 20_000 : 0);
        if (resolution === 'dismiss') {
          const written = await l.gw.database.db
            .selectFrom('ledger_entries')
            .select('amount')
            .where('payment_id', '=', refundId)
            .where('account', '=', 'external:written_off')
            .execute();
          assert.deepEqual(
            written.map((w) => Number(w.amount)),
            [-20_000],
          );
        }
        await l.ledgerOk();
        // The journal of the second payment removed by hand: the ledger check sees the movement missing.
        const journal = await l.gw.database.db
          .selectFrom('ledger_entries')
          .selectAll()
          .where('payment_id', '=', refundId)
          .where('kind', '=', 'refund_receivable')
          .execute();
        assert.equal(journal.length, 2);
        await l.gw.database.db
          .deleteFrom('ledger_entries')
          .where('journal_id', '=', journal[0]!.journal_id)
          .execute();
        const broken = await l.gw.paygate.services.wallets.verify();
        assert.equal(broken.ok, false);
        assert.ok(
          broken.problems.some((p) => p.includes('external:receivable')),
          broken.problems.join('\n'),
        );
        await l.gw.database.db
          .insertInto('ledger_entries')
          .values(journal.map(({ id: _id, ...entry }) => entry))
          .execute();
      }
    });

    it('one Setu payment is one payment by its id: reported without and then with an rrn; two ids without rrn are two', async () => {
      const l = live();
      const id = await payin(l, 150);
      const p = await l.setu.pay(id, { notify: false });
      const rrn = p.rrn;
      p.rrn = '';
      // The worker's poll finds the payment without a bank reference, then its notification brings one.
      await l.waitStatus('payin', id, 'SUCCESS');
      assert.equal((await l.status('payin', id)).utr, '');
      p.rrn = rrn;
      assert.equal(await l.setu.notify('payment.success', l.setu.qrFor(id)!, p), 200);
      assert.deepEqual(await exceptionsOf(l, id), [], 'no exception: it is the same payment');
      assert.equal((await l.status('payin', id)).utr, rrn, 'the bank reference, now known');

      const other = await payin(l, 150);
      const qr = () => l.setu.qrFor(other)!;
      const first = await l.setu.pay(other, { notify: false, keepActive: true });
      first.rrn = '';
      assert.equal(await l.setu.notify('payment.success', qr(), first), 200);
      await l.waitStatus('payin', other, 'SUCCESS');
      const second = await l.setu.pay(other, { notify: false });
      second.rrn = '';
      assert.equal(await l.setu.notify('payment.success', qr(), second), 200);
      const kept = await exceptionsOf(l, other);
      assert.deepEqual(
        kept.map((e) => [e.kind, e.reference, e.holds]),
        [['payment_after_final', second.id, 'suspense']],
      );
      assert.equal((await row(l, other)).channel_payment_id, first.id);
    });

    it('has nothing the documents do not allow', () => {
      assert.deepEqual(proxies.setu.violations(), []);
      assert.deepEqual(proxies.cashfree.violations(), []);
    });
  });

  describe(
    `what the documents do not list, and transactions open at both ends, on ${kind}`,
    { skip: await skipFor(kind) },
    () => {
      // Straight to the fakes: a 504 and a bare 404 are answers the providers' documents do not list.
      const live = useLive(kind, { PAYIN_EXPIRY_S: '600', CHANNEL_POLL_MS: '300' });
      afterEach(async () => live().ledgerOk());

      it('a refund POST answered 504, its refund showing at Setu only later, is never sent again: one refund', async () => {
        const l = live();
        const id = await payin(l, 400);
        await l.setu.pay(id);
        await l.waitStatus('payin', id, 'SUCCESS');
        l.setu.fail('refund_create', { afterStatus: 504 });
        l.setu.refundReadLagMs = 4000;
        try {
          const res = await l.post('/payments/refund', {
            payment_id: id,
            money: { amount: 400 },
            merchant_refund_no: order('rf'),
          });
          assert.equal(res.status, 200, res.text);
          const refundId = res.body.refund_id;
          await until(
            async () =>
              (await l.post('/payments/refund_status', { refund_id: refundId })).body.status === 'SUCCESS',
            'the refund found and settled',
            20_000,
          );
          assert.equal(l.setu.refundPosts(refundId).length, 1, 'one POST');
          assert.equal(l.setu.refundsFor(refundId).length, 1, 'one refund at Setu');
          const reads = l.setu.requests.filter((q) => q.path.endsWith('/payment') && q.method === 'GET');
          assert.ok(
            reads.length >= 2,
            `${reads.length} reads of the payment's refunds, none of which allowed a send`,
          );
        } finally {
          l.setu.refundReadLagMs = 0;
        }
      });

      it('finds no difference in transactions still open at both ends', async () => {
        const l = live();
        l.cashfree.ending = 'never';
        const out = await payout(l, 90);
        await until(async () => (await row(l, out)).status === 'PROCESSING', 'the payout sent');
        const open = await payin(l, 90);
        const r = await cli(l, ['reconcile', '--date', istDate(Date.now())], {});
        l.cashfree.ending = 'SUCCESS';
        assert.equal(r.status, 0, r.stderr + r.stdout);
        for (const run of r.json.runs) {
          assert.equal(run.mismatched, 0, JSON.stringify(run));
          assert.ok(run.checked >= 1);
        }
        assert.equal((await row(l, open)).status, 'PENDING');
      });

      it("reads a 404 without the provider's not-found code (a proxy's bare 404) as unreadable, not as unknown", async () => {
        const l = live();
        const id = await payout(l, 80);
        await l.waitStatus('payout', id, 'SUCCESS');
        l.cashfree.fail('transfer_read', ...Array.from({ length: 50 }, () => ({ status: 404, body: '' })));
        const r = await cli(l, ['reconcile', '--date', istDate(Date.now()), '--channel', 'cashfree'], {});
        l.cashfree.faults.delete('transfer_read');
        assert.equal(r.status, 0, r.stderr + r.stdout);
        const [run] = r.json.runs;
        assert.equal(run.unreadable, run.checked);
        assert.equal(run.mismatched, 0);
        const mismatches = await l.gw.database.db
          .selectFrom('channel_exceptions')
          .select('reference')
          .where('kind', '=', 'reconcile_mismatch')
          .execute();
        assert.ok(!mismatches.some((m) => m.reference.includes('NOT_FOUND')), 'no "not found" difference');
      });
    },
  );
}
