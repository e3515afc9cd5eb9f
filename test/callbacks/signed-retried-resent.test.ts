/**
 * Callbacks as a merchant's server sees them: signed, on time, retried on every answer but 200,
 * recorded attempt by attempt, and sent again on request. Real receivers on 127.0.0.1, both databases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { VERSION } from '../../src/version.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { freePort } from '../support/process.ts';
import { startReceiver, verifyCallback, type Receiver } from '../support/receiver.ts';

const INTERVAL_MS = 300;
const TIMEOUT_MS = 500;
const MAX_RETRIES = 3;
const ENV = {
  ALLOW_PRIVATE_CALLBACK_URLS: 'true',
  CALLBACK_RETRY_INTERVAL_MS: String(INTERVAL_MS),
  CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS),
  CALLBACK_MAX_RETRIES: String(MAX_RETRIES),
  SANDBOX_PAYOUT_SETTLE_MS: '200',
  // Long, so that the first attempt's timing tells a wake-up by the final status from a poll.
  WORKER_POLL_MS: '5000',
};
const FIELDS = ['payment_id', 'merchant_order_no', 'amount', 'currency', 'status', 'utr'];

let order = 0;
const orderNo = () => `cb-${Date.now().toString(36)}-${++order}`;

for (const kind of DATABASES) {
  describe(`callbacks on ${kind}`, { skip: await skipFor(kind) }, () => {
    let g: Gateway;
    let receiver: Receiver;

    before(async () => {
      g = await startGateway(kind, { env: ENV, worker: true });
      g.paygate.dispatcher.start();
      receiver = await startReceiver({
        secret: g.merchant.webhook_secret,
        answer: (req, nth) => {
          const path = req.path.split('?')[0];
          if (path === '/500') return { status: 500, body: 'x'.repeat(3000) };
          if (path === '/503') return 503;
          if (path === '/201') return 201;
          if (path === '/302') return { status: 302, headers: { location: receiver.url('/redirected') } };
          if (path === '/hang') return 'hang';
          if (path === '/reset') return 'reset';
          if (path === '/third') return nth < 3 ? 500 : 200;
          if (path === '/after-four') return nth <= 4 ? 500 : 200;
          return 200;
        },
      });
    });

    after(async () => {
      await g.paygate.dispatcher.stop();
      await receiver.close();
      await g.close();
    });

    async function payin(callbackUrl: string | null, key?: string): Promise<string> {
      const res = await g.post(
        '/payments/onsite/payin',
        { money: { amount: 500, currency: 'INR' }, merchant_order_no: orderNo(), callback_url: callbackUrl },
        { key },
      );
      assert.equal(res.status, 200, res.text);
      return res.body.payment_id;
    }

    async function complete(
      paymentId: string,
      status: 'SUCCESS' | 'FAILED',
      kindOf: 'payin' | 'payout' = 'payin',
      key?: string,
    ) {
      const res = await g.post(`/sandbox/${kindOf}/complete`, { payment_id: paymentId, status }, { key });
      assert.equal(res.status, 200, res.text);
    }

    const deliveriesOf = (paymentId: string) => g.paygate.services.callbacks.list({ paymentId });

    async function settledDeliveries(paymentIds: string[], timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const all = await Promise.all(paymentIds.map(async (id) => [id, await deliveriesOf(id)] as const));
        if (all.every(([, ds]) => ds.length > 0 && ds.every((d) => d.status !== 'pending')))
          return new Map(all.map(([id, ds]) => [id, ds[0]!]));
        if (Date.now() > deadline) throw new Error(`deliveries still pending: ${JSON.stringify(all)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('sends signed callbacks that a receiver following docs/integration.md verifies, for pay-ins and payouts, SUCCESS and FAILED', async (t) => {
      await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 10_000_00);
      const url = receiver.url('/ok');
      const paidIn = await payin(url);
      const failedIn = await payin(url);
      // No delivery waits for a retry, so only the final status can wake the dispatcher before its
      // idle poll (WORKER_POLL_MS).
      assert.deepEqual(await g.paygate.services.callbacks.list({ status: 'pending' }), []);
      const settledAt = Date.now();
      await complete(paidIn, 'SUCCESS');
      await complete(failedIn, 'FAILED');
      const payout = async (account: string) => {
        const res = await g.post('/payments/payout', {
          money: { amount: 500 },
          merchant_order_no: orderNo(),
          receiver: { name: 'A Receiver', account_no: account, ifsc_code: 'HDFC0001234' },
          callback_url: url,
        });
        assert.equal(res.status, 200, res.text);
        return res.body.payment_id as string;
      };
      // These settle by themselves through the worker (SANDBOX_PAYOUT_SETTLE_MS); an account ending 0000 fails.
      const paidOut = await payout('123456789012');
      const failedOut = await payout('123456780000');

      const expected = new Map([
        [paidIn, 'SUCCESS'],
        [failedIn, 'FAILED'],
        [paidOut, 'SUCCESS'],
        [failedOut, 'FAILED'],
      ]);
      await receiver.waitFor(
        () => [...expected.keys()].every((id) => receiver.forPayment(id).length === 1),
        'four callbacks',
      );
      const committed = await g.database.db
        .selectFrom('transactions')
        .select('finalized_at')
        .where('payment_id', '=', paidIn)
        .executeTakeFirstOrThrow();
      const arrived = receiver.forPayment(paidIn)[0]!.at;
      const delay = arrived - committed.finalized_at!;
      t.diagnostic(
        `first attempt arrived ${delay} ms after the final status was written (${arrived - settledAt} ms after the settle request)`,
      );
      // At once: woken by the final status, not found by the dispatcher's next poll, which would
      // leave four in five such delays above a fifth of its interval.
      assert.ok(delay < Number(ENV.WORKER_POLL_MS) / 5, `first attempt after ${delay} ms`);
      assert.equal(receiver.forPayment(paidIn)[0]!.headers['x-callback-attempt'], '1');

      for (const [id, status] of expected) {
        const [cb] = receiver.forPayment(id);
        assert.ok(cb);
        assert.equal(cb.verified, true, `callback for ${id} verifies`);
        assert.equal(cb.path, '/ok');
        assert.equal(cb.headers['content-type'], 'application/json');
        assert.equal(cb.headers['user-agent'], `paygate-callback/${VERSION}`);
        assert.match(String(cb.headers['x-verification-token']), /^[0-9a-f]{64}$/);
        assert.equal(cb.attempt, 1);
        assert.deepEqual(Object.keys(cb.body), FIELDS);
        assert.equal(cb.body.payment_id, id);
        assert.equal(cb.body.status, status);
        assert.equal(cb.body.currency, 'INR');
        assert.equal(cb.body.amount, 500);
        assert.match(cb.raw, /"amount":500\.00[,}]/);
        if (status === 'SUCCESS') assert.match(cb.body.utr, /^\d{12}$/);
        else assert.equal(cb.body.utr, '');
        // The signature covers payment_id, the amount text and the status: change any and it fails.
        const token = String(cb.headers['x-verification-token']);
        assert.equal(
          verifyCallback(g.merchant.webhook_secret, cb.raw.replace('500.00', '500.0'), token),
          false,
        );
        assert.equal(
          verifyCallback(g.merchant.webhook_secret, cb.raw.replace(`"${status}"`, '"OTHER"'), token),
          false,
        );
        assert.equal(verifyCallback('whsec_another', cb.raw, token), false);
      }
      const status = await g.post('/payments/payin_status', { payment_id: paidIn });
      assert.equal(receiver.forPayment(paidIn)[0]!.body.utr, status.body.utr);

      const delivered = await settledDeliveries([...expected.keys()]);
      for (const d of delivered.values()) {
        assert.equal(d.status, 'delivered');
        assert.equal(d.attempts, 1);
        assert.notEqual(d.delivered_at, null);
        const log = await g.paygate.services.callbacks.attempts(d.delivery_id);
        assert.equal(log.length, 1);
        assert.equal(log[0]!.http_status, 200);
        assert.equal(log[0]!.error, null);
        assert.equal(log[0]!.response, 'OK');
      }
    });

    it('treats every answer but 200 as a failure: 1 + CALLBACK_MAX_RETRIES attempts, an interval apart, then failed', async () => {
      const closedPort = await freePort();
      const cases = [
        { url: receiver.url('/500'), path: '/500', http: 500, error: 'http_status' },
        { url: receiver.url('/503'), path: '/503', http: 503, error: 'http_status' },
        { url: receiver.url('/201'), path: '/201', http: 201, error: 'http_status' },
        { url: receiver.url('/302'), path: '/302', http: 302, error: 'redirect' },
        { url: receiver.url('/hang'), path: '/hang', http: null, error: 'timeout' },
        { url: receiver.url('/reset'), path: '/reset', http: null, error: 'reset' },
        { url: `http://127.0.0.1:${closedPort}/callback`, path: null, http: null, error: 'refused' },
      ];
      const ids = await Promise.all(cases.map((c) => payin(c.url)));
      await Promise.all(ids.map((id) => complete(id, 'SUCCESS')));
      const final = await settledDeliveries(ids);

      for (const [i, c] of cases.entries()) {
        const id = ids[i]!;
        const d = final.get(id)!;
        assert.equal(d.status, 'failed', `${c.error} ends failed`);
        assert.equal(d.attempts, 1 + MAX_RETRIES);
        assert.equal(d.next_attempt_at, null);
        const log = await g.paygate.services.callbacks.attempts(d.delivery_id);
        assert.deepEqual(
          log.map((a) => a.attempt),
          [1, 2, 3, 4],
        );
        for (const a of log) {
          assert.equal(a.http_status, c.http, `${c.path ?? 'closed port'} records its HTTP status`);
          assert.equal(a.error, c.error);
        }
        for (let n = 1; n < log.length; n++) {
          const gap = Date.parse(log[n]!.started_at) - Date.parse(log[n - 1]!.started_at);
          assert.ok(
            gap >= INTERVAL_MS,
            `attempts of ${c.error} are ${gap} ms apart, at least ${INTERVAL_MS}`,
          );
        }
        if (c.path) {
          const seen = receiver.forPayment(id);
          assert.deepEqual(
            seen.map((r) => r.attempt),
            [1, 2, 3, 4],
            `${c.path} saw X-Callback-Attempt 1 to 4`,
          );
          assert.ok(seen.every((r) => r.path === c.path && r.verified));
          for (let n = 1; n < seen.length; n++) assert.ok(seen[n]!.at - seen[n - 1]!.at >= INTERVAL_MS);
        }
        if (c.http === 500)
          assert.equal(log[0]!.response, 'x'.repeat(1024), 'the first 1 KiB of the answer is kept');
      }
      assert.equal(
        receiver.received.filter((r) => r.path === '/redirected').length,
        0,
        'redirects are not followed',
      );
    });

    it('stops retrying once the receiver answers 200', async () => {
      const id = await payin(receiver.url('/third'));
      await complete(id, 'SUCCESS');
      const d = (await settledDeliveries([id])).get(id)!;
      assert.equal(d.status, 'delivered');
      assert.equal(d.attempts, 3);
      // Long enough for a fourth attempt, were one scheduled.
      await new Promise((r) => setTimeout(r, INTERVAL_MS * 3));
      assert.deepEqual(
        receiver.forPayment(id).map((r) => r.attempt),
        [1, 2, 3],
      );
      const log = await g.paygate.services.callbacks.attempts(d.delivery_id);
      assert.deepEqual(
        log.map((a) => a.http_status),
        [500, 500, 200],
      );
    });

    it('resends on POST /callbacks/resend: a fresh delivery from attempt 1, even after the first one failed', async () => {
      const id = await payin(receiver.url('/after-four'));
      await complete(id, 'FAILED');
      const failed = (await settledDeliveries([id])).get(id)!;
      assert.equal(failed.status, 'failed');

      const res = await g.post('/callbacks/resend', { payment_id: id });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), ['delivery_id', 'payment_id', 'status', 'success']);
      assert.equal(res.body.success, true);
      assert.equal(res.body.payment_id, id);
      assert.equal(res.body.status, 'pending');
      assert.notEqual(res.body.delivery_id, failed.delivery_id);

      await receiver.waitFor(() => receiver.forPayment(id).length === 5, 'the resent callback');
      const resent = receiver.forPayment(id)[4]!;
      assert.equal(resent.attempt, 1);
      assert.equal(resent.verified, true);
      assert.equal(resent.raw, receiver.forPayment(id)[0]!.raw, 'the same body as the original callback');
      await settledDeliveries([id]);
      const all = await deliveriesOf(id);
      assert.deepEqual(
        all
          .map((d) => `${d.delivery_id === res.body.delivery_id ? 'new' : 'old'}:${d.status}:${d.attempts}`)
          .sort(),
        ['new:delivered:1', 'old:failed:4'],
      );
    });

    it('refuses a resend for an unknown or foreign payment (404), one not final or without a callback URL (409)', async () => {
      const notFound = await g.post('/callbacks/resend', { payment_id: 'X'.repeat(32) });
      assert.equal(notFound.status, 404);
      assert.equal(notFound.body.error.error_code, 'PAYMENT_NOT_FOUND');

      const other = await g.newMerchant();
      const foreign = await payin(receiver.url('/ok'), other.api_key);
      await complete(foreign, 'SUCCESS', 'payin', other.api_key);
      const res = await g.post('/callbacks/resend', { payment_id: foreign });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.error_code, 'PAYMENT_NOT_FOUND');
      assert.equal(
        (await g.post('/callbacks/resend', { payment_id: foreign }, { key: other.api_key })).status,
        200,
      );

      const pending = await payin(receiver.url('/ok'));
      const early = await g.post('/callbacks/resend', { payment_id: pending });
      assert.equal(early.status, 409);
      assert.equal(early.body.error.error_code, 'INVALID_STATE');

      const silent = await payin(null);
      await complete(silent, 'SUCCESS');
      const noUrl = await g.post('/callbacks/resend', { payment_id: silent });
      assert.equal(noUrl.status, 409);
      assert.equal(noUrl.body.error.error_code, 'INVALID_STATE');
      assert.equal((await deliveriesOf(silent)).length, 0, 'no URL, no callback');

      const invalid = await g.post('/callbacks/resend', {});
      assert.equal(invalid.status, 422);
      assert.deepEqual(
        invalid.body.detail.map((d: any) => d.loc.join('.')),
        ['body.payment_id'],
      );
    });

    it('exposes delivery metrics', async () => {
      const text = (await g.app.inject('/metrics')).body;
      assert.match(text, /paygate_callback_deliveries_total\{outcome="delivered"\} [1-9]/);
      assert.match(text, /paygate_callback_deliveries_total\{outcome="failed"\} [1-9]/);
      assert.match(text, /paygate_callback_attempts_total\{result="timeout"\} [1-9]/);
      assert.match(
        text,
        /paygate_callback_attempt_duration_seconds_bucket\{le="[^"]+",result="delivered"\} [1-9]/,
      );
      assert.match(text, /paygate_callback_queue_depth \d+/);
      assert.match(text, /paygate_callback_oldest_due_age_seconds [\d.]+/);
    });
  });
}
