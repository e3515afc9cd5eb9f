/**
 * The minutes after a database outage: once the store answers again, the callback dispatcher and
 * the transaction worker resume at once, not after a back-off or a poll. Every gateway here polls
 * only every 30 s, so anything that happens within seconds was woken. PostgreSQL outages go through
 * a TCP proxy in front of the shared server (never stopped); SQLite's is a full disk on a tmpfs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp, type Paygate } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import type { Channel } from '../../src/channels/channel.ts';
import { createPostgres, PG_ADMIN_URL, postgresSkip, type TestDatabase } from '../support/databases.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
const ENV = {
  RATE_LIMIT_PER_MINUTE: '0',
  // Long enough that anything within seconds was woken, not polled for.
  WORKER_POLL_MS: '30000',
  SANDBOX_PAYOUT_SETTLE_MS: '100',
  ALLOW_PRIVATE_CALLBACK_URLS: 'true',
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function gatewayOn(database: Database, env: Record<string, string>): Promise<Paygate> {
  const config = loadConfig({ ...ENV, ...env, DATABASE_URL: database.url });
  const gateway = await buildApp({ config, database, logger: false });
  await gateway.app.ready();
  return gateway;
}

async function post(gateway: Paygate, key: string, url: string, body: unknown) {
  const res = await gateway.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: JSON.parse(res.body), at: Date.now() };
}

/** When each payout reached the sandbox channel: the worker's call, observed at the channel's door. */
function watchSubmissions(gateway: Paygate): Map<string, number> {
  const sent = new Map<string, number>();
  const channel: Channel = gateway.services.sandboxChannel;
  const submit = channel.submitPayout.bind(channel);
  channel.submitPayout = (p) => {
    if (!sent.has(p.paymentId)) sent.set(p.paymentId, Date.now());
    return submit(p);
  };
  return sent;
}

interface Merchant {
  key: string;
  receiver: Receiver;
}

/** Creates a pay-in and settles it: a final status with a callback URL. `at` is when the answer came. */
async function finalStatus(gateway: Paygate, m: Merchant, order: string) {
  const created = await post(gateway, m.key, '/payments/onsite/payin', {
    money: { amount: 25.5 },
    merchant_order_no: order,
    callback_url: m.receiver.url('/payin'),
  });
  if (created.status !== 200) return { ...created, paymentId: null, startedAt: created.at };
  const startedAt = Date.now();
  const settled = await post(gateway, m.key, '/sandbox/payin/complete', {
    payment_id: created.body.payment_id,
    status: 'SUCCESS',
  });
  return { ...settled, paymentId: created.body.payment_id as string, startedAt };
}

async function payout(gateway: Paygate, m: Merchant, order: string) {
  const r = await post(gateway, m.key, '/payments/payout', {
    money: { amount: 10 },
    merchant_order_no: order,
    receiver: RECEIVER,
    callback_url: m.receiver.url('/payout'),
  });
  return { ...r, paymentId: r.status === 200 ? (r.body.payment_id as string) : null };
}

/**
 * Merchants' traffic until `stop()`, from a few clients: payouts and pay-ins settled at once, or
 * with `createOnly` pay-ins left open (nothing that would wake a worker by itself). A refused
 * request is followed by a short pause, as Retry-After asks.
 */
