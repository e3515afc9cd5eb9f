/**
 * The gateway when its database goes away and comes back: every PostgreSQL connection of a running
 * `paygate serve` killed under load, a database that cannot be reached at all (through a proxy that
 * refuses or swallows connections), `serve` started before its database, the CLI on a database it
 * cannot reach, and SQLite on a full disk. The process stays up, answers 503 with Retry-After while
 * it cannot write, loses nothing it accepted, does nothing twice, and resumes without a restart.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { buildApp, type Paygate } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { buildServices } from '../../src/services.ts';
import { createPostgres, PG_ADMIN_URL, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { freePort, ROOT, spawnServer, type ServerProcess } from '../support/process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
}

async function post(baseUrl: string, key: string, route: string, body: unknown): Promise<Answer> {
  const res = await fetch(`${baseUrl}${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: parsed };
}

/** Kills every connection to database `name` and nothing else, so the other suites running now are not disturbed. */
async function terminateConnections(name: string): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    const r = await admin.query(
      'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    );
    return r.rows[0].n as number;
  } finally {
    await admin.end();
  }
}

/** How many connections to database `name` are listening for queued callbacks. */
async function listeners(name: string): Promise<number> {
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    const r = await admin.query(
      `select count(*)::int as n from pg_stat_activity where datname = $1 and query = 'LISTEN paygate_callbacks'`,
      [name],
    );
    return r.rows[0].n as number;
  } finally {
    await admin.end();
  }
}

