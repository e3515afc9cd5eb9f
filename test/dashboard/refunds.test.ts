/**
 * Refunds in the console, over HTTP on both databases (contract §11, §12): the Refund action on a
 * SUCCESS pay-in's page (an empty amount, what is refundable named; a review screen that holds
 * nothing; CSRF; one refund per confirmation; audited), the pay-in's refunds, refunds as a kind in the list, its filters and CSV, and in the
 * overview's figures; another merchant's pay-in is 404 and nothing moves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { base62 } from '../../src/ids.ts';
import { DATABASES } from '../support/databases.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { paidMerchant } from '../support/refunds.ts';

const PASSWORD = 'correct horse battery';

function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  assert.ok(m, 'the page has a form with a CSRF token');
  return m[1]!;
}

for (const kind of DATABASES) {
  describe(`refunds in the console (${kind})`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(kind);
    });
    after(() => gw.close());

    async function session(email: string, merchantId: string | null) {
      await testAccounts(gw.database.db).createUser({
        email,
        role: merchantId ? 'merchant' : 'operator',
        merchantId,
        password: PASSWORD,
      });
      const form = await gw.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
      const token = csrfOf(form.body);
      const res = await gw.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `paygate_signin=${token}` },
        payload: new URLSearchParams({ email, password: PASSWORD, csrf: token }).toString(),
      });
      assert.equal(res.statusCode, 303, res.body.slice(0, 500));
      const raw = res.headers['set-cookie'];
      const cookie = (Array.isArray(raw) ? raw : [String(raw)])
        .find((c) => c.startsWith('paygate_session='))!
        .split(';')[0]!;
      const get = (url: string) => gw.app.inject({ method: 'GET', url, headers: { cookie } });
      const csrf = csrfOf((await get('/dashboard')).body);
      const post = (url: string, fields: Record<string, string>, withCsrf = true) =>
        gw.app.inject({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          payload: new URLSearchParams({ ...fields, ...(withCsrf ? { csrf } : {}) }).toString(),
        });
      return { get, post };
    }

    const refundsOf = (paymentId: string) =>
      gw.database.db
        .selectFrom('transactions')
        .select(['payment_id', 'amount', 'status'])
        .where('refund_of', '=', paymentId)
        .execute();

    it('refunds a SUCCESS pay-in from its page: refundable filled in, CSRF, once per form, audited, listed', async () => {
      const m = await paidMerchant(gw);
      const paymentId = await m.paidIn(100);
      const shop = await session(`shop-${base62(6)}@example.com`, m.merchant_id);
      const page = await shop.get(`/dashboard/transactions/${paymentId}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2 id="refunds-h">Refunds<\/h2>/);
      assert.match(
        page.body,
        /at most 100.00\)<input id="refund-amount" name="amount" required inputmode="decimal" autocomplete="off" placeholder="0.00">/,
      );
      assert.doesNotMatch(page.body, /name="form_id"/, 'the first form moves no money: no one-time id');

      // The review: a confirmation page, nothing recorded, nothing held.
      const review = await shop.post(`/dashboard/transactions/${paymentId}/refund`, {
        amount: '30.00',
        reason: 'Damaged',
      });
      assert.equal(review.statusCode, 200, review.body.slice(0, 300));
      assert.match(review.body, /<h1>Confirm refund<\/h1>/);
      assert.match(review.body, /name="amount" value="30.00"/);
      assert.deepEqual(await refundsOf(paymentId), []);
      const formId = /name="form_id" value="([A-Za-z0-9]{22})"/.exec(review.body)![1]!;

      // Without the CSRF token: refused, nothing recorded, nothing held.
      const forged = await shop.post(
        `/dashboard/transactions/${paymentId}/refund`,
        { amount: '30.00', form_id: formId, confirm: 'yes' },
        false,
      );
      assert.equal(forged.statusCode, 403);
      assert.deepEqual(await refundsOf(paymentId), []);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 100, held: 0 });

      const done = await shop.post(`/dashboard/transactions/${paymentId}/refund`, {
        amount: '30.00',
        reason: 'Damaged',
        form_id: formId,
        confirm: 'yes',
      });
      assert.equal(done.statusCode, 303, done.body.slice(0, 500));
      const rows = await refundsOf(paymentId);
      assert.equal(rows.length, 1);
      assert.equal(Number(rows[0]!.amount), 3_000);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 70, held: 30 });
      // The overview names what is held as what it is for: the refund's hold is no payout.
      assert.match(
        (await shop.get('/dashboard')).body,
        /<p>Held for payouts and refunds \(INR\)<\/p><strong>₹30.00<\/strong>/,
      );
      // The same form again (a double click): refused, one refund.
      const twice = await shop.post(`/dashboard/transactions/${paymentId}/refund`, {
        amount: '30.00',
        form_id: formId,
        confirm: 'yes',
      });
      assert.equal(twice.statusCode, 409);
      assert.equal((await refundsOf(paymentId)).length, 1);
      const audit = await gw.database.db
        .selectFrom('audit_actions')
        .select(['actor', 'detail'])
        .where('action', '=', 'refund')
        .where('merchant_id', '=', m.merchant_id)
        .execute();
      assert.equal(audit.length, 1);
      assert.match(
        audit[0]!.detail,
        new RegExp(`refund ${rows[0]!.payment_id} of 30.00 INR for ${paymentId}`),
      );

      // The page now names what is left, lists the refund, and refuses more than that at the
      // review and at a confirmation alike.
      const after = await shop.get(`/dashboard/transactions/${paymentId}`);
      assert.match(after.body, /at most 70.00/);
      assert.ok(after.body.includes(rows[0]!.payment_id));
      const over = await shop.post(`/dashboard/transactions/${paymentId}/refund`, { amount: '70.01' });
      assert.equal(over.statusCode, 400);
      assert.match(over.body, /exceed/);
      const overConfirmed = await shop.post(`/dashboard/transactions/${paymentId}/refund`, {
        amount: '70.01',
        form_id: base62(22),
        confirm: 'yes',
      });
      assert.equal(overConfirmed.statusCode, 400);
      assert.match(overConfirmed.body, /exceed/);
      assert.equal((await refundsOf(paymentId)).length, 1);
      const refundPage = await shop.get(`/dashboard/transactions/${rows[0]!.payment_id}`);
      assert.equal(refundPage.statusCode, 200);
      assert.match(refundPage.body, /Refund \/ refund/);
      assert.ok(refundPage.body.includes(`href="/dashboard/transactions/${paymentId}"`));
      assert.match(refundPage.body, /Damaged/);

      // A refund as a kind: the list's filter, its CSV, and the overview once it has succeeded.
      const list = await shop.get('/dashboard/transactions?kind=refund');
      assert.equal(list.statusCode, 200);
      assert.ok(list.body.includes(rows[0]!.payment_id));
      assert.ok(!list.body.includes(`>${paymentId}<`), 'only refunds');
      const csv = await shop.get('/dashboard/transactions.csv?kind=refund');
      const lines = csv.body.trim().split('\r\n');
      assert.equal(lines.length, 2);
      assert.match(lines[1]!, new RegExp(`^${rows[0]!.payment_id},${m.merchant_id},refund,refund,`));
      assert.equal(
        (await m.post('/sandbox/refund/complete', { refund_id: rows[0]!.payment_id, status: 'SUCCESS' }))
          .status,
        200,
      );
      const overview = await shop.get('/dashboard');
      assert.match(overview.body, /<p>Refunds, 30 days<\/p><strong>₹30.00<\/strong>/);
      assert.deepEqual((await gw.paygate.services.wallets.verify()).problems, []);
    });

    it("refuses another merchant's pay-in (404) and a pay-in that is not SUCCESS (409), moving nothing", async () => {
      const m = await paidMerchant(gw);
      const other = await paidMerchant(gw);
      const theirs = await other.paidIn(50);
      const pending = await m.pendingPayin(20);
      const shop = await session(`shop-${base62(6)}@example.com`, m.merchant_id);
      const page = await shop.get(`/dashboard/transactions/${pending}`);
      assert.match(page.body, /Only a SUCCESS pay-in can be refunded/);
      const formId = base62(22);
      for (const confirm of [{}, { form_id: formId, confirm: 'yes' }] as Record<string, string>[]) {
        const notMine = await shop.post(`/dashboard/transactions/${theirs}/refund`, {
          amount: '1.00',
          ...confirm,
        });
        assert.equal(notMine.statusCode, 404);
      }
      for (const confirm of [{}, { form_id: base62(22), confirm: 'yes' }] as Record<string, string>[]) {
        const notFinal = await shop.post(`/dashboard/transactions/${pending}/refund`, {
          amount: '1.00',
          ...confirm,
        });
        assert.equal(notFinal.statusCode, 409);
      }
      assert.deepEqual(await refundsOf(theirs), []);
      assert.deepEqual(await refundsOf(pending), []);
      assert.deepEqual(await other.balance(), { currency: 'INR', available: 50, held: 0 });
      // An operator may refund any merchant's pay-in.
      const ops = await session(`ops-${base62(6)}@example.com`, null);
      const done = await ops.post(`/dashboard/transactions/${theirs}/refund`, {
        amount: '5.00',
        form_id: base62(22),
        confirm: 'yes',
      });
      assert.equal(done.statusCode, 303);
      assert.deepEqual(await other.balance(), { currency: 'INR', available: 45, held: 5 });
      // A malformed amount moves nothing.
      const bad = await ops.post(`/dashboard/transactions/${theirs}/refund`, {
        amount: '1.001',
        form_id: base62(22),
        confirm: 'yes',
      });
      assert.equal(bad.statusCode, 400);
      assert.equal((await refundsOf(theirs)).length, 1);
    });
  });
}
