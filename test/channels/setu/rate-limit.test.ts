/**
 * SETU_MAX_RPS and the pause a 429 asks for apply to Setu as to Cashfree, against the fake Setu
 * over real HTTP, on both databases: calls to Setu are spaced to the limit, and a 429 holds every
 * Setu call back for its `Retry-After`. A 429 is not in Setu's document: no spec proxy here.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DATABASES } from '../../support/databases.ts';
import { skipFor } from '../../support/harness.ts';
import { useLive, type LiveGateway } from '../../support/live.ts';

let n = 0;
const create = (l: LiveGateway, amount: number) =>
  l.post('/payments/onsite/payin', { money: { amount }, merchant_order_no: `sthr-${process.pid}-${++n}` });

for (const kind of DATABASES) {
  describe(`Setu calls throttled on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, { SETU_MAX_RPS: '5', CHANNEL_TIMEOUT_MS: '5000' });
    afterEach(async () => live().ledgerOk());

    it('starts at most SETU_MAX_RPS calls in any second, and every pay-in gets its QR', async () => {
      const l = live();
      // The first call logs in and opens a connection: its time on the way is not the throttle's.
      assert.equal((await create(l, 9)).status, 200);
      await new Promise((r) => setTimeout(r, 1000));
      const from = l.setu.requests.length;
      const created = await Promise.all(Array.from({ length: 12 }, (_, i) => create(l, 10 + i)));
      for (const r of created) assert.equal(r.status, 200, r.text);
      const at = l.setu.requests.slice(from).map((r) => r.at);
      assert.ok(at.length >= 12);
      // Any six calls in a row span at least a second (5 % slack: the fake stamps a call when its body has arrived).
      for (let i = 0; i + 5 < at.length; i++)
        assert.ok(at[i + 5]! - at[i]! >= 950, `calls ${i}..${i + 5} within ${at[i + 5]! - at[i]!} ms`);
      for (const r of created) assert.ok(l.setu.qrFor(r.body.payment_id));
    });

    it('pauses every Setu call for the Retry-After of a 429: that pay-in is 503, the next waits', async () => {
      const l = live();
      l.setu.fail('dqr_create', {
        status: 429,
        body: { code: 'too-many-requests', detail: 'slow down' },
        headers: { 'retry-after': '2' },
      });
      const from = l.setu.requests.length;
      const limited = await create(l, 41);
      assert.equal(limited.status, 503, limited.text);
      assert.equal(limited.body.error.error_code, 'CHANNEL_UNAVAILABLE');
      const next = await create(l, 42);
      assert.equal(next.status, 200, next.text);
      const creates = l.setu.requests
        .slice(from)
        .filter((r) => r.method === 'POST' && r.path.endsWith('/dqr'));
      assert.equal(creates.length, 2);
      assert.ok(
        creates[1]!.at - creates[0]!.at >= 1990,
        `the next call came ${creates[1]!.at - creates[0]!.at} ms after`,
      );
    });
  });
}
