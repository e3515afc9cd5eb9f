/**
 * Money under pressure: concurrent payouts can never overdraw (in one process on each database,
 * and spread over three real gateway processes on one PostgreSQL), and payouts in flight when a
 * process is killed reach their final status exactly once after a restart.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildServices } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { createDatabase, createPostgres, DATABASES, postgresSkip } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';
import { cli, spawnServer, type ServerProcess } from '../support/process.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
const FINAL = new Set(['SUCCESS', 'FAILED']);

/** POSTs JSON to a real server the way a merchant's HTTP client would. */
async function call(
  baseUrl: string,
  key: string,
  path: string,
  body: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** Events recorded per payment id (one row is one status change to a final status). */
async function eventsPerPayment(database: Database, ids: string[]): Promise<Map<string, number>> {
  const rows = await database.db
    .selectFrom('transaction_events')
    .select('payment_id')
    .where('payment_id', 'in', ids)
    .execute();
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.payment_id, (counts.get(r.payment_id) ?? 0) + 1);
  return counts;
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

for (const kind of DATABASES) {
  describe(`concurrent payouts in one process on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, {
      worker: true,
      env: { SANDBOX_PAYOUT_SETTLE_MS: '50', WORKER_POLL_MS: '100' },
    });

    it('accepts exactly 100 of 200 concurrent payouts of 10.00 against 1,000.00 and never overdraws', async () => {
      const g = gw();
      await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 100_000);
      const replies = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          g.post('/payments/payout', {
            money: { amount: 10, currency: 'INR' },
            merchant_order_no: `c200-${i}`,
            receiver: RECEIVER,
          }),
        ),
      );
      const accepted = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status === 400);
      assert.equal(accepted.length, 100);
      assert.equal(refused.length, 100);
      for (const r of accepted) assert.equal(r.body.status, 'PENDING');
      for (const r of refused) {
        assert.equal(r.body.error.error_code, 'INSUFFICIENT_BALANCE');
        assert.equal(r.body.error.metadata.requested, 10);
        assert.equal(r.body.error.metadata.available, 0);
      }
      const right = await g.post('/wallet/balance', {});
      assert.equal(right.body.available, 0);

      const ids = accepted.map((r) => r.body.payment_id as string);
      const statuses = async () =>
        Promise.all(
          ids.map(async (payment_id) => (await g.post('/payments/payout_status', { payment_id })).body),
        );
      await waitUntil(
        'every payout to be final',
        async () => (await statuses()).every((s) => FINAL.has(s.status)),
        60_000,
      );
      const paid = (await statuses())
        .filter((s) => s.status === 'SUCCESS')
        .reduce((sum, s) => sum + Math.round(s.money.amount * 100), 0);
      const b = (await g.post('/wallet/balance', {})).body;
      assert.equal(b.available, 0);
      assert.equal(Math.round(b.held * 100) + paid, 100_000);
      assert.equal(paid, 100_000);
      const { n } = await g.database.db
        .selectFrom('transactions')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('merchant_id', '=', g.merchant.merchant_id)
        .where('kind', '=', 'payout')
        .executeTakeFirstOrThrow();
      assert.equal(Number(n), 100);
      assert.deepEqual([...(await eventsPerPayment(g.database, ids)).values()], Array(100).fill(1));
      assert.deepEqual((await g.paygate.services.wallets.verify()).problems, []);
    });
  });
}

describe(
  'concurrent payouts over three gateway processes on one PostgreSQL',
  { skip: await postgresSkip() },
  () => {
    it('accepts exactly 100 of 200 payouts of 10.00 against 1,000.00, settles each once, and the ledger verifies', async () => {
      const db = await createPostgres();
      const env = { DATABASE_URL: db.url, SANDBOX_PAYOUT_SETTLE_MS: '300', WORKER_POLL_MS: '100' };
      const servers: ServerProcess[] = [];
      const database = openDatabase(db.url);
      try {
        const created = cli(['merchant', 'create', '--name', 'Three Process Shop', '--json'], env);
        assert.equal(created.status, 0, created.stderr);
        const { merchant_id, api_key } = created.json;
        const credit = cli(
          ['wallet', 'credit', '--merchant', merchant_id, '--amount', '1000.00', '--json'],
          env,
        );
        assert.equal(credit.status, 0, credit.stderr);
        assert.equal(credit.json.available, 1000);

        servers.push(...(await Promise.all([1, 2, 3].map(() => spawnServer(env)))));
        const payout = (i: number) =>
          call(servers[i % 3]?.baseUrl ?? '', api_key, '/payments/payout', {
            money: { amount: 10 },
            merchant_order_no: `p3-${i}`,
            receiver: RECEIVER,
          });
        // One payout through each process first, so that each takes part whichever process's
        // batch reaches the wallet first; then the other 197 race for what is left.
        const first = await Promise.all([0, 1, 2].map(payout));
        const replies = [
          ...first,
          ...(await Promise.all(Array.from({ length: 197 }, (_, i) => payout(i + 3)))),
        ];
        const accepted = replies.filter((r) => r.status === 200);
        assert.equal(accepted.length, 100);
        assert.equal(
          replies.filter((r) => r.status === 400 && r.body.error.error_code === 'INSUFFICIENT_BALANCE')
            .length,
          100,
        );
        // Every process took part.
        for (let s = 0; s < 3; s++)
          assert.ok(
            replies.some((r, i) => i % 3 === s && r.status === 200),
            `server ${s + 1} accepted some`,
          );

        const ids = accepted.map((r) => r.body.payment_id as string);
        await waitUntil(
          'every payout to be final',
          async () => {
            const rows = await database.db
              .selectFrom('transactions')
              .select('status')
              .where('payment_id', 'in', ids)
              .execute();
            return rows.every((r) => FINAL.has(r.status));
          },
          60_000,
        );
        for (const [i, id] of ids.entries()) {
          const status = await call(servers[i % 3]?.baseUrl ?? '', api_key, '/payments/payout_status', {
            payment_id: id,
          });
          assert.equal(status.body.status, 'SUCCESS');
          assert.match(status.body.utr, /^\d{12}$/);
        }
        assert.deepEqual([...(await eventsPerPayment(database, ids)).values()], Array(100).fill(1));

        const balance = await call(servers[0]?.baseUrl ?? '', api_key, '/wallet/balance', {});
        assert.deepEqual(balance.body, { currency: 'INR', available: 0, held: 0 });
        assert.deepEqual((await buildServices(loadConfig(env), database).wallets.verify()).problems, []);
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
        await database.close();
        await db.drop();
      }
    });
  },
);

for (const kind of DATABASES) {
  describe(`payouts across a crash and restart on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('brings every payout in flight to its final status exactly once after kill -9 and a restart', async () => {
      const testDb = await createDatabase(kind);
      const env = { DATABASE_URL: testDb.url, SANDBOX_PAYOUT_SETTLE_MS: '1500', WORKER_POLL_MS: '100' };
      const database = openDatabase(testDb.url);
      let server: ServerProcess | undefined;
      try {
        await migrate(database);
        const services = buildServices(loadConfig(env), database);
        const merchant = await services.merchants.create({ name: 'Restart Shop' });
        await services.wallets.topUp(merchant.merchant_id, 'INR', 100_000);

        server = await spawnServer(env);
        const base = server.baseUrl;
        const amounts = Array.from({ length: 12 }, (_, i) => 10 + i * 5.55);
        const replies = await Promise.all(
          amounts.map((amount, i) =>
            call(base, merchant.api_key, '/payments/payout', {
              money: { amount: Number(amount.toFixed(2)) },
              merchant_order_no: `rs-${i}`,
              receiver: { ...RECEIVER, account_no: i % 3 === 0 ? '4444440000' : RECEIVER.account_no },
            }),
          ),
        );
        assert.ok(
          replies.every((r) => r.status === 200 && r.body.status === 'PENDING'),
          JSON.stringify(replies),
        );
        const ids = replies.map((r) => r.body.payment_id as string);
        const before = await Promise.all(
          ids.map(
            async (payment_id) =>
              (await call(base, merchant.api_key, '/payments/payout_status', { payment_id })).body.status,
          ),
        );
        assert.ok(
          before.some((s) => !FINAL.has(s)),
          `some payouts in flight: ${before.join(',')}`,
        );

        await server.kill();
        server = await spawnServer(env);
        const again = server.baseUrl;
        const statuses = async () =>
          Promise.all(
            ids.map(
              async (payment_id) =>
                (await call(again, merchant.api_key, '/payments/payout_status', { payment_id })).body,
            ),
          );
        // A payout claimed at the moment of the kill waits for its lease (30 s) to run out.
        await waitUntil(
          'every payout to be final after the restart',
          async () => (await statuses()).every((s) => FINAL.has(s.status)),
          90_000,
        );

        let paid = 0;
        for (const [i, s] of (await statuses()).entries()) {
          assert.equal(s.status, i % 3 === 0 ? 'FAILED' : 'SUCCESS', `payout ${i}`);
          if (s.status === 'SUCCESS') paid += Math.round(s.money.amount * 100);
        }
        assert.deepEqual([...(await eventsPerPayment(database, ids)).values()], Array(ids.length).fill(1));
        const balance = await call(again, merchant.api_key, '/wallet/balance', {});
        assert.equal(balance.body.held, 0);
        assert.equal(Math.round(balance.body.available * 100), 100_000 - paid);
        assert.deepEqual((await services.wallets.verify()).problems, []);
      } finally {
        await server?.stop();
        await database.close();
        await testDb.drop();
      }
    });
  });
}
