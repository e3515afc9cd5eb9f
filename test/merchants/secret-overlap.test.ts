/**
 * A rotated-out webhook secret is forgotten (CONTRACT §7): when its overlap ends it signs nothing
 * and is deleted from the database, and `paygate merchant rotate-secret --no-overlap` deletes it at
 * once. On both databases, with real callbacks from a running gateway verified by the SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PaygateSignatureError, verifyCallback } from '../../client/src/index.ts';
import { MerchantService } from '../../src/merchants/merchants.service.ts';
import { nextSecretEnd } from '../../src/merchants/merchants.repository.ts';
import { SecretOverlapScheduler } from '../../src/merchants/secret-overlap.scheduler.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';
import { startReceiver, type Received, type Receiver } from '../support/receiver.ts';

const OVERLAP_S = 3;

let order = 0;
const orderNo = () => `ovl-${Date.now().toString(36)}-${++order}`;

/** What the SDK, by default, makes of a callback under `secret`: 'ok' or the failure's reason. */
function sdkReason(secret: string, r: Received): string {
  try {
    verifyCallback({ rawBody: r.raw, headers: r.headers, secret, throwOnFailure: true });
    return 'ok';
  } catch (err) {
    if (err instanceof PaygateSignatureError) return err.reason;
    throw err;
  }
}