function load(gateway: Paygate, m: Merchant, prefix: string, { clients = 4, createOnly = false } = {}) {
  let stopped = false;
  let n = 0;
  const settled: { paymentId: string; at: number }[] = [];
  const payouts: { paymentId: string; at: number }[] = [];
  let refused = 0;
  const served = (ok: boolean) => {
    if (!ok) refused++;
    return ok ? Promise.resolve() : sleep(50);
  };
  const client = async () => {
    while (!stopped) {
      const i = n++;
      if (createOnly) {
        const r = await post(gateway, m.key, '/payments/onsite/payin', {
          money: { amount: 25.5 },
          merchant_order_no: `${prefix}-open-${i}`,
        });
        await served(r.status === 200);
        continue;
      }
      const p = await payout(gateway, m, `${prefix}-po-${i}`);
      if (p.paymentId) payouts.push({ paymentId: p.paymentId, at: p.at });
      await served(p.paymentId !== null);
      const f = await finalStatus(gateway, m, `${prefix}-pi-${i}`);
      if (f.status === 200 && f.paymentId) settled.push({ paymentId: f.paymentId, at: f.at });
      await served(f.status === 200);
    }
  };
  const running = Promise.all(Array.from({ length: clients }, client));
  return {
    /**
     * Stops the clients; settling ones once each kind of request has been served at least once
     * (5 s at most), creating ones at once (a full disk's space is small).
     */
    async stop() {
      if (!createOnly) await waitUntil(() => settled.length > 0 && payouts.length > 0, Date.now() + 5000);
      stopped = true;
      await running;
      return { settled, payouts, refused };
    },
  };
}

function firstAttempt(receiver: Receiver, paymentId: string): number | null {
  return receiver.forPayment(paymentId).find((r) => r.attempt === 1)?.at ?? null;
}

async function waitUntil(ready: () => boolean, deadline: number): Promise<void> {
  while (!ready() && Date.now() < deadline) await sleep(20);
}

const pgSkip = await postgresSkip();

