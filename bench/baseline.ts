/**
 * The baseline the gateway is measured against: bare Fastify on the same database with the same
 * driver and settings, doing exactly one statement per request and nothing else (no auth, no
 * validation, no idempotency, no ledger). `POST /insert` writes one transactions row (the same
 * table, indexes and row size as a gateway pay-in); `POST /select` reads one row by primary key.
 *
 * Run as its own process by the benchmark: `node --import tsx bench/baseline.ts` with
 * BASELINE_DATABASE_URL, BASELINE_PORT and BASELINE_MERCHANT_ID in the environment. The schema and
 * the merchant row are set up by the benchmark before it starts.
 */
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sqlitePath } from '../src/db/database.ts';

const url = process.env.BASELINE_DATABASE_URL ?? '';
const port = Number(process.env.BASELINE_PORT ?? 0);
const merchantId = process.env.BASELINE_MERCHANT_ID ?? '';

const INSERT_COLUMNS = `payment_id, merchant_id, kind, flow, merchant_order_no, amount, currency, status, utr,
  channel_txn_id, channel, user_name, user_phone, user_email, callback_url, redirect_url, receiver_name,
  receiver_account_no, receiver_ifsc, request_hash, response_json, expires_at, next_action_at, lease_until,
  created_at, updated_at, finalized_at`;
const SELECT_SQL =
  'select status, amount, currency, channel_txn_id, utr from transactions where payment_id = ';

interface Store {
  insert(values: unknown[]): Promise<void>;
  select(paymentId: string): Promise<unknown>;
}

/** The same pragmas as src/db/sqlite-connection.ts. */
function sqliteStore(file: string): Store {
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  const insert = db.prepare(
    `insert into transactions (${INSERT_COLUMNS}) values (${Array(27).fill('?').join(', ')})`,
  );
  const select = db.prepare(`${SELECT_SQL}?`);
  return {
    async insert(values) {
      insert.run(...values);
    },
    async select(paymentId) {
      return select.get(paymentId);
    },
  };
}

/** A pool of the same size as the gateway's. */
function postgresStore(connectionString: string): Store {
  const pool = new pg.Pool({ connectionString, max: 10 });
  const placeholders = Array.from({ length: 27 }, (_, i) => `$${i + 1}`).join(', ');
  const insertSql = `insert into transactions (${INSERT_COLUMNS}) values (${placeholders})`;
  return {
    async insert(values) {
      await pool.query(insertSql, values);
    },
    async select(paymentId) {
      return (await pool.query(`${SELECT_SQL}$1`, [paymentId])).rows[0];
    },
  };
}

const file = sqlitePath(url);
const store = file !== null ? sqliteStore(file) : postgresStore(url);
const app = Fastify({ logger: false });

app.post('/insert', async (req) => {
  const body = req.body as { merchant_order_no?: string; money?: { amount?: number } };
  const paymentId = randomBytes(16).toString('hex');
  const at = Date.now();
  const response = `{"success":true,"payment_id":"${paymentId}","amount":500,"currency":"INR","message":"Payment created"}`;
  await store.insert([
    paymentId,
    merchantId,
    'payin',
    'onsite',
    String(body.merchant_order_no),
    Math.round((body.money?.amount ?? 1) * 100),
    'INR',
    'PENDING',
    '',
    '',
    'sandbox',
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    null,
    paymentId + paymentId,
    response,
    at + 900_000,
    at + 900_000,
    null,
    at,
    at,
    null,
  ]);
  return { success: true, payment_id: paymentId };
});

app.post('/select', async (req) => {
  const row = await store.select(String((req.body as { payment_id?: string }).payment_id));
  return row ?? { status: 'NOT_FOUND' };
});

app.get('/readyz', async () => ({ ok: true }));

await app.listen({ port, host: '127.0.0.1' });
process.once('SIGTERM', () => {
  app.close().then(() => process.exit(0));
});
