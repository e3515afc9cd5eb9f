/**
 * The channels' notification endpoints as an attacker and an operator see them, on both databases:
 * other methods than POST are 405 as on the API's paths; bad signatures are 401 and never limit the
 * endpoint or API keys (`intake-cannot-be-starved` shows it at scale); metrics count notifications by
 * channel and result and show when each channel last sent a verified one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { fakeSetuSignature } from '../support/fake-setu.ts';
import { skipFor, testAccounts } from '../support/harness.ts';
import { signedIn } from '../support/console.ts';
import { metricValue, useLive } from '../support/live.ts';

const PASSWORD = 'correct horse battery';

for (const kind of DATABASES) {
  describe(`the notification endpoints on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind);

    it('answers 405 METHOD_NOT_ALLOWED with Allow: POST to other methods', async () => {
      const l = live();
      for (const provider of ['setu', 'cashfree'])
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const res = await fetch(`${l.gw.baseUrl}/channels/${provider}/notifications`, { method });
          assert.equal(res.status, 405, `${method} ${provider}`);
          assert.equal(res.headers.get('allow'), 'POST');
          assert.equal(((await res.json()) as any).error.error_code, 'METHOD_NOT_ALLOWED');
        }
    });

    it('counts verified notifications by channel and result, and when the channel last sent one', async () => {
      const l = live();
      const metrics = async () => (await fetch(`${l.gw.baseUrl}/metrics`)).text();
      const line = (result: string) =>
        `paygate_channel_notifications_total{channel="setu",result="${result}"}`;
      const before = await metrics();
      assert.equal(
        metricValue(before, 'paygate_channel_last_notification_timestamp_seconds{channel="setu"}'),
        null,
      );
      const raw = JSON.stringify({ eventId: `metrics-${kind}`, eventType: 'payment.initiated' });
      const sentAt = Date.now();
      assert.equal(await l.setu.send(raw), 200);
      assert.equal(await l.setu.send(raw), 200);
      assert.equal(await l.setu.send(raw, fakeSetuSignature(raw, 'not-the-secret')), 401);
      const after = await metrics();
      assert.equal(metricValue(after, line('accepted')), (metricValue(before, line('accepted')) ?? 0) + 1);
      assert.equal(metricValue(after, line('duplicate')), (metricValue(before, line('duplicate')) ?? 0) + 1);
      assert.equal(metricValue(after, line('signature_invalid')), 1);
      const last = metricValue(after, 'paygate_channel_last_notification_timestamp_seconds{channel="setu"}');
      assert.ok(last !== null && Math.abs(last * 1000 - sentAt) < 5000, `last notification at ${last}`);
      assert.equal(
        metricValue(after, 'paygate_channel_last_notification_timestamp_seconds{channel="cashfree"}'),
        null,
      );
    });

    it("shows operators each channel's last verified notification, and an unreadable amount as such", async () => {
      const l = live();
      const accounts = testAccounts(l.gw.database.db);
      const email = `ops-${kind}@example.com`;
      await accounts.createUser({ email, role: 'operator', merchantId: null, password: PASSWORD });
      const created = await l.post('/payments/onsite/payin', {
        money: { amount: 120 },
        merchant_order_no: `console-${kind}`,
      });
      assert.equal(created.status, 200, created.text);
      const qr = l.setu.qrFor(created.body.payment_id)!;
      const payment = await l.setu.pay(created.body.payment_id, { notify: false, keepActive: true });
      const raw = JSON.stringify({ ...l.setu.event('payment.success', qr, payment), amount: '120.00' });
      assert.equal(await l.setu.send(raw), 200);
      const { cookie } = await signedIn(l.gw, email, PASSWORD);
      const page = await l.gw.app.inject({
        method: 'GET',
        url: '/dashboard/exceptions',
        headers: { cookie },
      });
      assert.equal(page.statusCode, 200);
      const card =
        /<section class="card" aria-labelledby="notified-h">.*?<\/section>/s.exec(page.body)?.[0] ?? '';
      const setuAt = /<dt>setu<\/dt><dd><time datetime="([^"]+)"/.exec(card)?.[1];
      assert.ok(setuAt && Math.abs(Date.parse(setuAt) - Date.now()) < 60_000, card);
      assert.match(card, /<dt>cashfree<\/dt><dd>none yet<\/dd>/, card);
      assert.ok(page.body.includes('unreadable (&quot;120.00&quot;)'), 'the amount Setu sent, as it sent it');
      assert.ok(!page.body.includes('-0.01'));
    });

    it('counts bad signatures apart from failed API keys: no 429 after 60, a good signature and API keys still taken', async () => {
      const l = live();
      const raw = JSON.stringify({ eventId: `limit-${kind}`, eventType: 'payment.initiated' });
      const bad = fakeSetuSignature(raw, 'not-the-secret');
      for (let i = 0; i < 61; i++) assert.equal(await l.setu.send(raw, bad), 401, `failure ${i + 1}`);
      assert.equal(await l.setu.send(raw), 200, 'a good signature is never refused for rate');
      const api = await fetch(`${l.gw.baseUrl}/wallet/balance`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer sk_live_notAKeyAtAllButWellFormed0001',
          'content-type': 'application/json',
        },
        body: '{}',
      });
      assert.equal(api.status, 401, 'bad signatures do not count against API keys');
    });
  });
}
