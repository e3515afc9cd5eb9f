/**
 * Callbacks across real `paygate serve` processes: a kill -9 loses nothing (the attempt it cut off
 * counts and is recorded as interrupted), several processes on one PostgreSQL deliver each callback
 * exactly once, and the operator's CLI lists and resends.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { listAttempts } from '../../src/callbacks/deliveries.repository.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { MerchantService } from '../../src/merchants/merchants.service.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { freePort, ROOT, spawnServer, type ServerProcess } from '../support/process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

/** Like `cli`, without blocking this process (the receivers live here and must keep answering). */
function cliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number; json: any; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin/paygate.js'), ...args],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...env } },
      (err, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ status: err ? Number((err as { code?: unknown }).code ?? 1) : 0, json, stderr });
      },
    );
  });
}

async function call(server: ServerProcess, key: string, route: string, body: unknown): Promise<any> {
  const res = await fetch(`${server.baseUrl}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return json;
}

async function settledPayin(
  server: ServerProcess,
  key: string,
  orderNo: string,
  callbackUrl: string,
  completeOn = server,
): Promise<string> {
  const created = await call(server, key, '/payments/onsite/payin', {
    money: { amount: 500 },
    merchant_order_no: orderNo,
    callback_url: callbackUrl,
  });
  await call(completeOn, key, '/sandbox/payin/complete', {
    payment_id: created.payment_id,
    status: 'SUCCESS',
  });
  return created.payment_id;
}

async function until(ready: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const spawned: ServerProcess[] = [];
const usedPorts = new Set<number>();

/**
 * Starts `paygate serve` for the merchant with `key`; whatever a failing test leaves running is
 * killed when the file ends. spawnServer waits for /readyz on a port picked beforehand, and another
 * process (these suites run side by side) can take that port in between: then the server answering
 * is not this one. Each server gets a port no other server of this file had, and must know the key.
 */
async function serve(env: Record<string, string>, key: string): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    let port = await freePort();
    while (usedPorts.has(port)) port = await freePort();
    usedPorts.add(port);
    // Start-up is slow when the machine is busy; a slow start is not what these tests are about.
    const server = await spawnServer({ ...env, PORT: String(port) }, { timeoutMs: 60_000 });
    spawned.push(server);
    const res = await fetch(`${server.baseUrl}/wallet/balance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.status === 200 && server.child.exitCode === null) return server;
    await server.kill();
    if (attempt === 3) throw new Error(`paygate did not get a port of its own:\n${server.output()}`);
  }
}

after(() => Promise.all(spawned.map((s) => s.kill())));

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

// The suites below mostly wait (on leases, retries, process start-up), so they run side by side;
// the tests inside each run in order (they share a server).
const skips = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };

describe('callbacks across processes', { concurrency: true }, () => {
  for (const kind of DATABASES) {
    describe(`callbacks across a kill -9 on ${kind}`, { skip: skips[kind], concurrency: false }, () => {
      const INTERVAL_MS = 4000;
      let testDb: TestDatabase;
      let database: Database;
      let receiver: Receiver;
      let env: Record<string, string>;
      let key: string;
      let server: ServerProcess | null = null;

      before(async () => {
        testDb = await createDatabase(kind);
        receiver = await startReceiver({
          answer: (req, nth) => {
            if (req.path === '/flaky') return nth === 1 ? 500 : 200;
            if (req.path === '/slow') return nth === 1 ? 'hang' : 200;
            return 200;
          },
        });
        env = {
          DATABASE_URL: testDb.url,
          ALLOW_PRIVATE_CALLBACK_URLS: 'true',
          CALLBACK_RETRY_INTERVAL_MS: String(INTERVAL_MS),
          // Short, so the lease of the attempt cut off by the kill runs out soon; long enough that
          // the retry's answer still arrives in time on a busy machine.
          CALLBACK_TIMEOUT_MS: '3000',
          CALLBACK_MAX_RETRIES: '3',
          // On PostgreSQL the longest poll there is: a CLI resend must arrive through NOTIFY, not a poll.
          WORKER_POLL_MS: kind === 'postgres' ? '60000' : '500',
        };
        database = openDatabase(testDb.url);
        await migrate(database);
        key = (await new MerchantService(database.db).create({ name: 'Crash Shop' })).api_key;
      });

      after(async () => {
        await server?.stop();
        await database.close();
        await receiver.close();
        await testDb.drop();
      });

      const deliveryOf = (paymentId: string) =>
        database.db
          .selectFrom('callback_deliveries')
          .selectAll()
          .where('payment_id', '=', paymentId)
          .orderBy('created_at')
          .execute();

      it('delivers after a restart what was pending or in flight when the process was killed', async (t) => {
        server = await serve(env, key);
        const flaky = await Promise.all(
          [1, 2, 3, 4, 5].map((n) => settledPayin(server!, key, `flaky-${n}`, receiver.url('/flaky'))),
        );
        // Between attempts: every first attempt was answered 500 and recorded, the retries are 4 s away.
        await until(async () => {
          const rows = await Promise.all(flaky.map(deliveryOf));
          return rows.every((r) => r[0]?.attempts === 1);
        }, 'first attempts recorded');
        // In flight: the receiver holds this one's first attempt open while the process dies.
        const slow = await settledPayin(server, key, 'slow-1', receiver.url('/slow'));
        await receiver.waitFor(() => receiver.forPayment(slow).length === 1, 'the held attempt');
        await server.kill();
        server = null;
        const killedAt = Date.now();
        assert.ok(
          flaky.every((id) => receiver.forPayment(id).length === 1),
          'no retry went out before the kill',
        );

        server = await serve(env, key);
        await receiver.waitFor(
          () => [...flaky, slow].every((id) => receiver.forPayment(id).length === 2),
          'callbacks after the restart',
          30_000,
        );
        for (const id of flaky) {
          const seen = receiver.forPayment(id);
          assert.deepEqual(
            seen.map((r) => r.attempt),
            [1, 2],
          );
          assert.ok(
            seen[1]!.at - seen[0]!.at >= INTERVAL_MS,
            'the retry kept its schedule across the restart',
          );
          assert.equal(seen[1]!.raw, seen[0]!.raw);
        }
        // The attempt in flight counted when it was claimed: once its lease ran out the next claim
        // recorded it as interrupted, and the retry went out an interval later as attempt 2.
        const slowSeen = receiver.forPayment(slow);
        assert.deepEqual(
          slowSeen.map((r) => r.attempt),
          [1, 2],
        );
        assert.ok(slowSeen[1]!.at - slowSeen[0]!.at >= INTERVAL_MS, 'the retry kept the interval');
        await until(
          async () =>
            (await Promise.all([...flaky, slow].map(deliveryOf))).every((r) => r[0]?.status === 'delivered'),
          'delivered rows',
        );
        const [slowDelivery] = await deliveryOf(slow);
        assert.equal(slowDelivery!.attempts, 2);
        assert.deepEqual(
          (await listAttempts(database.db, slowDelivery!.id)).map((a) => [
            a.attempt_no,
            a.http_status,
            a.error_kind,
          ]),
          [
            [1, null, 'interrupted'],
            [2, 200, null],
          ],
        );
        t.diagnostic(
          `after kill -9: retries arrived ${receiver.forPayment(flaky[0]!)[1]!.at - killedAt} ms later, the attempt in flight ${receiver.forPayment(slow)[1]!.at - killedAt} ms later (${kind})`,
        );
      });

      it('lists deliveries and resends from the CLI to the running server', async (t) => {
        server ??= await serve(env, key);
        const id = await settledPayin(server, key, 'cli-1', receiver.url('/ok'));
        await receiver.waitFor(() => receiver.forPayment(id).length === 1, 'the first callback');
        await until(async () => (await deliveryOf(id))[0]?.status === 'delivered', 'delivered');

        const resent = await cliAsync(['callbacks', 'resend', id, '--json'], env);
        assert.equal(resent.status, 0, resent.stderr);
        assert.equal(resent.json.success, true);
        assert.equal(resent.json.payment_id, id);
        assert.equal(resent.json.status, 'pending');
        assert.match(resent.json.delivery_id, /^cbd_/);
        await receiver.waitFor(() => receiver.forPayment(id).length === 2, 'the resent callback');
        t.diagnostic(
          `CLI resend reached the receiver ${receiver.forPayment(id)[1]!.at - (await deliveryOf(id))[1]!.created_at} ms after the CLI committed it (${kind})`,
        );
        assert.equal(receiver.forPayment(id)[1]!.attempt, 1);
        await until(
          async () => (await deliveryOf(id)).every((d) => d.status === 'delivered'),
          'the resend delivered',
        );

        const all = await cliAsync(['callbacks', 'list', '--json'], env);
        assert.equal(all.status, 0, all.stderr);
        const mine = all.json.deliveries.filter((d: any) => d.payment_id === id);
        assert.deepEqual(
          mine.map((d: any) => d.delivery_id).sort(),
          (await deliveryOf(id)).map((d) => d.id).sort(),
        );
        for (const d of mine) {
          assert.equal(d.status, 'delivered');
          assert.equal(d.attempts, 1);
          assert.equal(d.url, receiver.url('/ok'));
        }
        const open = await call(server, key, '/payments/onsite/payin', {
          money: { amount: 500 },
          merchant_order_no: 'cli-2',
          callback_url: receiver.url('/ok'),
        });
        const [failedOnly, unknown, notFinal] = await Promise.all([
          cliAsync(['callbacks', 'list', '--status', 'failed', '--json'], env),
          cliAsync(['callbacks', 'resend', 'X'.repeat(32), '--json'], env),
          cliAsync(['callbacks', 'resend', open.payment_id, '--json'], env),
        ]);
        assert.equal(failedOnly.status, 0, failedOnly.stderr);
        assert.deepEqual(failedOnly.json, { deliveries: [] });
        assert.equal(unknown.status, 1);
        assert.equal(unknown.json.error.code, 'PAYMENT_NOT_FOUND');
        assert.match(unknown.json.error.message, /payment_id/);
        assert.equal(notFinal.status, 1);
        assert.equal(notFinal.json.error.code, 'INVALID_STATE');
        assert.match(notFinal.json.error.message, /not final/);
      });
    });
  }

  describe(
    'callbacks from three processes on one PostgreSQL',
    { skip: skips.postgres, concurrency: false },
    () => {
      const COUNT = 300;
      let testDb: TestDatabase;
      let receiver: Receiver;
      let servers: ServerProcess[] = [];
      let database: Database;

      before(async () => {
        testDb = await createDatabase('postgres');
        receiver = await startReceiver();
        database = openDatabase(testDb.url);
      });

      after(async () => {
        await Promise.all(servers.map((s) => s.stop()));
        await database.close();
        await receiver.close();
        await testDb.drop();
      });

      it('delivers each of 300 callbacks exactly once', async (t) => {
        const env = {
          DATABASE_URL: testDb.url,
          ALLOW_PRIVATE_CALLBACK_URLS: 'true',
          CALLBACK_CONCURRENCY: '16',
        };
        await migrate(database);
        const key = (await new MerchantService(database.db).create({ name: 'Busy Shop' })).api_key;
        const started = await Promise.allSettled([1, 2, 3].map(() => serve(env, key)));
        servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        for (const s of started) if (s.status === 'rejected') throw s.reason;

        const ids: string[] = [];
        const LANES = 12;
        await Promise.all(
          Array.from({ length: LANES }, async (_, lane) => {
            for (let n = lane; n < COUNT; n += LANES) {
              // Created on one process, settled on another: every process settles a third of them.
              ids.push(
                await settledPayin(
                  servers[n % 3]!,
                  key,
                  `busy-${n}`,
                  receiver.url('/busy'),
                  servers[(n + 1) % 3]!,
                ),
              );
            }
          }),
        );
        await receiver.waitFor(
          () => new Set(receiver.received.map((r) => r.body?.payment_id)).size === COUNT,
          `${COUNT} callbacks`,
          60_000,
        );
        await until(async () => {
          const pending = await database.db
            .selectFrom('callback_deliveries')
            .select('id')
            .where('status', '!=', 'delivered')
            .execute();
          return pending.length === 0;
        }, 'all deliveries recorded');
        // A duplicate would have been sent by now: every row is released and nothing is due.
        await new Promise((r) => setTimeout(r, 500));

        assert.equal(receiver.received.length, COUNT, 'no callback arrived twice');
        assert.deepEqual(new Set(receiver.received.map((r) => r.body.payment_id)), new Set(ids));
        assert.ok(receiver.received.every((r) => r.attempt === 1));
        const rows = await database.db
          .selectFrom('callback_deliveries')
          .select(['status', 'attempts'])
          .execute();
        assert.equal(rows.length, COUNT);
        assert.ok(rows.every((r) => r.status === 'delivered' && r.attempts === 1));

        const timing = await database.db
          .selectFrom('callback_attempts')
          .innerJoin('callback_deliveries', 'callback_deliveries.id', 'callback_attempts.delivery_id')
          .innerJoin('transactions', 'transactions.payment_id', 'callback_deliveries.payment_id')
          .select(['transactions.payment_id', 'transactions.finalized_at', 'callback_attempts.started_at'])
          .execute();
        const byPayment = new Map(timing.map((r) => [r.payment_id, r]));
        const sorted = (xs: number[]) => xs.sort((a, b) => a - b);
        const pickedUp = sorted(timing.map((r) => r.started_at - r.finalized_at!));
        const arrived = sorted(
          receiver.received.map((r) => r.at - byPayment.get(r.body.payment_id)!.finalized_at!),
        );
        const summary = (xs: number[]) =>
          `p50 ${percentile(xs, 50)} ms, p95 ${percentile(xs, 95)} ms, max ${xs.at(-1)} ms`;
        assert.ok(
          servers.every((s) => s.child.exitCode === null),
          'three processes served to the end',
        );
        // Keep-alive: each process reuses its connections, at most CALLBACK_CONCURRENCY of them at once.
        assert.ok(
          receiver.connections() <= 3 * 16,
          `${receiver.connections()} connections for ${COUNT} callbacks`,
        );
        t.diagnostic(`${COUNT} callbacks, 3 processes: final status → attempt started: ${summary(pickedUp)}`);
        t.diagnostic(
          `final status → arrival at the receiver: ${summary(arrived)}; ${receiver.connections()} connections`,
        );
      });
    },
  );
});
