/**
 * Intake that cannot be starved (CONTRACT §10), on both databases, with Paygate's calls to the fakes
 * going through the spec proxies: a Cashfree webhook hours old is applied once (Cashfree retries
 * for hours) and one more than 5 minutes ahead is 401; a thousand forged notifications from one
 * address delay neither a verified notification from that address nor its API-key requests, and
 * open one `signature_failures` exception per endpoint; a signature that is not exactly base64
 * (`"<valid>, junk"`) is 401 on both endpoints.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Pool } from 'undici';
import type { FakeCashfree } from '../support/fake-cashfree.ts';
import { fakeSetuSignature, type FakeSetu } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { until, useLiveBehindDocuments, type LiveGateway } from '../support/live.ts';
import { payout } from '../support/live-payouts.ts';

const HOUR_MS = 3_600_000;

/** The payout's SUCCESS events and the callbacks queued for it. */
async function applied(l: LiveGateway, id: string) {
  const db = l.gw.database.db;
  const events = await db
    .selectFrom('transaction_events')
    .select('status')
    .where('payment_id', '=', id)
    .where('status', '=', 'SUCCESS')
    .execute();
  const callbacks = await db
    .selectFrom('callback_deliveries')
    .select('id')
    .where('payment_id', '=', id)
    .execute();
  return { successes: events.length, callbacks: callbacks.length };
}

/** Posts `raw` to a notification endpoint with these headers, over HTTP from this host. Answers the status. */
async function post(pool: Pool, path: string, raw: string, headers: Record<string, string>): Promise<number> {
  const res = await pool.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  await res.body.dump();
  return res.statusCode;
}

const behindDocuments = useLiveBehindDocuments();

