/**
 * Standard Webhooks as a merchant's server sees it (CONTRACT §7): real callbacks from a running
 * gateway (pay-ins, payouts, payout reversals of §4, refunds of §12), verified with the published
 * `standardwebhooks` package (and the SDK) and the secret as shown to the merchant, before, during
 * and after a rotation's overlap; retries and resends of one event.
 * The gateway's clock is a parameter: the overlap ends by moving it, not by waiting.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { PaygateSignatureError, verifyCallback as sdkVerify } from '../../client/src/index.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { startReceiver, verifyCallback, type Received, type Receiver } from '../support/receiver.ts';

const OVERLAP_S = 120;
const INTERVAL_MS = 1100;
const ENV = {
  ALLOW_PRIVATE_CALLBACK_URLS: 'true',
  // Over a second, so that a retry's webhook-timestamp differs from the attempt before it.
  CALLBACK_RETRY_INTERVAL_MS: String(INTERVAL_MS),
  CALLBACK_MAX_RETRIES: '2',
  SANDBOX_PAYOUT_SETTLE_MS: '100',
  WORKER_POLL_MS: '200',
  WEBHOOK_SECRET_OVERLAP_S: String(OVERLAP_S),
};
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A secret as merchants were given before Standard Webhooks: whsec_ + 40 base62 characters. */
const legacySecret = () => `whsec_${Array.from({ length: 40 }, () => BASE62[randomInt(62)]).join('')}`;

let order = 0;
const orderNo = () => `sw-${Date.now().toString(36)}-${++order}`;

function standardHeaders(r: Received): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
    const v = r.headers[name];
    assert.equal(typeof v, 'string', `${name} is sent once`);
    out[name] = v as string;
  }
  return out;
}

/** What the published library makes of a callback under `secret`: the parsed body, or its error. */
function verifyStandard(secret: string, r: Received, raw = r.raw): unknown {
  return new Webhook(secret).verify(raw, standardHeaders(r));
}

/** What the SDK makes of it, given the request's headers as a merchant's framework would. */
function sdkReason(secret: string, r: Received, now: number, raw = r.raw): string {
  try {
    sdkVerify({ rawBody: raw, headers: r.headers, secret, now: () => now, throwOnFailure: true });
    return 'ok';
  } catch (err) {
    if (err instanceof PaygateSignatureError) return err.reason;
    throw err;
  }
}

/** A copy of `raw` with the byte at `i` changed (to another printable ASCII byte). */
function oneByteChanged(raw: string, i: number): string {
  const c = raw.charCodeAt(i);
  return raw.slice(0, i) + String.fromCharCode(c === 0x7e ? 0x21 : c + 1) + raw.slice(i + 1);
}