describe('PostgreSQL back after an outage', { skip: pgSkip }, () => {
  let testDb: TestDatabase;
  let proxy: TcpProxy;
  /** The gateway under test: it reaches its database through the proxy. */
  let gateway: Paygate;
  /** Another process on the same database, which the outage does not touch; it runs no workers. */
  let other: Paygate;
  let direct: Database;
  let merchant: Merchant;
  let sent: Map<string, number>;

  before(async () => {
    testDb = await createPostgres();
    const admin = new URL(PG_ADMIN_URL);
    proxy = await startTcpProxy(admin.hostname, Number(admin.port || 5432));
    direct = openDatabase(testDb.url);
    await migrate(direct);
    other = await gatewayOn(direct, {});
    const created = await other.services.merchants.create({ name: 'Recovery Shop' });
    await other.services.wallets.topUp(created.merchant_id, 'INR', 100_000_000);
    merchant = { key: created.api_key, receiver: await startReceiver({ secret: created.webhook_secret }) };
    gateway = await gatewayOn(openDatabase(proxy.url(testDb.url), { connectTimeoutMs: 1000 }), {});
    sent = watchSubmissions(gateway);
    gateway.worker.start();
    gateway.dispatcher.start();
  });

  after(async () => {
    await gateway?.worker.stop();
    await gateway?.dispatcher.stop();
    await gateway?.app.close();
    await gateway?.database.close();
    await other?.app.close();
    await direct?.close();
    await merchant?.receiver.close();
    await proxy?.close();
    await testDb?.drop();
  });

  // Outages of several lengths, so that recovery falls at different points of any back-off.
  const outagesMs = [1500, 2500, 4000, 2000, 3200];
  for (const [round, outageMs] of outagesMs.entries()) {
    it(`round ${round + 1}: cut for ${outageMs} ms under load, then everything resumes at once`, async (t) => {
      const traffic = load(gateway, merchant, `r${round}`);
      await sleep(1000);
      await proxy.refuse();
      await sleep(200);
      // Created by a process that can still reach the database, while this gateway cannot.
      const during = await payout(other, merchant, `r${round}-during`);
      assert.equal(during.status, 200, JSON.stringify(during.body));
      await sleep(outageMs - 200);
      await proxy.forward();
      const backAt = Date.now();
      const { settled, payouts, refused } = await traffic.stop();
      assert.ok(refused > 0, 'the outage turned requests away');
      assert.ok(settled.length > 0 && payouts.length > 0, 'requests were served around the outage');

      // A final status committed by another process right after recovery reaches the receiver at
      // once: that process notifies, and this gateway must be listening again.
      await sleep(300);
      const there = await finalStatus(other, merchant, `r${round}-there`);
      assert.equal(there.status, 200, JSON.stringify(there.body));

      const payoutIds = [during.paymentId!, ...payouts.map((p) => p.paymentId)];
      const callbackIds = [there.paymentId!, ...settled.map((s) => s.paymentId)];
      await waitUntil(
        () =>
          payoutIds.every((id) => sent.has(id)) &&
          callbackIds.every((id) => firstAttempt(merchant.receiver, id) !== null),
        backAt + 5000,
      );

      // Then a payout created elsewhere: that process runs no worker, so this gateway's must hear of it.
      const later = await payout(other, merchant, `r${round}-later`);
      assert.equal(later.status, 200, JSON.stringify(later.body));
      // And a final status committed here.
      const here = await finalStatus(gateway, merchant, `r${round}-here`);
      assert.equal(here.status, 200, JSON.stringify(here.body));
      await waitUntil(
        () => firstAttempt(merchant.receiver, here.paymentId!) !== null && sent.has(later.paymentId!),
        Date.now() + 3000,
      );

      const lateness = (at: number | null | undefined, due: number) => (at == null ? Infinity : at - due);
      const thereMs = lateness(firstAttempt(merchant.receiver, there.paymentId!), there.startedAt);
      const hereMs = lateness(firstAttempt(merchant.receiver, here.paymentId!), here.startedAt);
      const duringMs = lateness(sent.get(during.paymentId!), backAt);
      const laterMs = lateness(sent.get(later.paymentId!), later.at);
      const queuedMs = Math.max(
        ...settled.map((s) => lateness(firstAttempt(merchant.receiver, s.paymentId), Math.max(s.at, backAt))),
      );
      const payoutsMs = Math.max(
        ...payouts.map((p) => lateness(sent.get(p.paymentId), Math.max(p.at, backAt))),
      );
      t.diagnostic(
        `attempt 1 after a commit: ${thereMs} ms (other process), ${hereMs} ms (here); payout created during the outage sent ${duringMs} ms after recovery, one created elsewhere after it ${laterMs} ms after its creation; queued callbacks ${queuedMs} ms, accepted payouts ${payoutsMs} ms after recovery at the latest (${settled.length} settled, ${payouts.length} payouts, ${refused} refused)`,
      );
      assert.ok(
        thereMs <= 1000,
        `attempt 1 of a final status committed elsewhere came ${thereMs} ms after it`,
      );
      assert.ok(hereMs <= 1000, `attempt 1 of a final status committed here came ${hereMs} ms after it`);
      assert.ok(
        duringMs <= 2000,
        `the payout created during the outage was sent ${duringMs} ms after recovery`,
      );
      assert.ok(laterMs <= 1000, `a payout created elsewhere was sent ${laterMs} ms after its creation`);
      assert.ok(queuedMs <= 2000, `callbacks queued around the outage went ${queuedMs} ms after recovery`);
      assert.ok(payoutsMs <= 2000, `payouts accepted around the outage went ${payoutsMs} ms after recovery`);
    });
  }

  it('loses and doubles nothing', async () => {
    assert.deepEqual((await other.services.wallets.verify()).problems, []);
    const twice = await direct.db
      .selectFrom('callback_deliveries')
      .select('payment_id')
      .groupBy('payment_id')
      .having(sql`count(*)`, '>', 1)
      .execute();
    assert.deepEqual(twice, [], 'one delivery per final status');
  });
});

/** A small tmpfs of its own, so that filling it touches nothing else. Root only. */
function mountTmpfs(dir: string, size: string): string | null {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  return r.status === 0 ? null : (r.stderr || r.error?.message || 'mount failed').trim();
}

const fullDiskDir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-recovery-'));
const mountProblem = mountTmpfs(fullDiskDir, '8m');
if (mountProblem && process.env.CI === 'true')
  throw new Error(`CI=true but a tmpfs could not be mounted for the full-disk test: ${mountProblem}`);

