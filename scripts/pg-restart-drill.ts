/**
 * A maintenance-window drill, not part of `npm test` because it stops the local PostgreSQL
 * cluster: three `paygate serve` processes on one database under payouts and pay-ins, then a real
 * `pg_ctlcluster stop -m fast`, a few seconds down, and a start. It reports what the merchants saw
 * and checks that every process stayed up, every order is one transaction, every accepted
 * transaction is there, every final status got its callback, and the ledger verifies.
 *
 *   node --import tsx scripts/pg-restart-drill.ts [--down-s 5] [--load-s 20]
 *
 * Needs the local cluster (`pg_ctlcluster`, run as root) at TEST_POSTGRES_URL or 127.0.0.1:5432.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { migrate, openDatabase } from '../src/db/database.ts';
import { buildServices } from '../src/services.ts';
import { createPostgres } from '../test/support/databases.ts';
import { spawnServer, type ServerProcess } from '../test/support/process.ts';
import { startReceiver } from '../test/support/receiver.ts';

const { values } = parseArgs({
  options: { 'down-s': { type: 'string', default: '5' }, 'load-s': { type: 'string', default: '20' } },
});
const downMs = Number(values['down-s']) * 1000;
const loadMs = Number(values['load-s']) * 1000;
const version = fs.readdirSync('/etc/postgresql')[0];
if (!version) throw new Error('no local PostgreSQL cluster under /etc/postgresql');
const cluster = (action: string, ...extra: string[]) =>
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', action, ...extra], {
    stdio: 'inherit',
  });

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const testDb = await createPostgres();
const setup = openDatabase(testDb.url);
await migrate(setup);
const services = buildServices(loadConfig({ DATABASE_URL: testDb.url }), setup);
const merchant = await services.merchants.create({ name: 'Drill Shop' });
await services.wallets.topUp(merchant.merchant_id, 'INR', 1_000_000_000);
await setup.close();
const receiver = await startReceiver({ secret: merchant.webhook_secret });
const env = {
  DATABASE_URL: testDb.url,
  SANDBOX_PAYOUT_SETTLE_MS: '200',
  ALLOW_PRIVATE_CALLBACK_URLS: 'true',
  CALLBACK_RETRY_INTERVAL_MS: '2000',
  CALLBACK_MAX_RETRIES: '10',
};
const servers: ServerProcess[] = [];
for (let i = 0; i < 3; i++) servers.push(await spawnServer(env, { timeoutMs: 60_000 }));

interface Sent {
  server: number;
  route: string;
  order: string;
  body: unknown;
  status: number;
  retryAfter: string | null;
  paymentId?: string;
  error?: string;
  /** When the answer came. */
  at: number;
}
const sent: Sent[] = [];
async function call(server: number, route: string, order: string, body: unknown): Promise<Sent> {
  const s: Sent = { server, route, order, body, status: 0, retryAfter: null, at: 0 };
  try {
    const res = await fetch(`${servers[server]!.baseUrl}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    s.status = res.status;
    s.retryAfter = res.headers.get('retry-after');
    const json = (await res.json()) as { payment_id?: string };
    s.paymentId = json.payment_id;
  } catch (err) {
    s.error = (err as Error).message;
  }
  s.at = Date.now();
  sent.push(s);
  return s;
}

let stop = false;
let n = 0;
async function client(id: number): Promise<void> {
  while (!stop) {
    const i = n++;
    const server = i % servers.length;
    await call(server, '/payments/payout', `po-${i}`, {
      money: { amount: 10 },
      merchant_order_no: `po-${i}`,
      receiver: RECEIVER,
      callback_url: receiver.url('/payout'),
    });
    const created = await call((server + 1) % servers.length, '/payments/onsite/payin', `pi-${i}`, {
      money: { amount: 25.5 },
      merchant_order_no: `pi-${i}`,
      callback_url: receiver.url('/payin'),
    });
    if (created.status === 200)
      await call((server + 2) % servers.length, '/sandbox/payin/complete', `pi-${i}`, {
        payment_id: created.paymentId,
        status: 'SUCCESS',
      });
    if (id < 0) break;
  }
}

const t0 = Date.now();
const load = Promise.all(Array.from({ length: 6 }, (_, i) => client(i)));
await sleep(3000);
const stoppedAt = Date.now();
console.log(`[${stoppedAt - t0} ms] stopping PostgreSQL (-m fast)`);
let startedAt = 0;
try {
  cluster('stop', '-m', 'fast');
  await sleep(downMs);
} finally {
  cluster('start');
  startedAt = Date.now();
  console.log(`[${startedAt - t0} ms] PostgreSQL started`);
}
await sleep(Math.max(5000, loadMs - (Date.now() - t0)));
stop = true;
await load;

const byStatus: Record<string, number> = {};
for (const s of sent) {
  const key = s.error ? `error: ${s.error}` : String(s.status);
  byStatus[key] = (byStatus[key] ?? 0) + 1;
}
const firstOk = sent.filter(
  (s) => s.status === 200 && s.at > startedAt && s.route !== '/sandbox/payin/complete',
);
const firstOkAfter = firstOk.length ? Math.min(...firstOk.map((s) => s.at)) - startedAt : null;
const alive = servers.map((s) => s.child.exitCode === null && s.child.signalCode === null);
const bad = sent.filter(
  (s) => s.error || ![200, 503].includes(s.status) || (s.status === 503 && !s.retryAfter),
);

// The merchant's retries of the creations that were turned away.
const refused = sent.filter((s) => s.route !== '/sandbox/payin/complete' && s.status !== 200);
const retried = await Promise.all(refused.map((s) => call(s.server, s.route, s.order, s.body)));
const retriedOk = retried.filter((s) => s.status === 200).length;

// Once everything has settled: one transaction per order, each accepted one present, a callback per final status.
const check = openDatabase(testDb.url);
const deadline = Date.now() + 120_000;
let pending = -1;
let undelivered = -1;
for (;;) {
  pending = Number(
    (
      await check.db
        .selectFrom('transactions')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', 'in', ['PENDING', 'PROCESSING'])
        .where('kind', '=', 'payout')
        .executeTakeFirstOrThrow()
    ).n,
  );
  const finalIds = (
    await check.db
      .selectFrom('transactions')
      .select('payment_id')
      .where('status', 'in', ['SUCCESS', 'FAILED'])
      .execute()
  ).map((r) => r.payment_id);
  const got = new Set(receiver.received.map((r) => r.body?.payment_id));
  undelivered = finalIds.filter((id) => !got.has(id)).length;
  if ((pending === 0 && undelivered === 0) || Date.now() > deadline) break;
  await sleep(500);
}
const rows = await check.db
  .selectFrom('transactions')
  .select(['payment_id', 'kind', 'merchant_order_no'])
  .execute();
const orders = new Map<string, number>();
for (const r of rows)
  orders.set(`${r.kind}:${r.merchant_order_no}`, (orders.get(`${r.kind}:${r.merchant_order_no}`) ?? 0) + 1);
const doubled = [...orders].filter(([, count]) => count > 1).length;
const ids = new Set(rows.map((r) => r.payment_id));
const lost = sent.filter(
  (s) => s.route !== '/sandbox/payin/complete' && s.status === 200 && !ids.has(s.paymentId!),
).length;
const duplicateCallbacks = (() => {
  const seen = new Map<string, number>();
  for (const r of receiver.received) seen.set(r.body?.payment_id, (seen.get(r.body?.payment_id) ?? 0) + 1);
  return [...seen.values()].filter((c) => c > 1).length;
})();
const ledger = await buildServices(loadConfig({ DATABASE_URL: testDb.url }), check).wallets.verify();
await check.close();

const report = {
  processes_alive: alive,
  postgres_down_ms: startedAt - stoppedAt,
  first_success_after_start_ms: firstOkAfter,
  answers: byStatus,
  unexpected_answers: bad.length,
  refused_creations_retried: refused.length,
  retries_answered_200: retriedOk,
  transactions: rows.length,
  orders_with_more_than_one_transaction: doubled,
  accepted_but_missing: lost,
  payouts_not_final_after_wait: pending,
  final_without_callback: undelivered,
  payments_with_repeated_callbacks: duplicateCallbacks,
  ledger_ok: ledger.ok,
};
console.log(JSON.stringify(report, null, 2));
for (const [i, s] of servers.entries()) {
  const lines = s
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '');
  console.log(`--- process ${i + 1}: ${lines.length} log lines; first of them:`);
  for (const l of lines.slice(0, 6)) console.log(l.slice(0, 240));
}
await Promise.all(servers.map((s) => s.stop()));
await receiver.close();
await testDb.drop();
const passed =
  alive.every(Boolean) &&
  bad.length === 0 &&
  retriedOk === refused.length &&
  doubled === 0 &&
  lost === 0 &&
  pending === 0 &&
  undelivered === 0 &&
  ledger.ok;
console.log(passed ? 'drill passed' : 'drill FAILED');
process.exit(passed ? 0 : 1);
