/**
 * The channels' notification endpoints as an attacker and an operator see them, on both databases:
 * other methods than POST are 405 as on the API's paths; bad signatures count against the client
 * address's failed-authentication limit (60 a minute, shared with bad API keys), then 429; metrics
 * count notifications by channel and result and show when each channel last sent a verified one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from './support/databases.ts';
import { fakeSetuSignature } from './support/fake-setu.ts';
import { skipFor } from './support/harness.ts';
import { useLive } from './support/live.ts';

const metricValue = (text: string, line: string) => {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? null : Number(found.slice(line.length + 1));
};

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

    it('counts bad signatures against the failed-authentication limit: 429 after 60, for API keys too', async () => {
      const l = live();
      const raw = JSON.stringify({ eventId: `limit-${kind}`, eventType: 'payment.initiated' });
      const bad = fakeSetuSignature(raw, 'not-the-secret');
      const metrics = await (await fetch(`${l.gw.baseUrl}/metrics`)).text();
      const counted =
        metricValue(
          metrics,
          'paygate_channel_notifications_total{channel="setu",result="signature_invalid"}',
        ) ?? 0;
      for (let i = counted; i < 60; i++) assert.equal(await l.setu.send(raw, bad), 401, `failure ${i + 1}`);
      const limited = await fetch(l.setu.notifyUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-setu-signature': fakeSetuSignature(raw, l.setu.webhookSecret),
        },
        body: raw,
      });
      assert.equal(limited.status, 429, 'even a good signature waits out the window');
      assert.ok(Number(limited.headers.get('retry-after')) > 0);
      assert.equal(((await limited.json()) as any).error.error_code, 'RATE_LIMITED');
      const api = await fetch(`${l.gw.baseUrl}/wallet/balance`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer sk_live_notAKeyAtAllButWellFormed0001',
          'content-type': 'application/json',
        },
        body: '{}',
      });
      assert.equal(api.status, 429, 'the same address guessing API keys is limited too');
      const events = await l.gw.database.db
        .selectFrom('channel_events')
        .select('event_id')
        .where('event_id', '=', `limit-${kind}`)
        .execute();
      assert.deepEqual(events, [], 'nothing was stored');
    });
  });
}
