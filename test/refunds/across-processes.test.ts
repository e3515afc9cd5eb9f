/**
 * Refunds across real `paygate serve` processes: on one PostgreSQL, three processes asked for the
 * same refund at once create it once and call it back once, refunds of one pay-in spread over them
 * never pass its amount, and a refund that waits for its wallet sees what was committed meanwhile
 * (its pay-in's earlier refunds, its pay-in's settlement); on either database, refunds in flight
 * when a process is killed (kill -9) settle exactly once after a restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { buildServices } from '../../src/services.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { spawnServer, type ServerProcess } from '../support/process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

async function call(base: string, key: string, route: string, body: unknown) {
  const res = await fetch(`${base}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    body: JSON.parse(text),
    replayed: res.headers.get('idempotent-replayed'),
  };
}

async function until(what: string, ready: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A sandbox merchant with a SUCCESS pay-in of `amount` rupees made through `base`; its payment_id. */
async function paidIn(base: string, key: string, amount: number, orderNo: string, callbackUrl?: string) {
  const created = await call(base, key, '/payments/onsite/payin', {
    money: { amount },
    merchant_order_no: orderNo,
    ...(callbackUrl && { callback_url: callbackUrl }),
  });
  assert.equal(created.status, 200, created.text);
  const done = await call(base, key, '/sandbox/payin/complete', {
    payment_id: created.body.payment_id,
    status: 'SUCCESS',
  });
  assert.equal(done.status, 200, done.text);
  return created.body.payment_id as string;
}

