/**
 * Refunds settled by the worker through the sandbox channel and called back (contract §7, §12):
 * SUCCESS after SANDBOX_PAYOUT_SETTLE_MS, FAILED when the paise are 13, one signed callback to the
 * refund's URL (else the pay-in's), resends by refund_id; and the money rules under concurrency: 50
 * refunds of 10.00 at once against a pay-in of 100.00, refunds and payouts racing on one wallet.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { refundCallbackBody, signBody } from '../../src/callbacks/signature.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { paidMerchant, refund, refundNo } from '../support/refunds.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

describe('refund callback signature', () => {
  it('signs refund_id:amount:status, as openssl computes it', () => {
    // printf '%s' 'rK2mX9kL4vN8bC3zW6yH1jF5gD0sApQ7:25.00:SUCCESS' | openssl dgst -sha256 -hmac 'whsec_test_secret'
    const body = refundCallbackBody({
      refundId: 'rK2mX9kL4vN8bC3zW6yH1jF5gD0sApQ7',
      paymentId: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA',
      merchantRefundNo: 'refund-1',
      amount: 2500,
      currency: 'INR',
      status: 'SUCCESS',
      utr: '123456789012',
    });
    assert.equal(
      body,
      '{"refund_id":"rK2mX9kL4vN8bC3zW6yH1jF5gD0sApQ7","payment_id":"pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA",' +
        '"merchant_refund_no":"refund-1","amount":25.00,"currency":"INR","status":"SUCCESS","utr":"123456789012"}',
    );
    assert.equal(
      signBody('whsec_test_secret', body),
      '74b779e2622d718580197e34db2f679a933d8477dd07379bef71716caca132dc',
    );
  });
});

for (const kind of DATABASES) {
  describe(`refunds settled and called back on ${kind}`, { skip: await skipFor(kind) }, () => {
    let receiver: Receiver;
    before(async () => {
      receiver = await startReceiver();
    });
    after(async () => {
      await receiver.close();
    });
    const gw = useGateway(kind, {
      worker: true,
      env: { SANDBOX_PAYOUT_SETTLE_MS: '150', ALLOW_PRIVATE_CALLBACK_URLS: 'true', WORKER_POLL_MS: '100' },
    });

    afterEach(async () => {
      assert.deepEqual((await gw().paygate.services.wallets.verify()).problems, []);
    });

    const statusOf = async (m: Awaited<ReturnType<typeof paidMerchant>>, refundId: string) =>
      (await m.post('/payments/refund_status', { refund_id: refundId })).body;

    async function until(ready: () => Promise<boolean>, what: string, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(await ready())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    it('the worker settles refunds through the sandbox: SUCCESS, or FAILED when the paise are 13, each called back once, signed', async () => {
      const m = await paidMerchant(gw(), 0, { callbackUrl: receiver.url('/merchant-default') });
      const paymentId = await m.paidIn(100, { callback_url: receiver.url('/payin') });
      const ok = await m.post(
        '/payments/refund',
        refund(paymentId, 25, { callback_url: receiver.url('/refund') }),
      );
      const bad = await m.post('/payments/refund', refund(paymentId, 10.13));
      assert.equal(ok.status, 200, ok.text);
      assert.equal(bad.status, 200, bad.text);
      const [okId, badId] = [ok.body.refund_id, bad.body.refund_id];
      await until(
        async () =>
          (await statusOf(m, okId)).status === 'SUCCESS' && (await statusOf(m, badId)).status === 'FAILED',
        'both refunds final',
      );
      assert.match((await statusOf(m, okId)).utr, /^\d{12}$/);
      assert.equal((await statusOf(m, badId)).utr, '');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 75, held: 0 });
      await receiver.waitFor(
        () => receiver.forPayment(okId).length === 1 && receiver.forPayment(badId).length === 1,
        'refund callbacks',
      );
      const [okCb] = receiver.forPayment(okId);
      const [badCb] = receiver.forPayment(badId);
      // The refund's own URL, else the pay-in's (never the merchant's default while the pay-in has one).
      assert.equal(okCb!.path, '/refund');
      assert.equal(badCb!.path, '/payin');
      assert.equal(
        okCb!.raw,
        `{"refund_id":"${okId}","payment_id":"${paymentId}","merchant_refund_no":"${ok.body.merchant_refund_no}",` +
          `"amount":25.00,"currency":"INR","status":"SUCCESS","utr":"${(await statusOf(m, okId)).utr}"}`,
      );
      assert.equal(badCb!.body.status, 'FAILED');
      assert.equal(badCb!.body.amount, 10.13);
      assert.match(badCb!.raw, /"amount":10\.13,/);
      for (const cb of [okCb!, badCb!]) {
        assert.equal(cb.headers['x-callback-attempt'], '1');
        assert.equal(
          cb.headers['x-verification-token'],
          // The receiver's own recipe (test/support/receiver.ts), not the production signer.
          (await import('node:crypto'))
            .createHmac('sha256', m.webhook_secret)
            .update(`${cb.body.refund_id}:${/"amount":([\d.]+)/.exec(cb.raw)![1]}:${cb.body.status}`)
            .digest('hex'),
        );
      }
      // A refund of a pay-in without a URL of its own goes to the merchant's default.
      const plain = await m.paidIn(5);
      const third = await m.post('/payments/refund', refund(plain, 5));
      await receiver.waitFor(() => receiver.forPayment(third.body.refund_id).length === 1, 'third callback');
      assert.equal(receiver.forPayment(third.body.refund_id)[0]!.path, '/merchant-default');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.forPayment(okId).length, 1, 'one callback per final status');
    });

    it('POST /callbacks/resend takes a refund_id: the same body again; a refund_id as payment_id is 404; both or neither is 422', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(20);
      const created = await m.post(
        '/payments/refund',
        refund(paymentId, 2, { callback_url: receiver.url('/again') }),
      );
      const refundId = created.body.refund_id;
      await until(async () => (await statusOf(m, refundId)).status === 'SUCCESS', 'refund settled');
      await receiver.waitFor(() => receiver.forPayment(refundId).length === 1, 'first callback');
      const res = await m.post('/callbacks/resend', { refund_id: refundId });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.refund_id, refundId);
      assert.equal(res.body.status, 'pending');
      await receiver.waitFor(() => receiver.forPayment(refundId).length === 2, 'resent callback');
      const [first, second] = receiver.forPayment(refundId);
      assert.equal(second!.raw, first!.raw);
      assert.equal(second!.headers['x-verification-token'], first!.headers['x-verification-token']);

      const notFound = await m.post('/callbacks/resend', { payment_id: refundId });
      assert.equal(notFound.status, 404, notFound.text);
      assert.equal(notFound.body.error.error_code, 'PAYMENT_NOT_FOUND');
      assert.equal((await m.post('/callbacks/resend', { refund_id: paymentId })).status, 404);
      const other = await paidMerchant(gw());
      assert.equal((await other.post('/callbacks/resend', { refund_id: refundId })).status, 404);
      const both = await m.post('/callbacks/resend', { refund_id: refundId, payment_id: paymentId });
      assert.equal(both.status, 422, both.text);
      const neither = await m.post('/callbacks/resend', {});
      assert.equal(neither.status, 422, neither.text);
      assert.deepEqual(neither.body.detail[0].loc, ['body', 'payment_id']);
      assert.equal(receiver.forPayment(refundId).length, 2);
    });

    it('50 concurrent refunds of 10.00 against a pay-in of 100.00: exactly 10 accepted, the rest REFUND_EXCEEDS_PAYMENT', async () => {
      const m = await paidMerchant(gw(), 100_000);
      const paymentId = await m.paidIn(100);
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => m.post('/payments/refund', refund(paymentId, 10))),
      );
      const accepted = answers.filter((r) => r.status === 200);
      const refused = answers.filter((r) => r.status !== 200);
      assert.equal(accepted.length, 10);
      assert.ok(
        refused.every((r) => r.status === 400 && r.body.error.error_code === 'REFUND_EXCEEDS_PAYMENT'),
      );
      assert.ok(refused.every((r) => r.body.error.metadata.refundable === 0));
      const rows = await gw()
        .database.db.selectFrom('transactions')
        .select((eb) => eb.fn.sum<number | string>('amount').as('total'))
        .where('refund_of', '=', paymentId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(rows.total), 10_000);
    });

    it('refunds and payouts racing on one wallet never overdraw it', async () => {
      const m = await paidMerchant(gw());
      const payins = [await m.paidIn(60), await m.paidIn(60)];
      // 120.00 available; 40 refunds and 40 payouts of 5.00 ask for 400.00 at once.
      const answers = await Promise.all(
        Array.from({ length: 80 }, (_, i) =>
          i % 2 === 0
            ? m.post('/payments/refund', refund(payins[i % 4 === 0 ? 0 : 1]!, 5))
            : m.post('/payments/payout', {
                money: { amount: 5 },
                merchant_order_no: refundNo(),
                receiver: RECEIVER,
              }),
        ),
      );
      const accepted = answers.filter((r) => r.status === 200).length;
      for (const r of answers.filter((a) => a.status !== 200)) {
        assert.equal(r.status, 400, r.text);
        assert.ok(['INSUFFICIENT_BALANCE', 'REFUND_EXCEEDS_PAYMENT'].includes(r.body.error.error_code));
      }
      assert.equal(accepted, 24);
      const balance = await m.balance();
      assert.ok(balance.available >= 0);
      await until(async () => (await m.balance()).held === 0, 'everything settled');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 0, held: 0 });
    });
  });
}
