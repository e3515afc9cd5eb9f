/**
 * A live refund across a kill -9, through real `paygate serve` processes and the CLI, on both
 * databases: the process dies while its POST of the refund to the fake Setu is in flight (Setu
 * makes the refund; nobody records the answer). After a restart the refund is found among its
 * payment's refunds by referenceId, never sent again: exactly one provider refund, one POST, one
 * callback; `paygate refund show` names Setu's refund id; `paygate ledger verify` is clean.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { createDatabase, DATABASES } from '../support/databases.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { until } from '../support/live.ts';
import { cli, cliAsync, spawnServer, type ServerProcess } from '../support/process.ts';
import { startReceiver } from '../support/receiver.ts';

for (const kind of DATABASES) {
  describe(`a live refund across a kill -9 on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('sends one provider refund and one callback when the process dies with the POST in flight', async () => {
      const db = await createDatabase(kind);
      const setu = await new FakeSetu().start();
      const receiver = await startReceiver();
      let server: ServerProcess | undefined;
      const env = {
        DATABASE_URL: db.url,
        ALLOW_PRIVATE_CALLBACK_URLS: 'true',
        CHANNEL_TIMEOUT_MS: '1000',
        CHANNEL_POLL_MS: '1000',
        WORKER_POLL_MS: '100',
        ...setu.env(),
      };
      const start = async () => {
        server = await spawnServer(env);
        setu.notifyUrl = `${server.baseUrl}/channels/setu/notifications`;
      };
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${server!.baseUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      let key = '';
      try {
        const merchant = (
          await cliAsync(
            ['merchant', 'create', '--name', 'Kill Shop', '--live', '--vpa', 'shop.kill@pineaxis', '--json'],
            env,
          )
        ).json;
        key = merchant.api_key;
        await start();
        const created = await post('/payments/onsite/payin', {
          money: { amount: 300 },
          merchant_order_no: 'kill-payin',
          callback_url: receiver.url('/kill'),
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const payinId = created.body.payment_id as string;
        await setu.pay(payinId);
        await until(
          async () =>
            (await post('/payments/payin_status', { payment_id: payinId })).body.status === 'SUCCESS',
          'the pay-in SUCCESS',
          30_000,
        );

        // Setu takes the refund and answers 4 s later; the process dies before the answer.
        setu.fail('refund_create', { delayMs: 4000 });
        const asked = await post('/payments/refund', {
          payment_id: payinId,
          money: { amount: 120.75 },
          merchant_refund_no: 'kill-refund',
        });
        assert.equal(asked.status, 200, JSON.stringify(asked.body));
        const refundId = asked.body.refund_id as string;
        await until(() => setu.refundPosts(refundId).length === 1, 'the POST at Setu', 30_000);
        await server!.kill();
        const database = openDatabase(db.url);
        try {
          const row = await database.db
            .selectFrom('transactions')
            .select(['status', 'channel_txn_id'])
            .where('payment_id', '=', refundId)
            .executeTakeFirstOrThrow();
          assert.deepEqual(row, { status: 'PENDING', channel_txn_id: '' }, 'nothing recorded the send');
        } finally {
          await database.close();
        }
        await until(() => setu.refundsFor(refundId).length === 1, 'the refund made at Setu', 30_000);

        await start();
        const status = async () => (await post('/payments/refund_status', { refund_id: refundId })).body;
        await until(async () => (await status()).status === 'SUCCESS', 'the refund SUCCESS', 30_000);
        const [made] = setu.refundsFor(refundId);
        assert.equal((await status()).utr, made!.crn);
        await receiver.waitFor(
          () => receiver.forPayment(refundId).length === 1,
          'the refund callback',
          30_000,
        );
        await new Promise((r) => setTimeout(r, 1000));
        assert.equal(receiver.forPayment(refundId).length, 1, 'one callback');
        assert.equal(receiver.forPayment(refundId)[0]!.body.status, 'SUCCESS');
        assert.equal(setu.refundPosts(refundId).length, 1, 'one POST');
        assert.equal(setu.refundsFor(refundId).length, 1, 'one provider refund');
        assert.ok(
          setu.requests.some((r) => r.path.endsWith('/payment') && r.path.includes('/refunds/')),
          "the payment's refunds were read after the restart",
        );

        const shown = cli(['refund', 'show', refundId, '--json'], env);
        assert.equal(shown.status, 0, shown.stderr);
        assert.equal(shown.json.status, 'SUCCESS');
        assert.equal(shown.json.channel, 'setu');
        assert.equal(shown.json.channel_txn_id, made!.id);
        assert.equal(shown.json.failure_reason, null);
        const text = cli(['refund', 'show', refundId], env);
        assert.match(text.stdout, new RegExp(`setu refund ${made!.id}`));
        const verify = cli(['ledger', 'verify', '--json'], env);
        assert.equal(verify.status, 0, verify.stdout);
      } finally {
        await server?.kill();
        await receiver.close();
        await setu.stop();
        await db.drop();
      }
    });
  });
}