describe('refunds from three processes on one PostgreSQL', { skip: await skipFor('postgres') }, () => {
  let testDb: TestDatabase;
  let database: Database;
  let receiver: Receiver;
  let servers: ServerProcess[] = [];
  let key = '';
  let env: Record<string, string>;

  before(async () => {
    testDb = await createDatabase('postgres');
    database = openDatabase(testDb.url);
    receiver = await startReceiver();
    env = {
      DATABASE_URL: testDb.url,
      ALLOW_PRIVATE_CALLBACK_URLS: 'true',
      SANDBOX_PAYOUT_SETTLE_MS: '300',
      WORKER_POLL_MS: '100',
    };
    await migrate(database);
    key = (await buildServices(loadConfig(env), database).merchants.create({ name: 'Three Shop' })).api_key;
    servers = await Promise.all([1, 2, 3].map(() => spawnServer(env, { timeoutMs: 60_000 })));
  });

  /**
   * Sessions of this database waiting to lock a wallet (a refund batch's first statement; a
   * settlement of an earlier refund, also held up, updates instead). The second in line waits on the
   * first, not on the holder.
   */
  const lockingWallets = async () =>
    Number(
      (
        await sql<{ n: string }>`select count(*) as n from pg_stat_activity
          where datname = current_database() and cardinality(pg_blocking_pids(pid)) > 0
            and query like '%from "wallets"%for update%'`.execute(database.db)
      ).rows[0]!.n,
    );

  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await database.close();
    await receiver.close();
    await testDb.drop();
  });

  it('creates a refund asked for on three processes at once exactly once, and calls it back once', async () => {
    const paymentId = await paidIn(servers[0]!.baseUrl, key, 100, 'three-1', receiver.url('/three'));
    const body = { payment_id: paymentId, money: { amount: 30 }, merchant_refund_no: 'same-refund' };
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(servers[i % 3]!.baseUrl, key, '/payments/refund', body)),
    );
    assert.ok(
      answers.every((a) => a.status === 200),
      JSON.stringify(answers.map((a) => a.text)),
    );
    assert.equal(answers.filter((a) => a.replayed === 'true').length, 11);
    assert.equal(new Set(answers.map((a) => a.text)).size, 1, 'every answer byte for byte the same');
    const refundId = answers[0]!.body.refund_id as string;
    const rows = await database.db
      .selectFrom('transactions')
      .select('payment_id')
      .where('refund_of', '=', paymentId)
      .execute();
    assert.deepEqual(
      rows.map((r) => r.payment_id),
      [refundId],
    );
    await receiver.waitFor(() => receiver.forPayment(refundId).length === 1, 'the refund callback', 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(receiver.forPayment(refundId).length, 1, 'called back once');
    assert.equal(receiver.forPayment(refundId)[0]!.body.status, 'SUCCESS');
    const balance = await call(servers[2]!.baseUrl, key, '/wallet/balance', {});
    assert.deepEqual(balance.body, { currency: 'INR', available: 70, held: 0 });
  });

  it('never refunds more than the pay-in when its refunds are spread over three processes', async () => {
    const paymentId = await paidIn(servers[1]!.baseUrl, key, 100, 'three-2');
    // Enough besides the pay-in that only the pay-in's amount can stop a refund.
    const services = buildServices(loadConfig(env), database);
    const merchant = await database.db.selectFrom('api_keys').select('merchant_id').executeTakeFirstOrThrow();
    await services.wallets.topUp(merchant.merchant_id, 'INR', 1_000_000);
    const answers = await Promise.all(
      Array.from({ length: 45 }, (_, i) =>
        call(servers[i % 3]!.baseUrl, key, '/payments/refund', {
          payment_id: paymentId,
          money: { amount: 10 },
          merchant_refund_no: `spread-${i}`,
        }),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 10);
    assert.ok(
      answers
        .filter((a) => a.status !== 200)
        .every((a) => a.status === 400 && a.body.error.error_code === 'REFUND_EXCEEDS_PAYMENT'),
    );
    assert.deepEqual((await services.wallets.verify()).problems, []);
  });

  it('writes two processes’ refunds of one pay-in one after the other, whatever the timing', async () => {
    // Both requests are made to wait on the merchant's wallet, which another transaction holds: once
    // it lets go, a writer that read the pay-in's refunds before taking the wallet would accept both,
    // 160.00 of a 100.00 pay-in (and one that does not take it first never waits here).
    const paymentId = await paidIn(servers[0]!.baseUrl, key, 100, 'held-wallet');
    const merchant = await database.db.selectFrom('api_keys').select('merchant_id').executeTakeFirstOrThrow();
    const answers = await database.db.transaction().execute(async (tx) => {
      await sql`select available from wallets where merchant_id = ${merchant.merchant_id} for update`.execute(
        tx,
      );
      const asked = [0, 1].map((i) =>
        call(servers[i]!.baseUrl, key, '/payments/refund', {
          payment_id: paymentId,
          money: { amount: 80 },
          merchant_refund_no: `held-${i}`,
        }),
      );
      await until(
        'both refund batches waiting for the wallet',
        async () => (await lockingWallets()) === 2,
        30_000,
      );
      return asked;
    });
    const [first, second] = await Promise.all(answers);
    assert.deepEqual([first!.status, second!.status].sort(), [200, 400], `${first!.text} ${second!.text}`);
    const refused = first!.status === 400 ? first! : second!;
    assert.equal(refused.body.error.error_code, 'REFUND_EXCEEDS_PAYMENT');
    assert.equal(refused.body.error.metadata.refundable, 20);
  });

  it('refunds a pay-in that settles while the refund waits for its wallet', async () => {
    // The refund batch's statement reads the pay-in (PENDING) before its wallet lock is granted; the
    // settlement that holds the wallet commits SUCCESS meanwhile. The batch must see SUCCESS.
    const created = await call(servers[0]!.baseUrl, key, '/payments/onsite/payin', {
      money: { amount: 50 },
      merchant_order_no: 'settles-meanwhile',
    });
    assert.equal(created.status, 200, created.text);
    const paymentId = created.body.payment_id as string;
    const merchant = await database.db.selectFrom('api_keys').select('merchant_id').executeTakeFirstOrThrow();
    const settlement = buildServices(loadConfig(env), database).finality;
    const asked = await database.db.transaction().execute(async (tx) => {
      await sql`select available from wallets where merchant_id = ${merchant.merchant_id} for update`.execute(
        tx,
      );
      const refund = call(servers[1]!.baseUrl, key, '/payments/refund', {
        payment_id: paymentId,
        money: { amount: 20 },
        merchant_refund_no: 'settles-meanwhile-1',
      });
      await until(
        'the refund batch waiting for the wallet',
        async () => (await lockingWallets()) === 1,
        30_000,
      );
      const settled = await settlement.settleIn(
        tx,
        paymentId,
        { status: 'SUCCESS', utr: '123456789012', channelTxnId: 'SBX-meanwhile' },
        'test',
      );
      assert.equal(settled?.txn.status, 'SUCCESS');
      // In an array: a promise returned from here would be awaited before the commit it waits for.
      return [refund];
    });
    const answer = await asked[0]!;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.status, 'PENDING');
    const refunds = await database.db
      .selectFrom('transactions')
      .select(['amount', 'status'])
      .where('refund_of', '=', paymentId)
      .execute();
    assert.equal(refunds.length, 1);
    assert.equal(refunds[0]!.amount, 2000);
    assert.notEqual(refunds[0]!.status, 'FAILED');
  });
});