for (const kind of DATABASES) {
  describe(`Standard Webhooks callbacks on ${kind}`, { skip: await skipFor(kind) }, () => {
    let g: Gateway;
    let receiver: Receiver;
    let offset = 0;
    const now = () => Date.now() + offset;
    const firstSecret = legacySecret();
    let merchantId = '';

    before(async () => {
      g = await startGateway(kind, { env: ENV, worker: true, now });
      merchantId = g.merchant.merchant_id;
      // A merchant made before this change keeps the secret it was given then.
      await g.database.db
        .updateTable('merchants')
        .set({ webhook_secret: firstSecret })
        .where('id', '=', merchantId)
        .execute();
      await g.paygate.services.wallets.topUp(merchantId, 'INR', 10_000_00);
      receiver = await startReceiver({
        answer: (req, nth) => (req.path === '/flaky' && nth === 1 ? 500 : 200),
      });
    });

    after(async () => {
      await receiver.close();
      await g.close();
    });

    /** A SUCCESS pay-in and a SUCCESS payout; resolves with their callbacks once both arrived. */
    async function payinAndPayout(path = '/ok'): Promise<Received[]> {
      const url = receiver.url(path);
      const payin = await g.post('/payments/onsite/payin', {
        money: { amount: 500, currency: 'INR' },
        merchant_order_no: orderNo(),
        callback_url: url,
      });
      assert.equal(payin.status, 200, payin.text);
      const done = await g.post('/sandbox/payin/complete', {
        payment_id: payin.body.payment_id,
        status: 'SUCCESS',
      });
      assert.equal(done.status, 200, done.text);
      // Settles by itself through the worker (SANDBOX_PAYOUT_SETTLE_MS).
      const payout = await g.post('/payments/payout', {
        money: { amount: 250.5 },
        merchant_order_no: orderNo(),
        receiver: { name: 'A Receiver', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
        callback_url: url,
      });
      assert.equal(payout.status, 200, payout.text);
      const ids: string[] = [payin.body.payment_id, payout.body.payment_id];
      await receiver.waitFor(() => ids.every((id) => receiver.forPayment(id).length > 0), 'two callbacks');
      return ids.map((id) => receiver.forPayment(id)[0]!);
    }

    /**
     * Callbacks of all four kinds of event: a pay-in's SUCCESS, a payout's SUCCESS, that payout's
     * reversal (CONTRACT §4) and a refund of that pay-in settled SUCCESS (§12), in that order.
     */
    async function everyKind(): Promise<Received[]> {
      const [payin, payout] = await payinAndPayout();
      const payoutId = payout!.body.payment_id as string;
      const reversed = await g.post('/sandbox/payout/complete', { payment_id: payoutId, status: 'REVERSED' });
      assert.equal(reversed.status, 200, reversed.text);
      const refund = await g.post('/payments/refund', {
        payment_id: payin!.body.payment_id,
        money: { amount: 120.25, currency: 'INR' },
        merchant_refund_no: orderNo(),
        callback_url: receiver.url('/ok'),
      });
      assert.equal(refund.status, 200, refund.text);
      const refundId = refund.body.refund_id as string;
      // Settles SUCCESS by itself through the worker (SANDBOX_PAYOUT_SETTLE_MS), as the payout did.
      await receiver.waitFor(
        () => receiver.forPayment(payoutId).length === 2 && receiver.forPayment(refundId).length === 1,
        'the reversal and the refund',
      );
      const [reversal] = receiver.forPayment(payoutId).slice(1);
      const [refunded] = receiver.forPayment(refundId);
      assert.equal(reversal!.body.status, 'REVERSED');
      assert.equal(refunded!.body.status, 'SUCCESS');
      assert.equal(refunded!.body.payment_id, payin!.body.payment_id);
      return [payin!, payout!, reversal!, refunded!];
    }

    it('signs pay-in, payout, reversal and refund callbacks that the standardwebhooks package verifies with a secret made before this change; one byte changed fails', async () => {
      const callbacks = await everyKind();
      const ids = new Set<string>();
      for (const cb of callbacks) {
        const h = standardHeaders(cb);
        assert.match(h['webhook-id']!, /^msg_[A-Za-z0-9]+$/);
        ids.add(h['webhook-id']!);
        assert.ok(Math.abs(Number(h['webhook-timestamp']) - now() / 1000) < 30, 'the time of the attempt');
        assert.match(h['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/, 'one signature');
        assert.deepEqual(verifyStandard(firstSecret, cb), JSON.parse(cb.raw));
        assert.equal(sdkReason(firstSecret, cb, now()), 'ok');
        assert.ok(verifyCallback(firstSecret, cb.raw, cb.headers['x-verification-token'] as string));

        for (const i of [
          0,
          cb.raw.indexOf('"amount"') + 10,
          cb.raw.indexOf('"utr"') + 8,
          cb.raw.length - 1,
        ]) {
          const changed = oneByteChanged(cb.raw, i);
          assert.throws(
            () => verifyStandard(firstSecret, cb, changed),
            WebhookVerificationError,
            `byte ${i}`,
          );
        }
        // The seed's token signs payment_id, amount and status only: a changed utr passes it.
        const utrChanged = oneByteChanged(cb.raw, cb.raw.indexOf('"utr"') + 8);
        assert.ok(verifyCallback(firstSecret, utrChanged, cb.headers['x-verification-token'] as string));
        assert.throws(() => verifyStandard(legacySecret(), cb), WebhookVerificationError, 'another secret');
      }
      assert.equal(ids.size, 4, 'one webhook-id per event');
    });

    it('carries the new and the old signature during the overlap after a rotation, and the new one only after it', async () => {
      const rotated = await g.paygate.services.merchants.rotateSecret(merchantId);
      const secondSecret = rotated.webhook_secret;
      assert.match(secondSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(Buffer.from(secondSecret.slice(6), 'base64').length, 32);
      assert.ok(rotated.previous_secret_until);
      const until = Date.parse(rotated.previous_secret_until);
      assert.ok(Math.abs(until - (now() + OVERLAP_S * 1000)) < 5000, rotated.previous_secret_until);

      for (const cb of await everyKind()) {
        assert.equal(standardHeaders(cb)['webhook-signature']!.split(' ').length, 2);
        assert.deepEqual(verifyStandard(secondSecret, cb), JSON.parse(cb.raw));
        assert.deepEqual(verifyStandard(firstSecret, cb), JSON.parse(cb.raw));
        assert.equal(sdkReason(firstSecret, cb, now()), 'ok');
        assert.equal(sdkReason(secondSecret, cb, now()), 'ok');
        const token = cb.headers['x-verification-token'] as string;
        assert.ok(verifyCallback(secondSecret, cb.raw, token), 'the seed token uses the new secret');
        assert.ok(!verifyCallback(firstSecret, cb.raw, token));
      }

      offset += until - now() + 1000;
      for (const cb of await everyKind()) {
        assert.equal(standardHeaders(cb)['webhook-signature']!.split(' ').length, 1);
        assert.deepEqual(verifyStandard(secondSecret, cb), JSON.parse(cb.raw));
        assert.throws(() => verifyStandard(firstSecret, cb), WebhookVerificationError);
        assert.equal(sdkReason(firstSecret, cb, now()), 'signature_mismatch');
        assert.equal(sdkReason(secondSecret, cb, now() + 301_000), 'stale_timestamp');
      }
    });

    it('keeps the webhook-id on retries and resends, with a new timestamp and signature each time', async () => {
      const [payin, payout] = await payinAndPayout('/flaky');
      const secret = (await g.paygate.services.merchants.get(merchantId)).webhook_secret;
      for (const first of [payin!, payout!]) {
        const id = first.body.payment_id as string;
        await receiver.waitFor(() => receiver.forPayment(id).length === 2, 'the retry', 10_000);
        const lastTs = Number(receiver.forPayment(id)[1]!.headers['webhook-timestamp']);
        while (Math.floor(now() / 1000) <= lastTs) await new Promise((r) => setTimeout(r, 50));
        const resend = await g.post('/callbacks/resend', { payment_id: id });
        assert.equal(resend.status, 200, resend.text);
        await receiver.waitFor(() => receiver.forPayment(id).length === 3, 'the resend', 10_000);

        const seen = receiver.forPayment(id);
        assert.deepEqual(
          seen.map((r) => r.attempt),
          [1, 2, 1],
          'a failed attempt, its retry, then a resend as a new delivery',
        );
        const headers = seen.map(standardHeaders);
        assert.equal(new Set(headers.map((h) => h['webhook-id'])).size, 1, 'one webhook-id');
        assert.equal(new Set(headers.map((h) => h['webhook-timestamp'])).size, 3, 'a timestamp per attempt');
        assert.equal(new Set(headers.map((h) => h['webhook-signature'])).size, 3, 'a signature per attempt');
        assert.equal(new Set(seen.map((r) => r.raw)).size, 1, 'the same body');
        for (const r of seen) assert.deepEqual(verifyStandard(secret, r), JSON.parse(r.raw));
      }
      assert.notEqual(
        standardHeaders(payin!)['webhook-id'],
        standardHeaders(payout!)['webhook-id'],
        'another event, another id',
      );
    });
  });
}
