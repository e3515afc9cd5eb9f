/**
 * The SDK against a real gateway listening on a real port (fetch over HTTP), on SQLite and on
 * PostgreSQL: what a merchant gets back from every method, success and failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../../test/support/databases.ts';
import { skipFor, useGateway } from '../../test/support/harness.ts';
import { Paygate, PaygateApiError, PaygateNetworkError, PaygateValidationError } from '../src/index.ts';

const PAYMENT_ID = /^[A-Za-z0-9]{32}$/;
const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

for (const kind of DATABASES) {
  describe(`SDK against a gateway on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, { listen: true });
    const sdk = (apiKey = gw().merchant.api_key) =>
      new Paygate({ apiKey, baseUrl: gw().baseUrl, timeoutMs: 10_000, maxRetries: 0 });

    it('creates an onsite pay-in, replays it for the same order number, settles it and credits the balance', async () => {
      const pg = sdk();
      const request = {
        money: { amount: 500.5, currency: 'INR' },
        merchant_order_no: 'sdk-onsite-1',
        user_details: { phone_number: '9876543210' },
      };
      const created = await pg.createOnsitePayin(request);
      assert.equal(created.success, true);
      assert.match(created.payment_id, PAYMENT_ID);
      assert.equal(created.payment_url, `${gw().config.publicUrl}/pay/${created.payment_id}`);
      assert.equal(created.amount, 500.5);
      assert.equal(created.currency, 'INR');
      assert.equal(created.replayed, false);

      const again = await pg.createOnsitePayin(request);
      assert.equal(again.replayed, true);
      assert.equal(again.payment_id, created.payment_id);
      assert.equal(again.payment_url, created.payment_url);

      const pending = await pg.getPayinStatus(created.payment_id);
      assert.deepEqual(pending, {
        status: 'PENDING',
        money: { amount: 500.5, currency: 'INR' },
        channel_txn_id: '',
        utr: '',
      });

      const settled = await pg.completeSandboxPayin(created.payment_id, 'SUCCESS');
      assert.equal(settled.payment_id, created.payment_id);
      assert.equal(settled.status, 'SUCCESS');
      const status = await pg.getPayinStatus(created.payment_id);
      assert.equal(status.status, 'SUCCESS');
      assert.match(status.utr, /^\d{12}$/);
      assert.deepEqual(await pg.getBalance(), { currency: 'INR', available: 500.5, held: 0 });
      assert.deepEqual(await pg.getBalance('INR'), { currency: 'INR', available: 500.5, held: 0 });
    });

    it('creates an offsite pay-in with the UPI QR code, cashier link and deep links', async () => {
      const created = await sdk().createOffsitePayin({
        money: { amount: 250 },
        merchant_order_no: 'sdk-offsite-000000000000000000000036',
      });
      assert.match(created.payment_id, PAYMENT_ID);
      assert.match(created.data.qrCode, /^data:image\/png;base64,/);
      assert.equal(created.data.cashier_url, `${gw().config.publicUrl}/cashier/${created.payment_id}`);
      assert.match(created.data.cashier_string, /^upi:\/\/pay\?pa=.+&am=250\.00&cu=INR&tr=/);
      assert.deepEqual(Object.keys(created.data.deep_links).sort(), ['gpay', 'paytm', 'phonepe', 'upi']);
      assert.equal(created.amount, 250);
    });

    it('creates a P2P pay-in that points at the provider page', async () => {
      const created = await sdk().createP2PPayin({
        money: { amount: 99.99, currency: 'INR' },
        merchant_order_no: 'sdk-p2p-1',
        redirect_url: 'https://shop.example/return',
      });
      assert.equal(created.payment_url, `${gw().config.publicUrl}/p2p/${created.payment_id}`);
      assert.equal((await sdk().getPayinStatus(created.payment_id)).status, 'PENDING');
    });

    it('refuses a payout beyond the balance, then holds and pays out once funded', async () => {
      const m = await gw().newMerchant();
      const pg = sdk(m.api_key);
      const payout = { money: { amount: 1200 }, merchant_order_no: 'sdk-payout-1', receiver: RECEIVER };
      const err = await pg.createPayout(payout, { requestId: 'sdk-test-req-1' }).catch((e: unknown) => e);
      assert.ok(err instanceof PaygateApiError, String(err));
      assert.equal(err.status, 400);
      assert.equal(err.code, 400);
      assert.equal(err.errorCode, 'INSUFFICIENT_BALANCE');
      assert.equal(err.requestId, 'sdk-test-req-1');
      assert.equal(err.metadata.request_id, 'sdk-test-req-1');
      assert.equal(err.metadata.available, 0);
      assert.equal(err.metadata.requested, 1200);

      await gw().paygate.services.wallets.topUp(m.merchant_id, 'INR', 200_000);
      const created = await pg.createPayout(payout);
      assert.equal(created.status, 'PENDING');
      assert.equal(created.amount, 1200);
      assert.equal(created.replayed, false);
      assert.deepEqual(await pg.getBalance(), { currency: 'INR', available: 800, held: 1200 });
      assert.equal((await pg.getPayoutStatus(created.payment_id)).status, 'PENDING');

      await pg.completeSandboxPayout(created.payment_id, 'SUCCESS');
      assert.equal((await pg.getPayoutStatus(created.payment_id)).status, 'SUCCESS');
      assert.deepEqual(await pg.getBalance(), { currency: 'INR', available: 800, held: 0 });
    });

    it('throws PaygateValidationError with every faulty field', async () => {
      const err = await sdk()
        .createOnsitePayin({ money: { amount: -1 }, merchant_order_no: 'x'.repeat(33) })
        .catch((e: unknown) => e);
      assert.ok(err instanceof PaygateValidationError, String(err));
      const byLoc = Object.fromEntries(err.detail.map((d) => [d.loc.join('.'), d.type]));
      assert.equal(byLoc['body.money.amount'], 'greater_than');
      assert.equal(byLoc['body.merchant_order_no'], 'string_too_long');
      assert.equal(typeof err.requestId, 'string');
    });

    it('throws PaygateApiError for a reused order number, an unknown id, a final transaction and a bad key', async () => {
      const pg = sdk();
      const first = await pg.createOnsitePayin({ money: { amount: 10 }, merchant_order_no: 'sdk-dup-1' });
      const codeOf = (p: Promise<unknown>) =>
        p.then(
          () => 'no error',
          (e: unknown) => (e instanceof PaygateApiError ? `${e.status} ${e.errorCode}` : String(e)),
        );
      assert.equal(
        await codeOf(pg.createOnsitePayin({ money: { amount: 11 }, merchant_order_no: 'sdk-dup-1' })),
        '409 DUPLICATE_ORDER_NO',
      );
      assert.equal(await codeOf(pg.getPayoutStatus(first.payment_id)), '404 PAYMENT_NOT_FOUND');
      await pg.completeSandboxPayin(first.payment_id, 'FAILED');
      assert.equal(await codeOf(pg.completeSandboxPayin(first.payment_id, 'SUCCESS')), '409 INVALID_STATE');
      assert.equal(
        await codeOf(sdk('sk_test_notakeynotakeynotakeynotakey').getBalance()),
        '401 AUTH_INVALID_API_KEY',
      );
      assert.equal(await codeOf(pg.getBalance('USD')), '400 VALIDATION_INVALID_CURRENCY');
    });

    it('asks for a callback again once the transaction is final, and not before', async () => {
      const m = await gw().newMerchant({ callbackUrl: 'https://shop.example/paygate/callback' });
      const pg = sdk(m.api_key);
      const created = await pg.createOnsitePayin({
        money: { amount: 42 },
        merchant_order_no: 'sdk-resend-1',
      });
      const early = await pg.resendCallback(created.payment_id).catch((e: unknown) => e);
      assert.ok(early instanceof PaygateApiError, String(early));
      assert.equal(early.errorCode, 'INVALID_STATE');
      await pg.completeSandboxPayin(created.payment_id, 'SUCCESS');
      const resent = await pg.resendCallback(created.payment_id);
      assert.equal(resent.success, true);
      assert.equal(resent.payment_id, created.payment_id);
      assert.equal(resent.status, 'pending');
      assert.equal(typeof resent.delivery_id, 'string');
    });

    it('throws PaygateNetworkError when nothing listens', async () => {
      const url = new URL(gw().baseUrl);
      url.port = '1';
      const err = await new Paygate({
        apiKey: gw().merchant.api_key,
        baseUrl: url.toString(),
        maxRetries: 1,
        retryDelayMs: 5,
      })
        .getBalance()
        .catch((e: unknown) => e);
      assert.ok(err instanceof PaygateNetworkError, String(err));
      assert.equal(err.attempts, 2);
    });
  });
}