describe(
  'SQLite back after a full disk',
  { skip: mountProblem ? `cannot mount a tmpfs: ${mountProblem}` : false },
  () => {
    let gateway: Paygate;
    let merchant: Merchant;
    const filler = path.join(fullDiskDir, 'filler');
    const RETRY_MS = 1000;

    before(async () => {
      const database = openDatabase(`sqlite:${path.join(fullDiskDir, 'paygate.db')}`);
      await migrate(database);
      gateway = await gatewayOn(database, { CALLBACK_RETRY_INTERVAL_MS: String(RETRY_MS) });
      const created = await gateway.services.merchants.create({ name: 'Full Disk Shop' });
      merchant = {
        key: created.api_key,
        // The first attempt of each callback fails, so that retries fall due while the disk is full.
        receiver: await startReceiver({
          secret: created.webhook_secret,
          answer: (_r, nth) => (nth === 1 ? 500 : 200),
        }),
      };
      await gateway.services.wallets.topUp(created.merchant_id, 'INR', 100_000_000);
      gateway.worker.start();
      gateway.dispatcher.start();
    });

    after(async () => {
      await gateway?.worker.stop();
      await gateway?.dispatcher.stop();
      await gateway?.app.close();
      await gateway?.database.close();
      await merchant?.receiver.close();
      spawnSync('umount', [fullDiskDir]);
      fs.rmSync(fullDiskDir, { recursive: true, force: true });
    });

    it('delivers the callbacks queued while the disk was full within 2 s of space returning', async (t) => {
      const queued: string[] = [];
      for (let i = 0; i < 10; i++) {
        const f = await finalStatus(gateway, merchant, `queued-${i}`);
        assert.equal(f.status, 200, JSON.stringify(f.body));
        queued.push(f.paymentId!);
      }
      await merchant.receiver.waitFor(
        () => queued.every((id) => firstAttempt(merchant.receiver, id) !== null),
        'the first attempts',
        5000,
      );

      // Every write from now needs space the file system does not have: the log is emptied first.
      await sql`pragma wal_checkpoint(TRUNCATE)`.execute(gateway.database.db);
      const fd = fs.openSync(filler, 'w');
      try {
        const chunk = Buffer.alloc(64 * 1024, 1);
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
      } finally {
        fs.closeSync(fd);
      }
      // Only creations: a final status would wake the dispatcher by itself.
      const traffic = load(gateway, merchant, 'full', { clients: 2, createOnly: true });
      // The retries fall due and cannot be claimed.
      await sleep(RETRY_MS + 500);
      const retried = (id: string) => merchant.receiver.forPayment(id).some((r) => r.attempt === 2);
      const waiting = queued.filter((id) => !retried(id));
      fs.rmSync(filler);
      const backAt = Date.now();
      await sleep(300);
      const { refused } = await traffic.stop();
      assert.ok(refused > 0, 'the full disk turned requests away');
      assert.ok(waiting.length > 0, 'callbacks were waiting when space returned');

      await waitUntil(() => waiting.every(retried), backAt + 5000);
      const drainedMs = Math.max(
        ...waiting.map((id) => {
          const at = merchant.receiver.forPayment(id).find((r) => r.attempt === 2)?.at;
          return at === undefined ? Infinity : at - backAt;
        }),
      );
      const here = await finalStatus(gateway, merchant, 'after');
      assert.equal(here.status, 200, JSON.stringify(here.body));
      await waitUntil(() => firstAttempt(merchant.receiver, here.paymentId!) !== null, Date.now() + 3000);
      const hereMs = (firstAttempt(merchant.receiver, here.paymentId!) ?? Infinity) - here.startedAt;
      t.diagnostic(
        `${waiting.length} queued callbacks drained ${drainedMs} ms after space returned; attempt 1 of a final status after it came ${hereMs} ms after the commit`,
      );
      assert.ok(drainedMs <= 2000, `queued callbacks drained ${drainedMs} ms after space returned`);
      assert.ok(hereMs <= 1000, `attempt 1 came ${hereMs} ms after the commit`);
      assert.deepEqual((await gateway.services.wallets.verify()).problems, []);
    });
  },
);