for (const kind of DATABASES) {
  describe(`refunds across a kill -9 on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('settles every refund in flight exactly once after kill -9 and a restart', async () => {
      const testDb = await createDatabase(kind);
      const receiver = await startReceiver();
      const env = {
        DATABASE_URL: testDb.url,
        SANDBOX_PAYOUT_SETTLE_MS: '1500',
        WORKER_POLL_MS: '100',
        ALLOW_PRIVATE_CALLBACK_URLS: 'true',
      };
      const database = openDatabase(testDb.url);
      let server: ServerProcess | undefined;
      try {
        await migrate(database);
        const services = buildServices(loadConfig(env), database);
        const { api_key: key } = await services.merchants.create({ name: 'Crash Shop' });
        server = await spawnServer(env);
        const paymentId = await paidIn(server.baseUrl, key, 100, 'crash-1', receiver.url('/crash'));
        const amounts = [10, 5.13, 20, 7.5, 3.13, 12];
        const created = await Promise.all(
          amounts.map((amount, i) =>
            call(server!.baseUrl, key, '/payments/refund', {
              payment_id: paymentId,
              money: { amount },
              merchant_refund_no: `crash-${i}`,
            }),
          ),
        );
        assert.ok(
          created.every((c) => c.status === 200),
          JSON.stringify(created.map((c) => c.text)),
        );
        const ids = created.map((c) => c.body.refund_id as string);
        const statuses = async (base: string) =>
          Promise.all(
            ids.map(
              async (refund_id) =>
                (await call(base, key, '/payments/refund_status', { refund_id })).body.status,
            ),
          );

        const before = await statuses(server.baseUrl);
        assert.ok(
          before.some((s) => s === 'PENDING' || s === 'PROCESSING'),
          `in flight: ${before.join(',')}`,
        );
        await server.kill();

        server = await spawnServer(env);
        const again = server.baseUrl;
        // A refund claimed at the moment of the kill waits for its lease to run out.
        await until('every refund final after the restart', async () =>
          (await statuses(again)).every((s) => s === 'SUCCESS' || s === 'FAILED'),
        );
        assert.deepEqual(
          await statuses(again),
          amounts.map((a) => (Math.round(a * 100) % 100 === 13 ? 'FAILED' : 'SUCCESS')),
        );
        const events = await database.db
          .selectFrom('transaction_events')
          .select('payment_id')
          .where('payment_id', 'in', ids)
          .execute();
        assert.equal(events.length, ids.length, 'one final event per refund');
        const journals = await database.db
          .selectFrom('ledger_entries')
          .select('kind')
          .where('payment_id', 'in', ids)
          .where('kind', 'in', ['refund_success', 'refund_release'])
          .where('account', '=', 'held')
          .execute();
        assert.equal(journals.length, ids.length, 'one settling journal per refund');
        await receiver.waitFor(
          () => ids.every((id) => receiver.forPayment(id).length >= 1),
          'callbacks',
          30_000,
        );
        const balance = await call(again, key, '/wallet/balance', {});
        // 100.00 in; 49.50 refunded, the two FAILED refunds (8.26) back.
        assert.deepEqual(balance.body, { currency: 'INR', available: 50.5, held: 0 });
        assert.deepEqual((await services.wallets.verify()).problems, []);
      } finally {
        await server?.stop();
        await receiver.close();
        await database.close();
        await testDb.drop();
      }
    });
  });
}