await onEachDatabase('intake that cannot be starved', (kind) => {
  describe(`notifications on ${kind}`, () => {
    const live = behindDocuments(kind, { CHANNEL_TIMEOUT_MS: '5000' });
    let setu: FakeSetu;
    let cashfree: FakeCashfree;
    before(() => ({ setu, cashfree } = live()));
    let pool: Pool;
    before(() => {
      pool = new Pool(live().gw.baseUrl, { connections: 8 });
    });
    after(async () => {
      await pool.close();
    });
    afterEach(async () => {
      Object.assign(cashfree, { ending: 'SUCCESS', webhooks: true });
      await live().ledgerOk();
    });

    it('applies a correctly signed Cashfree webhook 6 hours old once; a repeat changes nothing', async () => {
      const l = live();
      cashfree.ending = 'never';
      const id = await payout(l, 11);
      await l.waitStatus('payout', id, 'PROCESSING');
      const t = cashfree.transfers.get(id)!;
      Object.assign(t, { status: 'SUCCESS', transfer_utr: '600000000006' });
      const raw = JSON.stringify(cashfree.webhookBody('TRANSFER_SUCCESS', t));
      const old = String(Date.now() - 6 * HOUR_MS);
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw, timestamp: old }), 200);
      // Applied before the answer: no wait.
      assert.equal((await l.status('payout', id)).utr, '600000000006');
      const once = await applied(l, id);
      const balance = await l.balance();
      assert.deepEqual(once, { successes: 1, callbacks: 1 });
      const replies = cashfree.webhookReplies.length;
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw, timestamp: old }), 200);
      assert.equal(JSON.parse(cashfree.webhookReplies[replies]!).duplicate, true);
      assert.deepEqual(await applied(l, id), once);
      assert.deepEqual(await l.balance(), balance);
    });

    it('refuses a Cashfree webhook whose timestamp is 6 minutes ahead (401) and changes nothing', async () => {
      const l = live();
      cashfree.ending = 'never';
      const id = await payout(l, 12);
      await l.waitStatus('payout', id, 'PROCESSING');
      const t = { ...cashfree.transfers.get(id)!, status: 'SUCCESS', transfer_utr: '600000000007' };
      const raw = JSON.stringify(cashfree.webhookBody('TRANSFER_SUCCESS', t));
      const ahead = String(Date.now() + 6 * 60_000);
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw, timestamp: ahead }), 401);
      // Within the 5 minutes a clock may be ahead: taken.
      const close = String(Date.now() + 4 * 60_000);
      assert.equal((await l.status('payout', id)).status, 'PROCESSING');
      Object.assign(cashfree.transfers.get(id)!, { status: 'SUCCESS', transfer_utr: '600000000007' });
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', t, { body: raw, timestamp: close }), 200);
      assert.equal((await l.status('payout', id)).status, 'SUCCESS');
    });

    it('refuses "<valid>, junk" and other signatures that are not exactly base64 on both endpoints (401)', async () => {
      const l = live();
      const raw = JSON.stringify({ eventId: `shape-${kind}`, eventType: 'payment.initiated' });
      const valid = fakeSetuSignature(raw, setu.webhookSecret);
      const shapes = [
        `${valid}, junk`,
        `${valid},junk`,
        `${valid}=`,
        valid.replace(/=+$/, ''),
        `${valid.slice(0, 10)} ${valid.slice(10)}`,
        valid.replace(/\+/g, '-').replace(/\//g, '_'),
      ].filter((s) => s !== valid);
      for (const signature of shapes)
        assert.equal(
          await post(pool, '/channels/setu/notifications', raw, { 'x-setu-signature': signature }),
          401,
          signature,
        );
      const ts = String(Date.now());
      const cf = cashfree.sign(ts, raw);
      for (const signature of [`${cf}, junk`, `${cf}junk`, cf.replace(/=+$/, '')].filter((s) => s !== cf))
        assert.equal(
          await post(pool, '/channels/cashfree/notifications', raw, {
            'x-webhook-timestamp': ts,
            'x-webhook-signature': signature,
          }),
          401,
          signature,
        );
      const stored = await l.gw.database.db
        .selectFrom('channel_events')
        .select('id')
        .where('event_id', '=', `shape-${kind}`)
        .execute();
      assert.deepEqual(stored, [], 'nothing was stored');
      // The exact signature is taken.
      assert.equal(await post(pool, '/channels/setu/notifications', raw, { 'x-setu-signature': valid }), 200);
    });

    it('1,000 forged notifications from one address: a verified one from it is applied at once, its API key works, one signature_failures per endpoint', async () => {
      const l = live();
      const db = l.gw.database.db;
      cashfree.ending = 'never';
      const id = await payout(l, 13);
      await l.waitStatus('payout', id, 'PROCESSING');
      const raw = JSON.stringify({ eventId: `forged-${kind}`, eventType: 'payment.success' });
      const ts = String(Date.now());
      const forged = Array.from({ length: 1000 }, (_, i) =>
        i % 2 === 0
          ? post(pool, '/channels/setu/notifications', raw, {
              'x-setu-signature':
                i % 4 === 0
                  ? fakeSetuSignature(raw, 'forger')
                  : `${fakeSetuSignature(raw, setu.webhookSecret)}, junk`,
            })
          : post(pool, '/channels/cashfree/notifications', raw, {
              'x-webhook-timestamp': ts,
              'x-webhook-signature': cashfree.sign(ts, raw, 'forger'),
            }),
      );
      const statuses = await Promise.all(forged);
      assert.deepEqual(new Set(statuses), new Set([401]), 'every forgery is 401, none 429');

      // A verified notification from the same address, at once.
      const t = cashfree.transfers.get(id)!;
      Object.assign(t, { status: 'SUCCESS', transfer_utr: '600000000008' });
      assert.equal(await cashfree.webhook('TRANSFER_SUCCESS', t), 200);
      assert.equal((await l.status('payout', id)).status, 'SUCCESS', 'applied before the answer');
      const created = await l.post('/payments/onsite/payin', {
        money: { amount: 14 },
        merchant_order_no: `after-forgeries-${kind}`,
      });
      assert.equal(created.status, 200, created.text);
      const payment = await setu.pay(created.body.payment_id, { notify: false, keepActive: true });
      assert.equal(await setu.notify('payment.success', setu.qrFor(created.body.payment_id)!, payment), 200);
      assert.equal((await l.status('payin', created.body.payment_id)).status, 'SUCCESS');

      // API-key authentication from that address is not limited by the forgeries.
      const balance = await fetch(`${l.gw.baseUrl}/wallet/balance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${l.merchant.api_key}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(balance.status, 200);
      const guess = await fetch(`${l.gw.baseUrl}/wallet/balance`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer sk_live_notAKeyAtAllButWellFormed0001',
          'content-type': 'application/json',
        },
        body: '{}',
      });
      assert.equal(guess.status, 401, 'a wrong key is counted on its own: 401, not 429');

      await until(async () => {
        const open = await db
          .selectFrom('channel_exceptions')
          .select('provider')
          .where('kind', '=', 'signature_failures')
          .where('resolved_at', 'is', null)
          .execute();
        return open.length === 2;
      }, 'a signature_failures exception per endpoint');
      const alarms = await db
        .selectFrom('channel_exceptions')
        .select(['provider', 'detail'])
        .where('kind', '=', 'signature_failures')
        .orderBy('provider')
        .execute();
      assert.deepEqual(
        alarms.map((a) => a.provider),
        ['cashfree', 'setu'],
      );
      for (const a of alarms)
        assert.ok(!a.detail.includes(setu.webhookSecret) && !a.detail.includes(cashfree.webhookSecret));
      const metrics = await (await fetch(`${l.gw.baseUrl}/metrics`)).text();
      assert.match(
        metrics,
        /paygate_channel_notifications_total\{channel="setu",result="signature_invalid"\} (\d+)/,
      );
      const invalid = Number(
        /paygate_channel_notifications_total\{channel="cashfree",result="signature_invalid"\} (\d+)/.exec(
          metrics,
        )![1],
      );
      assert.ok(invalid >= 500, `cashfree signature failures counted: ${invalid}`);
    });
  });
});
