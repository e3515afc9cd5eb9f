/**
 * Live refunds through Setu (contract §12 "Live", §10's production rules), on both databases, with
 * Paygate's calls to the fake Setu going through the spec proxy (Setu's published document checks
 * every request and answer): a refund's success (utr = Setu's crn, one callback), NPCI's refusal
 * (FAILED, the hold back, the reason kept), a send whose answer was lost decided by reading the
 * payment's refunds and matching referenceId, notifications that name a refund (duplicated, out of
 * order) read it at once, a refund of a payment whose bank refuses online refunds, and the
 * refusals that hold nothing. The fake takes a repeated referenceId as a new refund, so "one
 * provider refund per refund" is counted on the POSTs it received, not on its de-duplication.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { getPage, signedIn } from '../support/console.ts';
import { DATABASES } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu, REFUND_DISABLED, type FakePayment } from '../support/fake-setu.ts';
import { skipFor, testAccounts } from '../support/harness.ts';
import { until, useLive, type LiveGateway } from '../support/live.ts';
import { cliAsync } from '../support/process.ts';
import { SETU_SPEC, startSpecProxy, type SpecProxy } from '../support/spec-proxy.ts';
import { istDate } from '../../src/ist.ts';

const databaseSkip = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };
const POLL_MS = 400;
/** CHANNEL_RESEND_AFTER_S, low: a refund POST whose outcome is unknown may be sent again this long after it. */
const RESEND_AFTER_S = 2;

let n = 0;

/** A live pay-in of `amount` rupees paid through the fake Setu (by notification); its id and the payment. */
async function paidIn(l: LiveGateway, amount: number): Promise<{ id: string; payment: FakePayment }> {
  const res = await l.post('/payments/onsite/payin', {
    money: { amount },
    merchant_order_no: `lr-${process.pid}-${++n}`,
  });
  assert.equal(res.status, 200, res.text);
  const id = res.body.payment_id as string;
  // The fake is shared by the gateways of this file: its notifications go to this one's.
  l.setu.notifyUrl = `${l.gw.baseUrl}/channels/setu/notifications`;
  const payment = await l.setu.pay(id);
  await l.waitStatus('payin', id, 'SUCCESS');
  return { id, payment };
}

async function refund(l: LiveGateway, paymentId: string, amount: number): Promise<string> {
  const res = await l.post('/payments/refund', {
    payment_id: paymentId,
    money: { amount },
    merchant_refund_no: `lrf-${process.pid}-${++n}`,
  });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.status, 'PENDING');
  return res.body.refund_id as string;
}

