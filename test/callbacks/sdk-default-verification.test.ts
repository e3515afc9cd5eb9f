/**
 * The SDK's default verification of real callbacks (CONTRACT §7), on both databases: a callback
 * from a running gateway verifies as sent; without its `webhook-*` headers it fails (the seed's
 * token alone passes only when the merchant turns `requireStandardWebhooks` off); a
 * `webhook-signature` not in its exact shape, `"<valid>, junk"` included, fails and is answered 401.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { handleCallback, PaygateSignatureError, verifyCallback } from '../../client/src/index.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { startReceiver, type Received, type Receiver } from '../support/receiver.ts';

type Headers = Record<string, string | string[] | undefined>;

/** What the SDK makes of `raw` with `headers`: 'ok' or the failure's reason. */
function reason(secret: string, raw: string, headers: Headers, requireStandardWebhooks?: boolean): string {
  try {
    verifyCallback({ rawBody: raw, headers, secret, requireStandardWebhooks, throwOnFailure: true });
    return 'ok';
  } catch (err) {
    if (err instanceof PaygateSignatureError) return err.reason;
    throw err;
  }
}

for (const kind of DATABASES) {
  describe(
    `the SDK's default verification of real callbacks on ${kind}`,
    { skip: await skipFor(kind) },
    () => {
      let g: Gateway;
      let receiver: Receiver;
      let cb: Received;
      let secret = '';

      before(async () => {
        g = await startGateway(kind, { worker: true, env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true' } });
        secret = g.merchant.webhook_secret;
        receiver = await startReceiver();
        const payin = await g.post('/payments/onsite/payin', {
          money: { amount: 500 },
          merchant_order_no: `sdk-default-${Date.now().toString(36)}`,
          callback_url: receiver.url('/cb'),
        });
        assert.equal(payin.status, 200, payin.text);
        const id = payin.body.payment_id as string;
        const done = await g.post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' });
        assert.equal(done.status, 200, done.text);
        await receiver.waitFor(() => receiver.forPayment(id).length > 0, 'the callback', 10_000);
        cb = receiver.forPayment(id)[0]!;
      });

      after(async () => {
        await receiver.close();
        await g.close();
      });

      it('a callback without webhook-* headers fails the default verification', async () => {
        assert.equal(reason(secret, cb.raw, cb.headers), 'ok', 'as sent');
        const {
          'webhook-id': _i,
          'webhook-timestamp': _t,
          'webhook-signature': _s,
          ...stripped
        } = cb.headers;
        assert.ok(stripped['x-verification-token'], 'the seed token is still there');
        assert.equal(reason(secret, cb.raw, stripped), 'missing_header');
        assert.equal(verifyCallback({ rawBody: cb.raw, headers: stripped, secret }), false);
        assert.equal(
          reason(secret, cb.raw, stripped, false),
          'ok',
          'only when told to accept the token alone',
        );
        const answer = await handleCallback(
          { method: 'POST', headers: stripped, rawBody: cb.raw },
          { secret, onCallback: () => assert.fail('not verified') },
        );
        assert.equal(answer.status, 401);
      });

      it('"<valid>, junk" and other shapes of webhook-signature fail, and are answered 401', async () => {
        const valid = String(cb.headers['webhook-signature']);
        assert.match(valid, /^v1,[A-Za-z0-9+/]{43}=$/);
        for (const signature of [`${valid}, junk`, `${valid} junk`, `${valid},`, `${valid.slice(0, -1)}==`]) {
          const headers = { ...cb.headers, 'webhook-signature': signature };
          assert.equal(reason(secret, cb.raw, headers), 'invalid_header', signature);
          const answer = await handleCallback(
            { method: 'POST', headers, rawBody: cb.raw },
            { secret, onCallback: () => assert.fail('not verified') },
          );
          assert.equal(answer.status, 401, signature);
        }
        const answer = await handleCallback(
          { method: 'POST', headers: cb.headers, rawBody: cb.raw },
          { secret, onCallback: () => {} },
        );
        assert.equal(answer.status, 200, 'as sent');
      });
    },
  );
}
