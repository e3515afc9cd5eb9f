/**
 * `POST /sandbox/payout/complete` with `"status":"REVERSED"`, on both databases: a SUCCESS sandbox
 * payout is reversed as a beneficiary's bank would reverse it, so merchants can test the REVERSED
 * callback: the amount is available again, `payout_status` stays SUCCESS with `"reversed": true`,
 * and a second callback arrives, signed over `payment_id:amount:REVERSED`. Anything else is 409.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { RECEIVER } from '../support/live.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

let order = 0;

for (const kind of DATABASES) {
  describe(`sandbox payout reversal on ${kind}`, { skip: await skipFor(kind) }, () => {
    let g: Gateway;
    let receiver: Receiver;

    before(async () => {
      g = await startGateway(kind, {
        env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true', CALLBACK_RETRY_INTERVAL_MS: '100' },
      });
      g.paygate.dispatcher.start();
      receiver = await startReceiver({ secret: g.merchant.webhook_secret });
      await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 100_000);
    });

    after(async () => {
      await g.paygate.dispatcher.stop();
      await receiver.close();
      await g.close();
    });

    const post = (path: string, body: unknown) => g.post(path, body, { key: g.merchant.api_key });
    const balance = async () => (await post('/wallet/balance', {})).body;

    it('reverses a SUCCESS payout: available again, status SUCCESS with reversed, a signed REVERSED callback', async () => {
      const created = await post('/payments/payout', {
        money: { amount: 250 },
        merchant_order_no: `rev-${++order}`,
        receiver: RECEIVER,
        callback_url: receiver.url('/rev'),
      });
      assert.equal(created.status, 200, created.text);
      const id = created.body.payment_id;
      const pending = await balance();
      assert.equal(
        (await post('/sandbox/payout/complete', { payment_id: id, status: 'SUCCESS' })).status,
        200,
      );
      const paid = await balance();
      assert.equal(paid.held, pending.held - 250);
      const reversed = await post('/sandbox/payout/complete', { payment_id: id, status: 'REVERSED' });
      assert.equal(reversed.status, 200, reversed.text);
      assert.equal(reversed.body.status, 'SUCCESS');
      assert.equal(reversed.body.reversed, true);
      assert.equal((await balance()).available, paid.available + 250);
      const status = await post('/payments/payout_status', { payment_id: id });
      assert.equal(status.body.status, 'SUCCESS');
      assert.equal(status.body.reversed, true);
      await receiver.waitFor(() => receiver.forPayment(id).length === 2, 'two callbacks');
      const told = receiver.forPayment(id);
      assert.deepEqual(
        told.map((c) => c.body.status),
        ['SUCCESS', 'REVERSED'],
      );
      assert.ok(told.every((c) => c.verified));
      // Once only; and never on a payout that is not SUCCESS, nor on a pay-in.
      const again = await post('/sandbox/payout/complete', { payment_id: id, status: 'REVERSED' });
      assert.equal(again.status, 409);
      assert.equal(again.body.error.error_code, 'INVALID_STATE');
      assert.equal((await balance()).available, paid.available + 250);
    });

    it('refuses REVERSED on a payout not SUCCESS (409) and on a pay-in (422), moving nothing', async () => {
      const created = await post('/payments/payout', {
        money: { amount: 10 },
        merchant_order_no: `rev-${++order}`,
        receiver: RECEIVER,
      });
      const before = await balance();
      const refused = await post('/sandbox/payout/complete', {
        payment_id: created.body.payment_id,
        status: 'REVERSED',
      });
      assert.equal(refused.status, 409);
      assert.equal(
        (await post('/payments/payout_status', { payment_id: created.body.payment_id })).body.status,
        'PENDING',
      );
      const payin = await post('/payments/onsite/payin', {
        money: { amount: 5 },
        merchant_order_no: `rev-${++order}`,
      });
      const onPayin = await post('/sandbox/payin/complete', {
        payment_id: payin.body.payment_id,
        status: 'REVERSED',
      });
      assert.equal(onPayin.status, 422);
      assert.deepEqual(await balance(), before);
    });
  });
}