for (const kind of DATABASES) {
  describe(`rotated-out webhook secrets on ${kind}`, { skip: await skipFor(kind) }, () => {
    let g: Gateway;
    let receiver: Receiver;
    let merchantId = '';

    before(async () => {
      g = await startGateway(kind, {
        worker: true,
        listen: true,
        env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true', WEBHOOK_SECRET_OVERLAP_S: String(OVERLAP_S) },
      });
      merchantId = g.merchant.merchant_id;
      receiver = await startReceiver();
    });

    after(async () => {
      await receiver.close();
      await g.close();
    });

    /** The merchant's row as stored. */
    const row = () =>
      g.database.db
        .selectFrom('merchants')
        .selectAll()
        .where('id', '=', merchantId)
        .executeTakeFirstOrThrow();

    /** A SUCCESS pay-in's callback, as the merchant's server receives it. */
    async function callback(): Promise<Received> {
      const payin = await g.post('/payments/onsite/payin', {
        money: { amount: 500 },
        merchant_order_no: orderNo(),
        callback_url: receiver.url('/cb'),
      });
      assert.equal(payin.status, 200, payin.text);
      const id = payin.body.payment_id as string;
      const done = await g.post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' });
      assert.equal(done.status, 200, done.text);
      await receiver.waitFor(() => receiver.forPayment(id).length > 0, 'the callback', 10_000);
      return receiver.forPayment(id)[0]!;
    }

    it('after the overlap the old secret signs nothing and is gone from the database', async () => {
      // The gateway's own scheduler, running while it listens, deletes it.
      const old = (await row()).webhook_secret;
      const rotated = await g.paygate.services.merchants.rotateSecret(merchantId);
      const until = Date.parse(rotated.previous_secret_until!);
      assert.equal((await row()).previous_webhook_secret, old, 'kept for the overlap');

      const deadline = until + 10_000;
      while ((await row()).previous_webhook_secret !== null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      const stored = await row();
      assert.equal(stored.previous_webhook_secret, null, 'deleted once the overlap ended');
      assert.equal(stored.previous_secret_until, null);
      assert.ok(Date.now() >= until, 'not before the overlap ended');
      assert.ok(!JSON.stringify(stored).includes(old), 'the old secret is nowhere in the row');
      assert.equal(stored.webhook_secret, rotated.webhook_secret);

      const cb = await callback();
      assert.match(String(cb.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/, 'one signature');
      assert.equal(sdkReason(rotated.webhook_secret, cb), 'ok');
      assert.equal(sdkReason(old, cb), 'signature_mismatch', 'the old secret signs nothing');
    });

    it('merchant rotate-secret --no-overlap deletes the old secret at once; a rotation by another process is forgotten at its end too', async () => {
      const env = { DATABASE_URL: g.testDb.url, WEBHOOK_SECRET_OVERLAP_S: '3600' };
      const old = (await row()).webhook_secret;
      const cut = await cliAsync(
        ['merchant', 'rotate-secret', '--merchant', merchantId, '--no-overlap', '--json'],
        env,
      );
      assert.equal(cut.status, 0, cut.stderr);
      assert.equal(cut.json.previous_secret_until, null);
      const stored = await row();
      assert.equal(stored.webhook_secret, cut.json.webhook_secret);
      assert.equal(stored.previous_webhook_secret, null, 'deleted with the rotation');
      assert.ok(!JSON.stringify(stored).includes(old));
      const cb = await callback();
      assert.equal(String(cb.headers['webhook-signature']).split(' ').length, 1);
      assert.equal(sdkReason(cut.json.webhook_secret, cb), 'ok');
      assert.equal(sdkReason(old, cb), 'signature_mismatch');
      const audit = await g.database.db
        .selectFrom('audit_actions')
        .select('detail')
        .where('action', '=', 'rotate_secret')
        .where('merchant_id', '=', merchantId)
        .execute();
      assert.ok(
        audit.some((a) => /deleted at once/.test(a.detail)),
        JSON.stringify(audit),
      );

      const text = await cliAsync(
        ['merchant', 'rotate-secret', '--merchant', merchantId, '--no-overlap'],
        env,
      );
      assert.equal(text.status, 0, text.stderr);
      assert.match(
        text.stdout,
        /\(shown once; callbacks are signed with it from now on; the previous one is deleted\)\n$/,
      );

      // A rotation with an overlap by the CLI: a serving process finds it by looking again, and
      // deletes the old secret when its overlap ends.
      const scheduler = new SecretOverlapScheduler(g.database.db, { checkMs: 200 });
      scheduler.start();
      try {
        const kept = await cliAsync(['merchant', 'rotate-secret', '--merchant', merchantId, '--json'], {
          ...env,
          WEBHOOK_SECRET_OVERLAP_S: '1',
        });
        assert.equal(kept.status, 0, kept.stderr);
        const until = Date.parse(kept.json.previous_secret_until);
        assert.notEqual((await row()).previous_webhook_secret, null);
        const deadline = until + 10_000;
        while ((await row()).previous_webhook_secret !== null && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
        assert.equal((await row()).previous_webhook_secret, null);
        assert.ok(Date.now() >= until);
      } finally {
        await scheduler.stop();
      }
    });

    it('a sweep deletes exactly the overlaps that have ended by its clock', async () => {
      let clock = Date.parse('2026-11-28T05:00:00Z');
      // Overlaps of 100 s, on the test's own clock.
      const merchants = new MerchantService(g.database.db, () => clock, 100);
      const a = (await g.newMerchant()).merchant_id;
      const b = (await g.newMerchant()).merchant_id;
      const aOld = (await merchants.get(a)).webhook_secret;
      const bOld = (await merchants.get(b)).webhook_secret;
      await merchants.rotateSecret(a);
      clock += 50_000;
      await merchants.rotateSecret(b);
      const previous = async (id: string) => (await merchants.get(id)).previous_webhook_secret;
      const scheduler = new SecretOverlapScheduler(g.database.db, { now: () => clock });

      clock += 49_999;
      await scheduler.sweep();
      assert.deepEqual([await previous(a), await previous(b)], [aOld, bOld], 'both overlaps last');
      clock += 1;
      await scheduler.sweep();
      assert.deepEqual([await previous(a), await previous(b)], [null, bOld], 'the first has ended');
      assert.equal(await nextSecretEnd(g.database.db), clock + 50_000);
      clock += 50_000;
      await scheduler.sweep();
      assert.deepEqual([await previous(a), await previous(b)], [null, null]);
      assert.equal(await nextSecretEnd(g.database.db), null);
    });
  });
}
