/**
 * A FAILED transaction shows why on its page and in the list (CONTRACT §11), over HTTP on both
 * databases: the sandbox's rule (a payout to an account ending 0000, a refund whose paise are 13),
 * a failure asked for through the sandbox API, a pay-in that expired unpaid, a payout that Cashfree
 * refused at send (its code and message, an account number in it masked) and one that Cashfree
 * failed (its status code and description, from the fake's webhook). A refund that Setu refused
 * shows NPCI's reason too: `live/refunds-through-setu`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { getPage, signedIn, type ConsoleBrowser } from '../support/console.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { RECEIVER, startLive, until, type LiveGateway } from '../support/live.ts';
import { payout as livePayout } from '../support/live-payouts.ts';

const PASSWORD = 'correct horse battery';

/** The text of the dd after the dt named `term` on a transaction's page. */
function fact(body: string, term: string): string | null {
  const m = new RegExp(`<dt>${term}</dt><dd>([^<]*)</dd>`).exec(body);
  return m ? m[1]! : null;
}

/** The list row of a payment_id, as HTML. */
function row(body: string, paymentId: string): string {
  const m = new RegExp(
    `<tr>(?:(?!</tr>).)*href="/dashboard/transactions/${paymentId}"(?:(?!</tr>).)*</tr>`,
    's',
  ).exec(body);
  assert.ok(m, `${paymentId} is listed`);
  return m[0];
}

async function statusOf(gw: Gateway, paymentId: string): Promise<string> {
  const r = await gw.database.db
    .selectFrom('transactions')
    .select('status')
    .where('payment_id', '=', paymentId)
    .executeTakeFirstOrThrow();
  return r.status;
}

async function ownUser(gw: Gateway, merchantId: string, email: string): Promise<ConsoleBrowser> {
  await testAccounts(gw.database.db).createUser({ email, role: 'merchant', merchantId, password: PASSWORD });
  return signedIn(gw, email, PASSWORD);
}

