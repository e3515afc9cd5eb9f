/**
 * `paygate refund create` and `paygate refund show` (contract §1, §12): the API's path from the
 * command line, a generated refund number, replays, refusals with exit 1 and their error codes,
 * malformed values with exit 2, the audit log; `callbacks resend` takes a refund_id.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase } from '../../src/db/database.ts';
import { buildServices } from '../../src/services.ts';
import { createDatabase, DATABASES } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';

for (const kind of DATABASES) {
  describe(`paygate refund on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('creates, replays, refuses and shows refunds, and resends their callbacks', async () => {
      const testDb = await createDatabase(kind);
      const env = { DATABASE_URL: testDb.url };
      const database = openDatabase(testDb.url);
      try {
        await migrate(database);
        const services = buildServices(loadConfig(env), database);
        const merchant = await services.merchants.create({
          name: 'CLI Shop',
          callbackUrl: 'https://shop.example/cb',
        });
        const principal = await services.merchants.authenticate(merchant.api_key);
        const payin = await services.payins.create(principal!, 'onsite', {
          money: { amount: 100 },
          merchant_order_no: 'cli-order-1',
        });
        const paymentId = JSON.parse(typeof payin.body === 'string' ? payin.body : JSON.stringify(payin.body))
          .payment_id as string;
        await services.finality.settle(
          paymentId,
          { status: 'SUCCESS', utr: '123456789012', channelTxnId: 'x' },
          'test',
        );
        const run = (...args: string[]) => cliAsync([...args, '--json'], env);

        const generated = await run('refund', 'create', '--payment', paymentId, '--amount', '10.00');
        assert.equal(generated.status, 0, generated.stderr + generated.stdout);
        assert.equal(generated.json.status, 'PENDING');
        assert.equal(generated.json.amount, 10);
        assert.equal(generated.json.payment_id, paymentId);
        assert.match(generated.json.merchant_refund_no, /^.{1,36}$/);

        const named = await run(
          'refund',
          'create',
          '--payment',
          paymentId,
          '--amount',
          '20.50',
          '--refund-no',
          'cli-r-1',
        );
        assert.equal(named.status, 0, named.stderr);
        assert.equal(named.json.merchant_refund_no, 'cli-r-1');
        assert.equal(named.json.replayed, false);
        const again = await run(
          'refund',
          'create',
          '--payment',
          paymentId,
          '--amount',
          '20.50',
          '--refund-no',
          'cli-r-1',
        );
        assert.equal(again.status, 0, again.stderr);
        assert.equal(again.json.replayed, true);
        assert.equal(again.json.refund_id, named.json.refund_id);

        const conflict = await run(
          'refund',
          'create',
          '--payment',
          paymentId,
          '--amount',
          '1.00',
          '--refund-no',
          'cli-r-1',
        );
        assert.equal(conflict.status, 1);
        assert.equal(conflict.json.error.code, 'DUPLICATE_REFUND_NO');
        const exceeds = await run('refund', 'create', '--payment', paymentId, '--amount', '69.51');
        assert.equal(exceeds.status, 1);
        assert.equal(exceeds.json.error.code, 'REFUND_EXCEEDS_PAYMENT');
        const unknown = await run('refund', 'create', '--payment', 'x'.repeat(32), '--amount', '1.00');
        assert.equal(unknown.status, 1);
        assert.equal(unknown.json.error.code, 'PAYMENT_NOT_FOUND');
        for (const bad of [
          ['--amount', '1.001'],
          ['--amount', 'ten'],
          ['--amount', '1.00', '--refund-no', 'r'.repeat(37)],
          ['--amount', '1.00', '--reason', 'x'.repeat(101)],
        ]) {
          const r = await run('refund', 'create', '--payment', paymentId, ...bad);
          assert.equal(r.status, 2, `${bad.join(' ')}: ${r.stdout}`);
        }
        const refunds = await database.db
          .selectFrom('transactions')
          .select('payment_id')
          .where('refund_of', '=', paymentId)
          .execute();
        assert.equal(refunds.length, 2, 'nothing recorded by the refusals');
        assert.deepEqual(await services.wallets.balance(merchant.merchant_id, 'INR'), {
          currency: 'INR',
          available: 6_950,
          held: 3_050,
        });

        const show = await run('refund', 'show', named.json.refund_id);
        assert.equal(show.status, 0, show.stderr);
        assert.deepEqual(show.json, {
          refund_id: named.json.refund_id,
          payment_id: paymentId,
          merchant_refund_no: 'cli-r-1',
          status: 'PENDING',
          money: { amount: 20.5, currency: 'INR' },
          utr: '',
          channel: 'sandbox',
          channel_txn_id: '',
          failure_reason: null,
        });
        assert.equal((await run('refund', 'show', paymentId)).json.error.code, 'PAYMENT_NOT_FOUND');

        await services.sandbox.completeRefund(principal!, named.json.refund_id, 'SUCCESS');
        const resend = await run('callbacks', 'resend', named.json.refund_id);
        assert.equal(resend.status, 0, resend.stderr);
        assert.equal(resend.json.refund_id, named.json.refund_id);
        const audit = await database.db
          .selectFrom('audit_actions')
          .select(['action', 'merchant_id'])
          .where('action', 'in', ['refund', 'resend'])
          .execute();
        assert.deepEqual(audit.map((a) => a.action).sort(), ['refund', 'refund', 'resend']);
        assert.ok(audit.every((a) => a.merchant_id === merchant.merchant_id));
        assert.deepEqual((await services.wallets.verify()).problems, []);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