async function until(ready: () => Promise<boolean>, what: string, timeoutMs: number): Promise<number> {
  const start = Date.now();
  while (!(await ready())) {
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - start;
}

function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

/** Runs `paygate ARGS` without blocking this process. */
function paygate(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin/paygate.js'), ...args],
      { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ status: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const pgSkip = await skipFor('postgres');

describe('PostgreSQL connections killed under load', { skip: pgSkip }, () => {
  let testDb: TestDatabase;
  let setup: Database;
  let receiver: Receiver;
  let server: ServerProcess;
  let key: string;
  let merchantId: string;

  before(async () => {
    testDb = await createPostgres();
    setup = openDatabase(testDb.url);
    await migrate(setup);
    const services = buildServices(loadConfig({ DATABASE_URL: testDb.url }), setup);
    const merchant = await services.merchants.create({ name: 'Outage Shop' });
    key = merchant.api_key;
    merchantId = merchant.merchant_id;
    await services.wallets.topUp(merchantId, 'INR', 100_000_000);
    receiver = await startReceiver({ secret: merchant.webhook_secret });
    server = await spawnServer(
      {
        DATABASE_URL: testDb.url,
        // Long enough that anything arriving within seconds was woken, not polled for.
        WORKER_POLL_MS: '30000',
        SANDBOX_PAYOUT_SETTLE_MS: '100',
        ALLOW_PRIVATE_CALLBACK_URLS: 'true',
        CALLBACK_RETRY_INTERVAL_MS: '500',
        DATABASE_CONNECT_TIMEOUT_MS: '2000',
      },
      { timeoutMs: 60_000 },
    );
  });

  after(async () => {
    await server?.kill();
    await receiver?.close();
    await setup?.close();
    await testDb?.drop();
  });

  it('stays up, answers 200 or 503 with Retry-After, loses and doubles nothing, and LISTENs again', async (t) => {
    const answers: { route: string; order: string; body: unknown; answer: Answer; sentAt: number }[] = [];
    const call = async (route: string, order: string, body: unknown) => {
      const sentAt = Date.now();
      const answer = await post(server.baseUrl, key, route, body);
      answers.push({ route, order, body, answer, sentAt });
      return answer;
    };
    const payout = (order: string) => ({
      money: { amount: 10 },
      merchant_order_no: order,
      receiver: RECEIVER,
      callback_url: receiver.url('/payout'),
    });
    const payin = (order: string) => ({
      money: { amount: 25.5 },
      merchant_order_no: order,
      callback_url: receiver.url('/payin'),
    });

    let stop = false;
    let n = 0;
    const client = async () => {
      while (!stop) {
        const i = n++;
        await call('/payments/payout', `po-${i}`, payout(`po-${i}`));
        const created = await call('/payments/onsite/payin', `pi-${i}`, payin(`pi-${i}`));
        if (created.status === 200)
          await call('/sandbox/payin/complete', `pi-${i}`, {
            payment_id: created.body.payment_id,
            status: 'SUCCESS',
          });
      }
    };
    const load = Promise.all(Array.from({ length: 8 }, client));
    // The cuts come under load: once it is being served, and 1.5 s into it.
    await until(async () => answers.some((a) => a.answer.status === 200), 'the load to be served', 10_000);
    await new Promise((r) => setTimeout(r, 1500));
    const killed = [await terminateConnections(dbName(testDb.url))];
    await new Promise((r) => setTimeout(r, 1000));
    killed.push(await terminateConnections(dbName(testDb.url)));
    const cutAt = Date.now();
    // Creations succeed again within 5 s of the cut: the load goes on until one it sent after the cut
    // is answered 200.
    const recoveredIn = await until(
      async () =>
        answers.some(
          (a) => a.sentAt > cutAt && a.route !== '/sandbox/payin/complete' && a.answer.status === 200,
        ),
      'a creation sent after the cut to succeed',
      5000,
    );
    t.diagnostic(`a creation sent after the cut succeeded within ${recoveredIn} ms of it`);
    stop = true;
    await load;
    t.diagnostic(
      `killed ${killed.join(' + ')} connections; answers: ${JSON.stringify(
        answers.reduce<Record<number, number>>(
          (m, a) => ((m[a.answer.status] = (m[a.answer.status] ?? 0) + 1), m),
          {},
        ),
      )}`,
    );
    assert.ok(killed[0]! > 0 && killed[1]! > 0, 'both cuts found connections to kill');

    // The process is up and every answer was one a merchant can act on.
    assert.equal(server.child.exitCode, null, `the process is up:\n${server.output()}`);
    assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200);
    for (const { route, answer } of answers) {
      assert.ok(
        [200, 503].includes(answer.status),
        `${route}: ${answer.status} ${JSON.stringify(answer.body)}`,
      );
      if (answer.status === 503) {
        assert.ok(Number(answer.retryAfter) > 0, `${route}: 503 carries Retry-After`);
        assert.equal(answer.body.error.error_code, 'SERVICE_UNAVAILABLE');
      }
    }

    // And once the load has stopped.
    const after = await call('/payments/payout', 'po-after', payout('po-after'));
    assert.equal(after.status, 200, `a creation after the load: ${JSON.stringify(after.body)}`);

    // Each creation the cut turned away, sent again as a merchant would: it replays or creates.
    const refused = answers.filter((a) => a.route !== '/sandbox/payin/complete' && a.answer.status === 503);
    for (const { route, order, body } of refused) {
      const again = await post(server.baseUrl, key, route, body);
      assert.equal(again.status, 200, `${order} again: ${JSON.stringify(again.body)}`);
    }

    // Every order is one transaction, and every accepted transaction is there as it was answered.
    const rows = await setup.db
      .selectFrom('transactions')
      .select(['payment_id', 'merchant_order_no', 'kind'])
      .where('merchant_id', '=', merchantId)
      .execute();
    const byOrder = new Map<string, string[]>();
    for (const r of rows)
      byOrder.set(`${r.kind}:${r.merchant_order_no}`, [
        ...(byOrder.get(`${r.kind}:${r.merchant_order_no}`) ?? []),
        r.payment_id,
      ]);
    for (const [order, ids] of byOrder) assert.equal(ids.length, 1, `${order} is one transaction`);
    const accepted = answers.filter((a) => a.route !== '/sandbox/payin/complete' && a.answer.status === 200);
    for (const { route, order, answer } of accepted) {
      const kind = route === '/payments/payout' ? 'payout' : 'payin';
      assert.deepEqual(byOrder.get(`${kind}:${order}`), [answer.body.payment_id], `${order} was kept`);
    }
    t.diagnostic(
      `${accepted.length} accepted and ${refused.length} retried creations, ${rows.length} transactions`,
    );

    // LISTEN is back: a callback queued by another process reaches the receiver at once, while the
    // server would not poll for 30 s.
    await until(async () => (await listeners(dbName(testDb.url))) >= 1, 'the LISTEN connection', 5000);
    const other = await buildApp({
      config: loadConfig({
        DATABASE_URL: testDb.url,
        ALLOW_PRIVATE_CALLBACK_URLS: 'true',
        RATE_LIMIT_PER_MINUTE: '0',
      }),
      database: setup,
      logger: false,
    });
    try {
      await other.app.ready();
      const created = await other.app.inject({
        method: 'POST',
        url: '/payments/onsite/payin',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(payin('after-cut')),
      });
      assert.equal(created.statusCode, 200, created.body);
      const paymentId = JSON.parse(created.body).payment_id as string;
      const settledAt = Date.now();
      const settled = await other.app.inject({
        method: 'POST',
        url: '/sandbox/payin/complete',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ payment_id: paymentId, status: 'SUCCESS' }),
      });
      assert.equal(settled.statusCode, 200, settled.body);
      await receiver.waitFor(
        () => receiver.forPayment(paymentId).length > 0,
        'the callback after the cut',
        5000,
      );
      const [cb] = receiver.forPayment(paymentId);
      assert.ok(cb!.verified, 'signed');
      t.diagnostic(`callback of a settlement in another process arrived ${cb!.at - settledAt} ms after it`);
    } finally {
      await other.app.close();
    }

    assert.deepEqual(
      (await buildServices(loadConfig({ DATABASE_URL: testDb.url }), setup).wallets.verify()).problems,
      [],
    );
    assert.doesNotMatch(server.output(), /Emitted 'error' event|Uncaught|unhandled error/);
  });
});

