/**
 * Live channels end to end through real `paygate serve` processes and the CLI, on both databases:
 * a live merchant made with `paygate merchant create --live --vpa`, pay-ins paid through signed
 * Setu notifications, a payout settled by Cashfree's webhook, a process killed with SIGKILL between
 * sending a transfer and recording it (restarted: still one transfer), bad signatures refused,
 * `paygate channels check` and `paygate channels exceptions`, and `paygate ledger verify` clean.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/db/database.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { until } from '../support/live.ts';
import { cli, cliAsync, spawnServer, type ServerProcess } from '../support/process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

for (const kind of DATABASES) {
  describe(`live channels through paygate serve on ${kind}`, { skip: await skipFor(kind) }, () => {
    let db: TestDatabase;
    let setu: FakeSetu;
    let cashfree: FakeCashfree;
    let receiver: Receiver;
    let server: ServerProcess;
    let env: Record<string, string>;
    let key = '';
    let merchantId = '';

    const start = async () => {
      server = await spawnServer(env);
      setu.notifyUrl = `${server.baseUrl}/channels/setu/notifications`;
      cashfree.notifyUrl = `${server.baseUrl}/channels/cashfree/notifications`;
    };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const waitStatus = async (k: 'payin' | 'payout', id: string, want: string, timeoutMs = 15_000) => {
      let last: any;
      await until(
        async () => {
          last = (await post(`/payments/${k}_status`, { payment_id: id })).body;
          return last.status === want;
        },
        `${k} ${id} ${want}`,
        timeoutMs,
      );
      return last;
    };

    before(async () => {
      db = await createDatabase(kind);
      setu = await new FakeSetu().start();
      cashfree = await new FakeCashfree().start();
      env = {
        DATABASE_URL: db.url,
        ALLOW_PRIVATE_CALLBACK_URLS: 'true',
        CHANNEL_TIMEOUT_MS: '1000',
        WORKER_POLL_MS: '100',
        ...setu.env(),
        ...cashfree.env(),
      };
      const created = cli(['merchant', 'create', '--name', 'Live Shop', '--live', '--json'], env);
      assert.equal(created.status, 2, 'a live merchant needs --vpa');
      // Asynchronously: creating a live merchant registers its UPI id with the fake Setu in this process.
      const merchant = (
        await cliAsync(
          ['merchant', 'create', '--name', 'Live Shop', '--live', '--vpa', 'shop.e2e@pineaxis', '--json'],
          env,
        )
      ).json;
      assert.equal([...setu.vpas.values()].find((v) => v.vpa === 'shop.e2e@pineaxis')?.status, 'active');
      key = merchant.api_key;
      merchantId = merchant.merchant_id;
      receiver = await startReceiver({ secret: merchant.webhook_secret });
      assert.equal(
        cli(['wallet', 'credit', '--merchant', merchantId, '--amount', '100000.00', '--json'], env).status,
        0,
      );
      await start();
    });

    after(async () => {
      await server?.kill();
      await receiver?.close();
      await setu?.stop();
      await cashfree?.stop();
      await db?.drop();
    });

    it('pays onsite and offsite pay-ins through signed Setu notifications: SUCCESS, utr = rrn, one signed callback each', async () => {
      for (const flow of ['onsite', 'offsite'] as const) {
        const created = await post(`/payments/${flow}/payin`, {
          money: { amount: 321.09 },
          merchant_order_no: `e2e-${flow}`,
          callback_url: receiver.url(`/${flow}`),
        });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const paid = await setu.pay(created.body.payment_id);
        assert.equal((await waitStatus('payin', created.body.payment_id, 'SUCCESS')).utr, paid.rrn);
        await receiver.waitFor(
          () => receiver.forPayment(created.body.payment_id).length === 1,
          'the callback',
        );
        const [cb] = receiver.forPayment(created.body.payment_id);
        assert.ok(cb!.verified, 'the callback is signed with the merchant secret');
        assert.equal(cb!.body.utr, paid.rrn);
      }
    });

    it('refuses a notification with a bad signature (401) through the real server', async () => {
      const raw = JSON.stringify({ eventType: 'payment.success', merchantReferenceId: 'x' });
      assert.equal(await setu.send(raw, 'bm90LWEtc2lnbmF0dXJl'), 401);
    });

    it('settles a payout by webhook, one transfer', async () => {
      const created = await post('/payments/payout', {
        money: { amount: 1500 },
        merchant_order_no: 'e2e-po-1',
        receiver: RECEIVER,
        callback_url: receiver.url('/po'),
      });
      assert.equal(created.status, 200);
      await waitStatus('payout', created.body.payment_id, 'SUCCESS');
      assert.equal(cashfree.created.get(created.body.payment_id), 1);
      await receiver.waitFor(() => receiver.forPayment(created.body.payment_id).length === 1, 'the callback');
    });

    it('sends one transfer when the process is killed between sending it and recording it', async () => {
      // Cashfree takes the transfer and answers 4 s later; the process dies before the answer.
      cashfree.fail('transfer_create', { delayMs: 4000 });
      cashfree.ending = 'never';
      const created = await post('/payments/payout', {
        money: { amount: 42 },
        merchant_order_no: 'e2e-po-kill',
        receiver: RECEIVER,
      });
      const id = created.body.payment_id;
      await until(() => cashfree.transfers.has(id), 'the transfer at Cashfree');
      await server.kill();
      const database = openDatabase(db.url);
      try {
        const row = await database.db
          .selectFrom('transactions')
          .select('status')
          .where('payment_id', '=', id)
          .executeTakeFirstOrThrow();
        assert.equal(row.status, 'PENDING', 'nothing recorded the submission');
      } finally {
        await database.close();
      }
      await start();
      await until(
        () => cashfree.requests.some((r) => r.method === 'GET' && r.query.get('transfer_id') === id),
        'the read back after the restart',
        30_000,
      );
      await waitStatus('payout', id, 'PROCESSING');
      cashfree.ending = 'SUCCESS';
      await cashfree.end(id, 'SUCCESS');
      await waitStatus('payout', id, 'SUCCESS');
      assert.equal(cashfree.created.get(id), 1);
      assert.equal(
        cashfree.requests.filter((r) => r.method === 'POST' && r.body?.transfer_id === id).length,
        1,
      );
      assert.ok(
        cashfree.requests.some((r) => r.method === 'GET' && r.query.get('transfer_id') === id),
        'read back after the restart',
      );
    });

    it('lists exceptions with paygate channels exceptions and checks credentials with paygate channels check', async () => {
      const created = await post('/payments/onsite/payin', {
        money: { amount: 10 },
        merchant_order_no: 'e2e-mismatch',
      });
      await setu.pay(created.body.payment_id, { amount: 999 });
      await until(() => {
        const r = cli(['channels', 'exceptions', '--json'], env);
        return r.json?.exceptions?.some(
          (e: any) => e.payment_id === created.body.payment_id && e.kind === 'amount_mismatch',
        );
      }, 'the exception listed');
      const listed = cli(['channels', 'exceptions'], env);
      assert.equal(listed.status, 0);
      assert.match(listed.stdout, /amount_mismatch/);
      const check = await cliAsync(['channels', 'check', '--json'], env);
      assert.equal(check.status, 0, check.stdout + check.stderr);
      assert.deepEqual(
        check.json.channels.map((c: any) => [c.channel, c.ok]),
        [
          ['setu', true],
          ['cashfree', true],
        ],
      );
      const bad = await cliAsync(['channels', 'check', '--json'], {
        ...env,
        CASHFREE_CLIENT_SECRET: 'wrong',
      });
      assert.equal(bad.status, 1);
      assert.deepEqual(
        bad.json.channels.map((c: any) => [c.channel, c.ok]),
        [
          ['setu', true],
          ['cashfree', false],
        ],
      );
      assert.ok(!bad.stdout.includes('wrong') && !check.stdout.includes(cashfree.clientSecret));
    });

    it('keeps the ledger clean and no secret in the logs', () => {
      const verify = cli(['ledger', 'verify', '--json'], env);
      assert.equal(verify.status, 0, verify.stdout);
      const logs = server.output();
      for (const secret of [
        setu.clientSecret,
        setu.webhookSecret,
        cashfree.clientSecret,
        RECEIVER.account_no,
      ])
        assert.ok(!logs.includes(secret), 'a secret or an account number is in the logs');
    });
  });
}
