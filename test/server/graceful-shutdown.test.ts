/**
 * Graceful shutdown: SIGTERM lets a request that is in flight finish before the process exits.
 * The request is held in flight deterministically by a row lock taken from outside (PostgreSQL).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createPostgres } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { cli, spawnServer } from '../support/process.ts';

describe('graceful shutdown', { skip: await skipFor('postgres') }, () => {
  it('on SIGTERM finishes the request in flight, then exits 0', async () => {
    const db = await createPostgres();
    const env = { DATABASE_URL: db.url, SANDBOX_PAYOUT_SETTLE_MS: '600000' };
    const created = cli(['merchant', 'create', '--name', 'Shutdown Shop', '--json'], env);
    assert.equal(created.status, 0, created.stderr);
    const merchant = created.json;
    assert.equal(
      cli(['wallet', 'credit', '--merchant', merchant.merchant_id, '--amount', '100.00', '--json'], env)
        .status,
      0,
    );
    const server = await spawnServer(env);
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select * from wallets where merchant_id = $1 for update', [merchant.merchant_id]);

      const inFlight = fetch(`${server.baseUrl}/payments/payout`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          money: { amount: 10 },
          merchant_order_no: 'shutdown-1',
          receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
        }),
      });
      // Wait until the gateway's payout transaction is blocked on the wallet row.
      for (let i = 0; ; i++) {
        const { rows } = await locker.query(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        );
        if (rows[0].n > 0) break;
        assert.ok(i < 200, 'the payout request never reached the database');
        await new Promise((r) => setTimeout(r, 50));
      }

      const exited = new Promise<number | null>((resolve) =>
        server.child.once('exit', (code) => resolve(code)),
      );
      server.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(server.child.exitCode, null, 'the process waits for the request in flight');

      await locker.query('commit');
      const res = await inFlight;
      assert.equal(res.status, 200);
      const body = await res.json();
      assert.equal(body.status, 'PENDING');
      // Promptly: a keep-alive connection that carried the request must not hold the exit (bounded wait).
      const ended = await Promise.race([
        exited,
        new Promise((r) => setTimeout(() => r('still running'), 10_000)),
      ]);
      assert.equal(ended, 0);
      await assert.rejects(fetch(`${server.baseUrl}/healthz`));
    } finally {
      await locker.end().catch(() => {});
      await server.kill();
      await db.drop();
    }
  });
});