describe('PostgreSQL that cannot be reached', { skip: pgSkip }, () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  let gateway: Paygate;
  let key: string;
  const TIMEOUT_MS = 1000;

  before(async () => {
    testDb = await createPostgres();
    const admin = new URL(PG_ADMIN_URL);
    proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    const config = loadConfig({
      DATABASE_URL: proxy.url(testDb.url),
      DATABASE_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_PER_MINUTE: '0',
      WORKER_POLL_MS: '200',
    });
    const database = openDatabase(config.databaseUrl, { connectTimeoutMs: TIMEOUT_MS });
    await migrate(database);
    gateway = await buildApp({ config, database, logger: false });
    await gateway.app.ready();
    gateway.worker.start();
    gateway.dispatcher.start();
    key = (await gateway.services.merchants.create({ name: 'Unreachable Shop' })).api_key;
  });

  after(async () => {
    await gateway?.worker.stop();
    await gateway?.dispatcher.stop();
    await gateway?.app.close();
    await gateway?.database.close();
    await proxy?.close();
    await testDb?.drop();
  });

  const create = (order: string) =>
    gateway.app.inject({
      method: 'POST',
      url: '/payments/onsite/payin',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ money: { amount: 100 }, merchant_order_no: order }),
    });

  for (const outage of ['refuse', 'blackhole'] as const) {
    it(`answers 503 with Retry-After in bounded time while connections are ${outage === 'refuse' ? 'refused' : 'never answered'}, then resumes`, async (t) => {
      assert.equal((await create(`${outage}-before`)).statusCode, 200);
      await proxy[outage]();
      const started = Date.now();
      const [during, ready] = await Promise.all([create(`${outage}-during`), gateway.app.inject('/readyz')]);
      const took = Date.now() - started;
      t.diagnostic(`503 after ${took} ms (${outage})`);
      assert.equal(during.statusCode, 503, during.body);
      assert.ok(Number(during.headers['retry-after']) > 0);
      assert.equal(JSON.parse(during.body).error.error_code, 'SERVICE_UNAVAILABLE');
      assert.equal(ready.statusCode, 503);
      // The connect timeout bounds the wait (with room for a busy machine), never pg's default of forever.
      assert.ok(took < TIMEOUT_MS + 3000, `answered within the connect timeout: ${took} ms`);

      await proxy.forward();
      const after = await create(`${outage}-during`);
      assert.equal(
        after.statusCode,
        200,
        `the order refused during the outage is created after it: ${after.body}`,
      );
      assert.equal((await gateway.app.inject('/readyz')).statusCode, 200);
    });
  }

  it('serve started before its database waits for it, one line per attempt, then serves', async () => {
    const admin = new URL(PG_ADMIN_URL);
    const late = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    await late.refuse();
    const port = await freePort();
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/paygate.js'), 'serve'], {
      env: { ...process.env, LOG_LEVEL: 'warn', PORT: String(port), DATABASE_URL: late.url(testDb.url) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const waits = () => out.split('\n').filter((l) => l.includes('is unreachable; retrying'));
    try {
      await until(async () => waits().length >= 2, `two attempts:\n${out}`, 60_000);
      assert.equal(child.exitCode, null, 'still waiting, not exited');
      await late.forward();
      await until(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200,
        `serving once the database is there:\n${out}`,
        30_000,
      );
      for (const line of waits()) {
        assert.doesNotMatch(line, /root@|password|\bat .*\.(ts|js):\d+/, 'no credentials, no stack');
        assert.match(line, new RegExp(`postgres://127\\.0\\.0\\.1:${late.port}/${dbName(testDb.url)}`));
      }
    } finally {
      child.kill('SIGKILL');
      await late.close();
    }
  });
});

