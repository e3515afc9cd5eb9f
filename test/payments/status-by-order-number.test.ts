/**
 * `payin_status` and `payout_status` by the merchant's own `merchant_order_no` (CONTRACT §9): the same
 * body as by payment_id, at every status; pay-ins and payouts apart; another merchant's order number
 * (a pay-in's or a payout's) or an unknown one 404 PAYMENT_NOT_FOUND; exactly one of the two names,
 * else 422 in shape B; and the OpenAPI document says so.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Reply } from '../support/harness.ts';

const PAYIN = '/payments/payin_status';
const PAYOUT = '/payments/payout_status';
const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

let seq = 0;
const orderNo = () => `st-${Date.now().toString(36)}-${++seq}`;

function notFound(res: Reply): void {
  assert.equal(res.status, 404, res.text);
  assert.equal(res.body.error.error_code, 'PAYMENT_NOT_FOUND');
}

/** The shape-B entries of a 422 as `loc:type` strings. */
function issues(res: Reply): string[] {
  assert.equal(res.status, 422, res.text);
  assert.deepEqual(Object.keys(res.body), ['detail']);
  return res.body.detail.map((d: { loc: string[]; type: string }) => `${d.loc.join('.')}:${d.type}`).sort();
}

for (const kind of DATABASES) {
  describe(`status by merchant_order_no on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    /** Asks by payment_id and by order number, and checks that both answer the same body. */
    async function both(path: string, paymentId: string, order: string, key?: string) {
      const o = key ? { key } : {};
      const [byId, byOrder] = await Promise.all([
        gw().post(path, { payment_id: paymentId }, o),
        gw().post(path, { merchant_order_no: order }, o),
      ]);
      assert.equal(byId.status, 200, byId.text);
      assert.equal(byOrder.status, 200, byOrder.text);
      assert.equal(byOrder.text, byId.text);
      return byOrder.body;
    }

    it('answers a pay-in by its order number exactly as by its payment_id, before and after it settles', async () => {
      const order = orderNo();
      const created = await gw().post('/payments/onsite/payin', {
        money: { amount: 250.5 },
        merchant_order_no: order,
      });
      assert.equal(created.status, 200, created.text);
      const id = created.body.payment_id;
      assert.equal((await both(PAYIN, id, order)).status, 'PENDING');
      const done = await gw().post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' });
      assert.equal(done.status, 200, done.text);
      const settled = await both(PAYIN, id, order);
      assert.equal(settled.status, 'SUCCESS');
      assert.deepEqual(settled.money, { amount: 250.5, currency: 'INR' });
      assert.match(settled.utr, /^\d{12}$/);
    });

    it('answers a payout by its order number as by its payment_id, reversal included, and keeps pay-ins and payouts apart', async () => {
      const g = gw();
      await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 100_000);
      // One order number for a pay-in and a payout: each query finds its own kind.
      const order = orderNo();
      const payin = await g.post('/payments/p2p/payin', { money: { amount: 11 }, merchant_order_no: order });
      const payout = await g.post('/payments/payout', {
        money: { amount: 22 },
        merchant_order_no: order,
        receiver: RECEIVER,
      });
      assert.equal(payout.status, 200, payout.text);
      const id = payout.body.payment_id;
      assert.equal((await both(PAYOUT, id, order)).status, 'PENDING');
      assert.equal((await both(PAYIN, payin.body.payment_id, order)).money.amount, 11);
      assert.equal((await both(PAYOUT, id, order)).money.amount, 22);
      for (const status of ['SUCCESS', 'REVERSED']) {
        const r = await g.post('/sandbox/payout/complete', { payment_id: id, status });
        assert.equal(r.status, 200, r.text);
      }
      const reversed = await both(PAYOUT, id, order);
      assert.deepEqual([reversed.status, reversed.reversed], ['SUCCESS', true]);
      // A payout's order number alone is no pay-in's.
      const onlyPayout = orderNo();
      const alone = await g.post('/payments/payout', {
        money: { amount: 1 },
        merchant_order_no: onlyPayout,
        receiver: RECEIVER,
      });
      assert.equal(alone.status, 200, alone.text);
      notFound(await g.post(PAYIN, { merchant_order_no: onlyPayout }));
      assert.equal((await g.post(PAYOUT, { merchant_order_no: onlyPayout })).status, 200);
    });

    it("answers another merchant's order number and an unknown one 404 PAYMENT_NOT_FOUND; each merchant finds its own", async () => {
      const g = gw();
      const other = await g.newMerchant();
      const order = orderNo();
      const mine = await g.post('/payments/onsite/payin', { money: { amount: 5 }, merchant_order_no: order });
      assert.equal(mine.status, 200, mine.text);
      notFound(await g.post(PAYIN, { merchant_order_no: order }, { key: other.api_key }));
      notFound(await g.post(PAYIN, { merchant_order_no: `${order}-unknown` }));
      notFound(await g.post(PAYOUT, { merchant_order_no: order }));
      const theirs = await g.post(
        '/payments/onsite/payin',
        { money: { amount: 7 }, merchant_order_no: order },
        { key: other.api_key },
      );
      assert.equal(theirs.status, 200, theirs.text);
      assert.equal((await both(PAYIN, theirs.body.payment_id, order, other.api_key)).money.amount, 7);
      assert.equal((await both(PAYIN, mine.body.payment_id, order)).money.amount, 5);
    });

    it("answers another merchant's payout by its order number 404 PAYMENT_NOT_FOUND; its own merchant finds it", async () => {
      const g = gw();
      const other = await g.newMerchant();
      await g.paygate.services.wallets.topUp(other.merchant_id, 'INR', 10_000);
      const order = orderNo();
      const theirs = await g.post(
        '/payments/payout',
        { money: { amount: 3 }, merchant_order_no: order, receiver: RECEIVER },
        { key: other.api_key },
      );
      assert.equal(theirs.status, 200, theirs.text);
      notFound(await g.post(PAYOUT, { merchant_order_no: order }));
      assert.equal((await both(PAYOUT, theirs.body.payment_id, order, other.api_key)).money.amount, 3);
    });

    it('wants exactly one of payment_id and merchant_order_no, and an order number that could exist (422 in shape B)', async () => {
      const g = gw();
      for (const path of [PAYIN, PAYOUT]) {
        assert.deepEqual(issues(await g.post(path, { payment_id: 'x', merchant_order_no: 'y' })), [
          'body:value_error',
        ]);
        assert.deepEqual(issues(await g.post(path, {})), ['body.payment_id:missing']);
        assert.match((await g.post(path, {})).body.detail[0].msg, /merchant_order_no/);
        assert.deepEqual(issues(await g.post(path, { merchant_order_no: '' })), [
          'body.merchant_order_no:string_too_short',
        ]);
        assert.deepEqual(issues(await g.post(path, { merchant_order_no: 5 })), [
          'body.merchant_order_no:string_type',
        ]);
        assert.deepEqual(issues(await g.post(path, { merchant_order_no: 'a\u0000b' })), [
          'body.merchant_order_no:string_pattern_mismatch',
        ]);
      }
      assert.deepEqual(issues(await g.post(PAYIN, { merchant_order_no: 'x'.repeat(37) })), [
        'body.merchant_order_no:string_too_long',
      ]);
      assert.deepEqual(issues(await g.post(PAYOUT, { merchant_order_no: 'x'.repeat(33) })), [
        'body.merchant_order_no:string_too_long',
      ]);
    });

    it('is described in the OpenAPI document: both names optional, exactly one of them', async () => {
      const doc = (await gw().app.inject({ url: '/openapi.json' })).json();
      for (const path of [PAYIN, PAYOUT]) {
        const body = doc.paths[path].post.requestBody.content['application/json'];
        const schema = body.schema.$ref
          ? doc.components.schemas[body.schema.$ref.split('/').at(-1)]
          : body.schema;
        assert.deepEqual(Object.keys(schema.properties).sort(), ['merchant_order_no', 'payment_id']);
        assert.equal(schema.required, undefined, `${path}: neither is required alone`);
        assert.match(schema.description, /Exactly one of payment_id and merchant_order_no/);
        assert.equal(schema.exactlyOne, undefined, 'the validator keyword is not published');
      }
    });
  });
}