for (const kind of DATABASES) {
  describe(`a FAILED transaction's reason in the console (${kind})`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(kind, {
        worker: true,
        env: { SANDBOX_PAYOUT_SETTLE_MS: '50', PAYIN_EXPIRY_S: '1', WORKER_POLL_MS: '50' },
      });
      await gw.paygate.services.wallets.topUp(gw.merchant.merchant_id, 'INR', 1_000_00);
    });
    after(() => gw.close());

    it('the sandbox’s rule, a failure asked for, and expiry: on the page and in the list', async () => {
      const payout = await gw.post('/payments/payout', {
        money: { amount: 10 },
        merchant_order_no: 'po-0000',
        receiver: { name: 'Asha Rao', account_no: '123456780000', ifsc_code: 'HDFC0001234' },
      });
      assert.equal(payout.status, 200, payout.text);
      const payoutId = payout.body.payment_id as string;
      const paid = await gw.post('/payments/onsite/payin', {
        money: { amount: 50 },
        merchant_order_no: 'pi-paid',
      });
      await gw.post('/sandbox/payin/complete', { payment_id: paid.body.payment_id, status: 'SUCCESS' });
      const refund = await gw.post('/payments/refund', {
        payment_id: paid.body.payment_id,
        money: { amount: 1.13 },
        merchant_refund_no: 'rf-13',
      });
      assert.equal(refund.status, 200, refund.text);
      const refundId = refund.body.refund_id as string;
      const asked = await gw.post('/payments/onsite/payin', {
        money: { amount: 20 },
        merchant_order_no: 'pi-asked',
      });
      const askedId = asked.body.payment_id as string;
      assert.equal(
        (await gw.post('/sandbox/payin/complete', { payment_id: askedId, status: 'FAILED' })).status,
        200,
      );
      const expiring = await gw.post('/payments/offsite/payin', {
        money: { amount: 30 },
        merchant_order_no: 'pi-late',
      });
      const expiredId = expiring.body.payment_id as string;
      const succeeded = paid.body.payment_id as string;
      for (const id of [payoutId, refundId, expiredId])
        await until(async () => (await statusOf(gw, id)) === 'FAILED', `${id} FAILED`, 15_000);

      const shop = await ownUser(gw, gw.merchant.merchant_id, `shop-${kind}@reasons.example`);
      const expected: [string, RegExp][] = [
        [payoutId, /^sandbox rule: a payout to an account number ending in 0000 fails$/],
        [refundId, /^sandbox rule: a refund whose paise are 13 fails$/],
        [askedId, /^sandbox: failed by POST \/sandbox\/payin\/complete$/],
        [expiredId, /^expired: not paid before its expiry$/],
      ];
      const list = (await getPage(gw, shop, '/dashboard/transactions')).body;
      for (const [id, reason] of expected) {
        const page = await getPage(gw, shop, `/dashboard/transactions/${id}`);
        assert.equal(page.statusCode, 200);
        assert.match(fact(page.body, 'Failure reason') ?? '', reason, `${id}: its page`);
        const reasonInRow = /<span class="reason">([^<]*)<\/span>/.exec(row(list, id));
        assert.match(reasonInRow?.[1] ?? '', reason, `${id}: its row in the list`);
      }
      // A transaction that did not fail has no reason.
      const ok = await getPage(gw, shop, `/dashboard/transactions/${succeeded}`);
      assert.equal(fact(ok.body, 'Failure reason'), null);
      assert.doesNotMatch(row(list, succeeded), /class="reason"/);
    });
  });

  describe(
    `a payout Cashfree failed shows Cashfree's code and words (${kind})`,
    { skip: await skipFor(kind) },
    () => {
      let live: LiveGateway;
      before(async () => {
        live = await startLive(kind);
      });
      after(async () => {
        await live?.gw.close();
        await live?.receiver.close();
        await live?.setu.stop();
        await live?.cashfree.stop();
      });

      it('a payout Cashfree refused at send: its code and words, an echoed account number masked', async () => {
        // Cashfree's 400 for a transfer field, echoing the account number and a trace token.
        live.cashfree.fail('transfer_create', {
          status: 400,
          body: {
            type: 'invalid_request_error',
            code: 'beneficiary_details.beneficiary_instrument_details.bank_account_number_invalid',
            message: `bank_account_number ${RECEIVER.account_no} is invalid (trace a1b2c3d4e5f6a7b8c9d0e1f2)`,
          },
        });
        const id = await livePayout(live, 24);
        await live.waitStatus('payout', id, 'FAILED');
        const shop = await ownUser(live.gw, live.merchant.merchant_id, `sent-${kind}@reasons.example`);
        const want =
          'refused by cashfree: beneficiary_details.beneficiary_instrument_details.bank_account_number_invalid: ' +
          `bank_account_number XXXXXXXX${RECEIVER.account_no.slice(-4)} is invalid (trace [hidden])`;
        const page = await getPage(live.gw, shop, `/dashboard/transactions/${id}`);
        assert.equal(fact(page.body, 'Failure reason'), want);
        assert.ok(!page.body.includes(RECEIVER.account_no), 'the account number is never whole');
        const list = await getPage(live.gw, shop, '/dashboard/transactions?status=FAILED');
        assert.match(row(list.body, id), /<span class="reason">refused by cashfree: [^<]*XXXXXXXX/);
      });

      it('the status code and description of the transfer, on its page and in the list', async () => {
        Object.assign(live.cashfree, {
          ending: 'FAILED',
          endingCode: 'INVALID_ACCOUNT_FAIL',
          endingDescription: 'The beneficiary account number is invalid',
        });
        const id = await livePayout(live, 25);
        await live.waitStatus('payout', id, 'FAILED');
        const shop = await ownUser(live.gw, live.merchant.merchant_id, `live-${kind}@reasons.example`);
        const want = 'cashfree FAILED INVALID_ACCOUNT_FAIL: The beneficiary account number is invalid';
        const page = await getPage(live.gw, shop, `/dashboard/transactions/${id}`);
        assert.equal(fact(page.body, 'Failure reason'), want);
        const list = await getPage(live.gw, shop, '/dashboard/transactions?status=FAILED');
        assert.match(row(list.body, id), new RegExp(`<span class="reason">${want}</span>`));
      });
    },
  );
}