describe('the CLI on a database it cannot reach', () => {
  it('says so in one line naming the database, without credentials, and exits non-zero', async () => {
    const env = { DATABASE_URL: 'postgres://paygate:s3cret-pw@127.0.0.1:1/shop' };
    const [human, json] = await Promise.all([
      paygate(['merchant', 'list'], env),
      paygate(['wallet', 'show', '--merchant', 'mer_x', '--json'], env),
    ]);
    assert.equal(human.status, 1);
    assert.equal(human.stdout, '');
    const lines = human.stderr.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, human.stderr);
    assert.match(lines[0]!, /^paygate: cannot reach the database postgres:\/\/127\.0\.0\.1:1\/shop: /);
    assert.equal(lines[0]!.split('cannot reach').length, 2, `said once: ${lines[0]}`);
    assert.equal(json.status, 1);
    assert.deepEqual(Object.keys(JSON.parse(json.stdout).error), ['code', 'message']);
    assert.equal(JSON.parse(json.stdout).error.code, 'DATABASE_UNAVAILABLE');
    for (const out of [human.stdout, human.stderr, json.stdout, json.stderr])
      assert.doesNotMatch(out, /s3cret|paygate:s3/);
  });
});

/** A small tmpfs of its own, so that filling it touches nothing else. Root only. */
function mountTmpfs(dir: string, size: string): string | null {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? null : (r.stderr || r.error?.message || 'mount failed').trim();
}

const fullDiskDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-full-'));
const mountProblem = mountTmpfs(fullDiskDir, '8m');
if (mountProblem && process.env.CI === 'true')
  throw new Error(`CI=true but a tmpfs could not be mounted for the full-disk test: ${mountProblem}`);

describe(
  'SQLite on a full disk',
  { skip: mountProblem ? `cannot mount a tmpfs: ${mountProblem}` : false },
  () => {
    let gateway: Paygate;
    let key: string;
    const filler = path.join(fullDiskDir, 'filler');

    before(async () => {
      const config = loadConfig({
        DATABASE_URL: `sqlite:${path.join(fullDiskDir, 'paygate.db')}`,
        RATE_LIMIT_PER_MINUTE: '0',
      });
      const database = openDatabase(config.databaseUrl);
      await migrate(database);
      gateway = await buildApp({ config, database, logger: false });
      await gateway.app.ready();
      key = (await gateway.services.merchants.create({ name: 'Full Disk Shop' })).api_key;
    });

    after(async () => {
      await gateway?.app.close();
      await gateway?.database.close();
      spawnSync('umount', [fullDiskDir]);
      fs.rmSync(fullDiskDir, { recursive: true, force: true });
    });

    const call = (url: string, body: unknown) =>
      gateway.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });

    it('answers writes 503 with Retry-After, keeps reading, and writes again when space returns', async () => {
      const before = await call('/payments/onsite/payin', {
        money: { amount: 100 },
        merchant_order_no: 'before',
      });
      assert.equal(before.statusCode, 200, before.body);
      const paymentId = JSON.parse(before.body).payment_id as string;

      // Fill the file system to its last byte.
      const fd = fs.openSync(filler, 'w');
      try {
        const chunk = Buffer.alloc(64 * 1024, 1);
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
      } finally {
        fs.closeSync(fd);
      }

      // Enough writes to need new pages.
      const refused = [];
      for (let i = 0; i < 40; i++) {
        const r = await call('/payments/onsite/payin', {
          money: { amount: 100 },
          merchant_order_no: `full-${i}`,
          user_details: { user_name: 'x'.repeat(100) },
        });
        if (r.statusCode !== 200) refused.push(r);
      }
      assert.ok(refused.length > 0, 'a full disk refuses writes');
      for (const r of refused) {
        assert.equal(r.statusCode, 503, r.body);
        assert.ok(Number(r.headers['retry-after']) > 0);
        assert.equal(JSON.parse(r.body).error.error_code, 'SERVICE_UNAVAILABLE');
      }
      const status = await call('/payments/payin_status', { payment_id: paymentId });
      assert.equal(status.statusCode, 200, 'reads go on');
      assert.equal((await gateway.app.inject('/healthz')).statusCode, 200);

      fs.rmSync(filler);
      const after = await call('/payments/onsite/payin', {
        money: { amount: 100 },
        merchant_order_no: 'after',
      });
      assert.equal(after.statusCode, 200, `writes resume: ${after.body}`);
      assert.deepEqual((await gateway.services.wallets.verify()).problems, []);
    });
  },
);