async function refundStatus(l: LiveGateway, refundId: string): Promise<any> {
  const res = await l.post('/payments/refund_status', { refund_id: refundId });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function waitRefund(l: LiveGateway, refundId: string, want: string, timeoutMs = 10_000): Promise<any> {
  let last: any;
  await until(
    async () => (last = await refundStatus(l, refundId)).status === want,
    `refund ${refundId} ${want}`,
    timeoutMs,
  );
  return last;
}

async function row(l: LiveGateway, paymentId: string) {
  return l.gw.database.db
    .selectFrom('transactions')
    .selectAll()
    .where('payment_id', '=', paymentId)
    .executeTakeFirstOrThrow();
}

describe('live refunds through the Setu document', () => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let proxy: SpecProxy;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    proxy = await startSpecProxy(SETU_SPEC, setu.url);
  });

  after(async () => {
    await proxy?.stop();
    await setu?.stop();
    await cashfree?.stop();
  });

  for (const kind of DATABASES) {
    describe(`on ${kind}`, { skip: databaseSkip[kind] }, () => {
      const options = () => ({ fakes: { setu, cashfree }, proxies: { setu: proxy.url } });
      // Prism is slow to answer its first calls on a busy machine: a channel timeout well above that.
      const live = useLive(
        kind,
        {
          CHANNEL_POLL_MS: String(POLL_MS),
          CHANNEL_TIMEOUT_MS: '3000',
          CHANNEL_RESEND_AFTER_S: String(RESEND_AFTER_S),
        },
        options,
      );
      afterEach(async () => {
        Object.assign(setu, { refundEnding: 'success', refundSettleMs: 0, refundReadLagMs: 0 });
        setu.refundReason = {
          errCode: 'refund-failed',
          npciErrCode: 'U28',
          npciErrDesc: 'PSP NOT AVAILABLE',
        };
        setu.faults.clear();
        await live().ledgerOk();
      });

      it('refunds through Setu: one POST naming the payment, PROCESSING, then SUCCESS with utr = crn and one callback', async () => {
        const l = live();
        setu.refundSettleMs = POLL_MS;
        const { id, payment } = await paidIn(l, 250);
        const payin = await row(l, id);
        assert.equal(payin.channel_payment_id, payment.id, 'the pay-in keeps the Setu payment that paid it');
        assert.equal(payin.channel_payment_txn_id, payment.txnId);
        const before = await l.balance();
        const refundId = await refund(l, id, 100.5);
        assert.deepEqual(await l.balance(), {
          available: before.available - 10050,
          held: before.held + 10050,
        });
        await until(async () => (await row(l, refundId)).status === 'PROCESSING', 'PROCESSING');
        const done = await waitRefund(l, refundId, 'SUCCESS');
        const [made] = setu.refundsFor(refundId);
        assert.equal(done.utr, made!.crn);
        assert.equal((await row(l, refundId)).channel_txn_id, made!.id);
        const posts = setu.refundPosts(refundId);
        assert.equal(posts.length, 1);
        assert.deepEqual(posts[0]!.body, {
          paymentId: payment.id,
          amount: 10050,
          referenceId: refundId,
          type: 'online',
        });
        assert.deepEqual(await l.balance(), { available: before.available - 10050, held: before.held });
        await l.receiver.waitFor(() => l.receiver.forPayment(refundId).length === 1, 'the callback');
        const cb = l.receiver.forPayment(refundId)[0]!;
        assert.equal(cb.body.status, 'SUCCESS');
        assert.equal(cb.body.utr, made!.crn);
        assert.equal(cb.body.payment_id, id);
      });

      it("an NPCI refusal read by polling is FAILED: the hold goes back and NPCI's reason is kept", async () => {
        const l = live();
        setu.refundEnding = 'failed';
        setu.refundSettleMs = POLL_MS;
        const { id } = await paidIn(l, 80);
        const before = await l.balance();
        const refundId = await refund(l, id, 80);
        const failed = await waitRefund(l, refundId, 'FAILED');
        assert.equal(failed.utr, '');
        assert.deepEqual(await l.balance(), before);
        const r = await row(l, refundId);
        assert.equal(r.failure_reason, 'refund-failed U28: PSP NOT AVAILABLE');
        assert.equal(r.channel_txn_id, setu.refundsFor(refundId)[0]!.id);
        assert.equal(setu.refundPosts(refundId).length, 1);
        await l.receiver.waitFor(() => l.receiver.forPayment(refundId).length === 1, 'the callback');
        assert.equal(l.receiver.forPayment(refundId)[0]!.body.status, 'FAILED');
        // The pay-in's full amount is refundable again.
        const again = await refund(l, id, 80);
        setu.refundEnding = 'success';
        await waitRefund(l, again, 'SUCCESS');
      });

      it('a refund of a payment whose bank refuses online refunds (refund-disabled, R21) is FAILED at once with that reason', async () => {
        const l = live();
        const { id, payment } = await paidIn(l, 60);
        setu.refundDisabled.add(payment.id);
        const before = await l.balance();
        const refundId = await refund(l, id, 25);
        await waitRefund(l, refundId, 'FAILED');
        assert.deepEqual(await l.balance(), before);
        const r = await row(l, refundId);
        assert.equal(
          r.failure_reason,
          `${REFUND_DISABLED.errCode} ${REFUND_DISABLED.npciErrCode}: ${REFUND_DISABLED.npciErrDesc}`,
        );
        assert.equal(setu.refundPosts(refundId).length, 1);
        // Nothing read it: the answer to the POST was NPCI's word.
        assert.equal(
          setu.requests.filter((q) => q.path.includes(`/refunds/${setu.refundsFor(refundId)[0]!.id}`)).length,
          0,
        );
        const events = await l.gw.database.db
          .selectFrom('transaction_events')
          .select(['status', 'source'])
          .where('payment_id', '=', refundId)
          .execute();
        assert.deepEqual(events, [{ status: 'FAILED', source: 'channel:setu' }]);
        // The console shows the operator Setu's id for the refund and NPCI's reason.
        const email = `ops-${kind}-${++n}@example.com`;
        await testAccounts(l.gw.database.db).createUser({
          email,
          role: 'operator',
          merchantId: null,
          password: 'correct horse battery',
        });
        const browser = await signedIn(l.gw, email, 'correct horse battery');
        const page = await getPage(l.gw, browser, `/dashboard/transactions/${refundId}`);
        assert.equal(page.statusCode, 200);
        assert.ok(page.body.includes(setu.refundsFor(refundId)[0]!.id), "Setu's refund id on the page");
        assert.ok(page.body.includes('refund-disabled R21: ONLINE REFUND IS DISABLED IN UPI'), 'the reason');
      });

      it("a POST that timed out (Setu made the refund) is found among the payment's refunds by referenceId: one POST", async () => {
        const l = live();
        const { id, payment } = await paidIn(l, 90);
        setu.fail('refund_create', { delayMs: 3500 });
        const refundId = await refund(l, id, 45);
        const done = await waitRefund(l, refundId, 'SUCCESS', 15_000);
        assert.equal(setu.refundPosts(refundId).length, 1, 'one POST reached Setu');
        assert.equal(setu.refundsFor(refundId).length, 1);
        const lists = setu.requests.filter(
          (q) => q.path === `/api/v1/merchants/refunds/${payment.txnId}/payment`,
        );
        assert.ok(lists.length >= 1, "the payment's refunds were read");
        assert.equal(done.utr, setu.refundsFor(refundId)[0]!.crn);
        assert.equal((await row(l, refundId)).channel_txn_id, setu.refundsFor(refundId)[0]!.id);
        await l.receiver.waitFor(() => l.receiver.forPayment(refundId).length === 1, 'the callback');
      });

      it('a POST answered 500 (Setu made nothing) is sent again only after two reads POLL_MS apart both lack it, CHANNEL_RESEND_AFTER_S after it', async () => {
        const l = live();
        const { id, payment } = await paidIn(l, 91);
        setu.fail('refund_create', { status: 500, body: { code: 'internal-error', detail: 'try later' } });
        const refundId = await refund(l, id, 91);
        await waitRefund(l, refundId, 'SUCCESS', 15_000);
        const posts = setu.refundPosts(refundId);
        assert.equal(posts.length, 2);
        assert.equal(setu.refundsFor(refundId).length, 1);
        const lists = setu.requests.filter(
          (q) => q.path === `/api/v1/merchants/refunds/${payment.txnId}/payment` && q.at < posts[1]!.at,
        );
        assert.ok(lists.length >= 2, `${lists.length} reads before the second POST`);
        const [first, second] = lists.slice(-2);
        assert.ok(second!.at - first!.at >= POLL_MS - 20, `reads ${second!.at - first!.at} ms apart`);
        assert.ok(first!.at > posts[0]!.at);
        assert.ok(
          posts[1]!.at - posts[0]!.at >= RESEND_AFTER_S * 1000,
          `sent again ${posts[1]!.at - posts[0]!.at} ms after the unknown send`,
        );
      });

      it('refuses what it cannot send, holding nothing: above LIVE_MAX_PAYIN or below 1.00 (400), a pay-in whose Setu payment is unknown (409)', async () => {
        const l = live();
        const { id } = await paidIn(l, 500);
        const before = await l.balance();
        for (const amount of [100000.01, 0.5]) {
          const res = await l.post('/payments/refund', {
            payment_id: id,
            money: { amount },
            merchant_refund_no: `range-${++n}`,
          });
          assert.equal(res.status, 400, res.text);
          assert.equal(res.body.error.error_code, 'AMOUNT_OUT_OF_RANGE');
          assert.deepEqual(
            { min: res.body.error.metadata.min, max: res.body.error.metadata.max },
            { min: 1, max: 100000 },
          );
        }
        await l.gw.database.db
          .updateTable('transactions')
          .set({ channel_payment_id: null, channel_payment_txn_id: null })
          .where('payment_id', '=', id)
          .execute();
        const unknown = await l.post('/payments/refund', {
          payment_id: id,
          money: { amount: 10 },
          merchant_refund_no: `unknown-${++n}`,
        });
        assert.equal(unknown.status, 409, unknown.text);
        assert.equal(unknown.body.error.error_code, 'PAYMENT_NOT_REFUNDABLE');
        assert.deepEqual(await l.balance(), before);
        const refunds = await l.gw.database.db
          .selectFrom('transactions')
          .select('payment_id')
          .where('refund_of', '=', id)
          .execute();
        assert.deepEqual(refunds, []);
      });

      describe('with polls a minute apart', () => {
        const slow = useLive(kind, { CHANNEL_POLL_MS: '60000', CHANNEL_TIMEOUT_MS: '3000' }, options);

        it('a notification naming the refund (duplicated, and out of order) reads it at once; it settles once', async () => {
          const l = slow();
          setu.refundEnding = 'pending';
          const { id } = await paidIn(l, 70);
          const refundId = await refund(l, id, 70);
          await until(async () => (await row(l, refundId)).status === 'PROCESSING', 'PROCESSING');
          const made = setu.refundsFor(refundId)[0]!;
          // A stale "pending" first: read at once, still pending.
          assert.equal(await setu.notifyRefund(made, 'refund.pending'), 200);
          await until(() => setu.count('refund_read') >= 1, 'a read after the notification');
          assert.equal((await row(l, refundId)).status, 'PROCESSING');
          made.ending = 'success';
          const success = JSON.stringify({
            eventId: `ev-${refundId}`,
            eventType: 'refund.success',
            id: made.id,
            referenceId: refundId,
            status: 'success',
            amount: made.amount,
          });
          assert.equal(await setu.send(success), 200);
          assert.equal(await setu.send(success), 200, 'the duplicate is answered 200');
          const done = await waitRefund(l, refundId, 'SUCCESS', 5000);
          assert.equal(done.utr, made.crn);
          // Late and out of order: a "failed" for the same refund changes nothing.
          assert.equal(await setu.notifyRefund(made, 'refund.failed'), 200);
          await new Promise((r) => setTimeout(r, 500));
          assert.equal((await refundStatus(l, refundId)).status, 'SUCCESS');
          assert.equal(l.receiver.forPayment(refundId).length, 1);
          assert.equal(setu.refundPosts(refundId).length, 1);
          const stored = await l.gw.database.db
            .selectFrom('channel_events')
            .select('event_id')
            .where('event_id', '=', `ev-${refundId}`)
            .execute();
          assert.equal(stored.length, 1, 'the duplicate was stored once');
          assert.deepEqual(await l.exceptions(refundId), []);
        });
      });

      it("reconciles live refunds with Setu's refund: a bank reference that differs is one mismatch", async () => {
        const l = live();
        const { id } = await paidIn(l, 66);
        const agrees = await refund(l, id, 30);
        const differs = await refund(l, id, 36);
        await waitRefund(l, agrees, 'SUCCESS');
        await waitRefund(l, differs, 'SUCCESS');
        const changed = setu.refundsFor(differs)[0]!;
        changed.crn = '999000111222';
        const run = await cliAsync(
          ['reconcile', '--date', istDate(Date.now()), '--channel', 'setu', '--json'],
          {
            DATABASE_URL: l.gw.testDb.url,
            ...setu.env(proxy.url),
          },
        );
        assert.equal(run.status, 0, run.stderr + run.stdout);
        assert.equal(run.json.runs[0].unreadable, 0, JSON.stringify(run.json));
        const found = await l.gw.database.db
          .selectFrom('channel_exceptions')
          .select(['reference', 'payment_id'])
          .where('kind', '=', 'reconcile_mismatch')
          .execute();
        assert.deepEqual(found, [{ reference: `${changed.id} utr=999000111222`, payment_id: differs }]);
      });

      it('refunds a second payment on a paid QR once at Setu from suspense (AUTO_REFUND_UNMATCHED) and closes its exception', async () => {
        const l = live();
        const { id } = await paidIn(l, 75);
        const before = await l.balance();
        setu.qrFor(id)!.status = 'active';
        const second = await setu.pay(id);
        let exception: any;
        await until(
          async () => {
            exception = await l.gw.database.db
              .selectFrom('channel_exceptions')
              .selectAll()
              .where('payment_id', '=', id)
              .where('kind', '=', 'payment_after_final')
              .executeTakeFirst();
            return exception?.resolved_at != null;
          },
          'the exception closed by its refund',
          15_000,
        );
        assert.equal(exception.reference, second.id);
        assert.equal(exception.holds, 'suspense');
        assert.equal(Number(exception.outstanding), 0);
        const refundId = exception.refund_id as string;
        assert.ok(refundId, 'the exception names its refund');
        const posts = setu.refundPosts(refundId);
        assert.equal(posts.length, 1, 'one refund POST at Setu');
        assert.equal(posts[0]!.body.paymentId, second.id, 'the refund names the unmatched payment');
        assert.equal(posts[0]!.body.amount, 7500, 'in full');
        assert.equal((await row(l, refundId)).status, 'SUCCESS');
        assert.deepEqual(await l.balance(), before, 'no merchant money moved');
        assert.equal(
          l.receiver.forPayment(refundId).length,
          0,
          'no merchant callback for a refund from suspense',
        );
      });

      it('reports zero violations from the document', () => {
        assert.deepEqual(proxy.violations(), []);
        assert.ok(proxy.output().includes('Forwarding "post" request'));
      });
    });
  }
});
