/**
 * The databases a benchmark run uses: a fresh SQLite file in a temp dir, or a fresh database on
 * the PostgreSQL server named by --db, dropped afterwards. Also the bulk loaders that fill the
 * transactions table quickly: one INSERT … SELECT per chunk for payin_status and growth, and a
 * realistic mix of kinds, flows, statuses, amounts and dates for the dashboard scenario.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sqlitePath } from '../src/db/database.ts';
import { TRANSACTION_COLUMNS } from '../src/transactions/transactions.repository.ts';

export interface BenchDatabase {
  kind: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

/** A fresh, empty database of the kind the options name. `tag` ends up in the name, for people. */
export async function freshDatabase(pgServerUrl: string | null, tag: string): Promise<BenchDatabase> {
  if (pgServerUrl === null) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `paygate-bench-${tag}-`));
    return {
      kind: 'sqlite',
      url: `sqlite:${path.join(dir, 'paygate.db')}`,
      async drop() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const name = `paygate_bench_${tag}_${randomBytes(4).toString('hex')}`;
  await adminQuery(pgServerUrl, `create database ${name}`);
  const url = new URL(pgServerUrl);
  url.pathname = `/${name}`;
  return {
    kind: 'postgres',
    url: url.toString(),
    async drop() {
      await adminQuery(pgServerUrl, `drop database if exists ${name} with (force)`);
    },
  };
}

async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A short-lived raw connection for set-up SQL (parameters: `?` on SQLite, `$n` on PostgreSQL). */
export interface RawConnection {
  kind: 'sqlite' | 'postgres';
  run(text: string, params?: unknown[]): Promise<void>;
  rows<T>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function connect(url: string): Promise<RawConnection> {
  const file = sqlitePath(url);
  if (file !== null) {
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    return {
      kind: 'sqlite',
      async run(text, params = []) {
        db.prepare(text).run(...params);
      },
      async rows<T>(text: string, params: unknown[] = []) {
        return db.prepare(text).all(...params) as T[];
      },
      async close() {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    kind: 'postgres',
    async run(text, params = []) {
      await client.query(text, params);
    },
    async rows<T>(text: string, params: unknown[] = []) {
      return (await client.query(text, params)).rows as T[];
    },
    async close() {
      await client.end();
    },
  };
}

/**
 * Spreads the bulk-loaded payment_ids as real ones are spread (they are random): after the prefix
 * come 16 digits of `i * SPREAD mod 10^16` (a one-to-one map, SPREAD being odd and not a multiple
 * of 5), then `i` itself. Exact in a JavaScript number up to 12 million rows.
 */
const SPREAD = 734_567_891;

/** The payment_id of the i-th bulk-loaded pay-in: 32 characters of [A-Za-z0-9], like a real one. */
export function filledPaymentId(i: number, prefix = 'fill'): string {
  return `${prefix}${String((i * SPREAD) % 1e16).padStart(16, '0')}${String(i).padStart(12, '0')}`;
}

export interface FillOptions {
  /** Four letters that start each payment_id and order number (default "fill"). */
  prefix?: string;
  /** Every row PENDING (to be settled by the benchmark) instead of mostly final. */
  allPending?: boolean;
  callbackUrl?: string | null;
  progress?: (done: number) => void;
  /** ANALYZE the table after loading (PostgreSQL; default true). */
  analyze?: boolean;
}

const COLUMNS = `payment_id, merchant_id, kind, flow, merchant_order_no, amount, currency, status, utr, channel_txn_id,
  channel, user_name, user_phone, user_email, callback_url, redirect_url, receiver_name, receiver_account_no,
  receiver_ifsc, request_hash, response_json, expires_at, next_action_at, lease_until, created_at, updated_at, finalized_at`;

/**
 * Inserts pay-ins number `from` to `to` (inclusive) for one merchant, in chunks of 100k rows, each
 * one INSERT … SELECT (a recursive CTE on SQLite, generate_series on PostgreSQL). One in ten is
 * PENDING with an expiry a day away (so the worker leaves them alone); the rest are final, as in a
 * gateway that has been running for a while.
 */
export async function fillPayins(
  url: string,
  merchantId: string,
  from: number,
  to: number,
  opts: FillOptions = {},
): Promise<void> {
  const prefix = opts.prefix ?? 'fill';
  if (!/^[a-z]{4}$/.test(prefix)) throw new Error('fill prefix must be four lowercase letters');
  // One in ten PENDING, or all of them: `i % m = 0` with m = 10 or 1.
  const m = opts.allPending ? 1 : 10;
  const callbackUrl = opts.callbackUrl ?? null;
  const conn = await connect(url);
  const now = Date.now();
  const later = now + 86_400_000;
  const chunk = 100_000;
  try {
    for (let lo = from; lo <= to; lo += chunk) {
      const hi = Math.min(to, lo + chunk - 1);
      if (conn.kind === 'sqlite') {
        await conn.run(
          `with recursive n(i) as (select ? union all select i + 1 from n where i < ?)
           insert into transactions (${COLUMNS})
           select printf('${prefix}%016d%012d', (i * ${SPREAD}) % 10000000000000000, i), ?, 'payin', 'onsite', '${prefix}-' || i, 50000 + (i % 1000) * 100, 'INR',
             case when i % ${m} = 0 then 'PENDING' when i % 10 < 8 then 'SUCCESS' else 'FAILED' end,
             case when i % ${m} = 0 then '' else printf('%012d', i) end, 'sbx_' || i, 'sandbox',
             'Bench Customer', '9999999999', 'customer@example.com', ?, null, null, null, null,
             printf('%064d', i), '{"success":true,"payment_id":"' || printf('${prefix}%016d%012d', (i * ${SPREAD}) % 10000000000000000, i) || '","payment_url":"http://localhost/pay/x","amount":500,"currency":"INR","message":"Payment created"}',
             ?, case when i % ${m} = 0 then ? else null end, null, ?, ?, case when i % ${m} = 0 then null else ? end
           from n`,
          [lo, hi, merchantId, callbackUrl, later, later, now, now, now],
        );
      } else {
        await conn.run(
          `insert into transactions (${COLUMNS})
           select '${prefix}' || lpad(((i::bigint * ${SPREAD}) % 10000000000000000)::text, 16, '0') || lpad(i::text, 12, '0'), $1, 'payin', 'onsite', '${prefix}-' || i, 50000 + (i % 1000) * 100, 'INR',
             case when i % ${m} = 0 then 'PENDING' when i % 10 < 8 then 'SUCCESS' else 'FAILED' end,
             case when i % ${m} = 0 then '' else lpad(i::text, 12, '0') end, 'sbx_' || i, 'sandbox',
             'Bench Customer', '9999999999', 'customer@example.com', $6::text, null, null, null, null,
             lpad(i::text, 64, '0'), '{"success":true,"payment_id":"${prefix}' || lpad(((i::bigint * ${SPREAD}) % 10000000000000000)::text, 16, '0') || lpad(i::text, 12, '0') || '","payment_url":"http://localhost/pay/x","amount":500,"currency":"INR","message":"Payment created"}',
             $2::bigint, case when i % ${m} = 0 then $2::bigint else null end, null, $3::bigint, $3::bigint,
             case when i % ${m} = 0 then null else $3::bigint end
           from generate_series($4::int, $5::int) as i`,
          [merchantId, later, now, lo, hi, callbackUrl],
        );
      }
      opts.progress?.(hi - from + 1);
    }
    if (conn.kind === 'postgres' && opts.analyze !== false) await conn.run('analyze transactions');
  } finally {
    await conn.close();
  }
}

/** Engine version, for the machine description. */
export async function engineVersion(url: string): Promise<string> {
  const conn = await connect(url);
  try {
    if (conn.kind === 'sqlite') {
      const [row] = await conn.rows<{ v: string }>('select sqlite_version() as v');
      return `SQLite ${row?.v ?? '?'} (better-sqlite3, WAL, synchronous=NORMAL)`;
    }
    const [row] = await conn.rows<{ v: string }>("select current_setting('server_version') as v");
    return `PostgreSQL ${row?.v ?? '?'}`;
  } finally {
    await conn.close();
  }
}

/** What `fillDashboard` loads. */
export interface DashboardFill {
  /** The merchant whose dashboard is measured, and how many transactions it gets. */
  merchantId: string;
  rows: number;
  /** A second merchant with a few rows, so that every list is scoped by merchant for real. */
  otherMerchantId: string;
  otherRows: number;
  /** Rows are spread over the `days` before `now` (epoch ms). */
  now: number;
  days: number;
  progress?: (done: number, total: number) => void;
}

/** One generated transaction row, in the order of DASHBOARD_COLUMNS. */
type FillRow = (string | number | null)[];

const DASHBOARD_COLUMNS = [
  'payment_id',
  'merchant_id',
  'kind',
  'flow',
  'merchant_order_no',
  'amount',
  'currency',
  'status',
  'utr',
  'channel_txn_id',
  'channel',
  'user_name',
  'user_phone',
  'user_email',
  'receiver_name',
  'receiver_account_no',
  'receiver_ifsc',
  'request_hash',
  'response_json',
  'expires_at',
  'next_action_at',
  'created_at',
  'updated_at',
  'finalized_at',
] as const;
/** PostgreSQL array types of DASHBOARD_COLUMNS, for `unnest`. */
const DASHBOARD_PG_TYPES = DASHBOARD_COLUMNS.map((c) => `${TRANSACTION_COLUMNS[c]}[]`);

/** mulberry32: a small seeded generator, so that both databases get the same rows. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PAYIN_FLOWS = ['onsite', 'onsite', 'onsite', 'offsite', 'offsite', 'p2p'] as const;

/**
 * Makes the rows of one merchant, oldest first (as a running gateway writes them, so the table's
 * physical order follows created_at): pay-ins 70 % (onsite, offsite, p2p) and payouts 30 %;
 * SUCCESS 80 %, FAILED 12 %, the rest PENDING (or PROCESSING for payouts); amounts log-uniform
 * from ₹1.00 to ₹1,00,000.00; a UTR on every SUCCESS; random 32-character payment_ids.
 * Open rows are due a day after `now` (expiry and next action), so the worker leaves them alone
 * during the run and the counts the benchmark checks do not move.
 */
function* dashboardRows(
  merchantId: string,
  count: number,
  tag: string,
  now: number,
  days: number,
  random: () => number,
): Generator<FillRow> {
  const span = days * 86_400_000;
  const start = now - span;
  const later = now + 86_400_000;
  for (let i = 0; i < count; i++) {
    let paymentId = '';
    for (let c = 0; c < 32; c++) paymentId += BASE62[Math.floor(random() * 62)];
    const createdAt = start + Math.floor(((i + random()) * span) / count);
    const payin = random() < 0.7;
    const u = random();
    const status = u < 0.8 ? 'SUCCESS' : u < 0.92 ? 'FAILED' : !payin && u >= 0.96 ? 'PROCESSING' : 'PENDING';
    const open = status === 'PENDING' || status === 'PROCESSING';
    const finalizedAt = open ? null : createdAt + 2_000 + Math.floor(random() * 120_000);
    yield [
      paymentId,
      merchantId,
      payin ? 'payin' : 'payout',
      payin ? PAYIN_FLOWS[Math.floor(random() * PAYIN_FLOWS.length)]! : 'payout',
      `${tag}-${i}`,
      Math.round(100 * 10 ** (5 * random())),
      'INR',
      status,
      status === 'SUCCESS' ? String(100_000_000_000 + i) : '',
      `sbx_${tag}_${i}`,
      'sandbox',
      'Bench Customer',
      '9999999999',
      'customer@example.com',
      payin ? null : 'Bench Receiver',
      payin ? null : '123456789012',
      payin ? null : 'HDFC0001234',
      `h${tag}${i}`,
      '{}',
      payin ? (open ? later : createdAt + 900_000) : null,
      open ? later : null,
      createdAt,
      finalizedAt ?? createdAt,
      finalizedAt,
    ];
  }
}

/**
 * Loads the dashboard scenario's transactions: `rows` for one merchant and `otherRows` for a
 * second, into a migrated database (the dashboard's indexes exist, so their upkeep is part of
 * the load). SQLite: one prepared INSERT through better-sqlite3, 50,000 rows per transaction.
 * PostgreSQL: one INSERT … SELECT FROM unnest(arrays) per 20,000 rows. Then ANALYZE (see there).
 */
export async function fillDashboard(url: string, fill: DashboardFill): Promise<void> {
  const random = seeded(20261125);
  const total = fill.rows + fill.otherRows;
  const all = (function* () {
    yield* dashboardRows(fill.merchantId, fill.rows, 'bd', fill.now, fill.days, random);
    yield* dashboardRows(fill.otherMerchantId, fill.otherRows, 'bo', fill.now, fill.days, random);
  })();
  const columns = DASHBOARD_COLUMNS.join(', ');
  const file = sqlitePath(url);
  if (file !== null) {
    const db = new BetterSqlite3(file);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const insert = db.prepare(
        `insert into transactions (${columns}) values (${DASHBOARD_COLUMNS.map(() => '?').join(', ')})`,
      );
      const batch = db.transaction((rows: FillRow[]) => {
        for (const row of rows) insert.run(...row);
      });
      let done = 0;
      for (const rows of chunks(all, 50_000)) {
        batch(rows);
        done += rows.length;
        fill.progress?.(done, total);
      }
      // The gateway itself never runs ANALYZE on SQLite; without sqlite_stat1 the planner picks
      // an index by its shape alone. Analysed, it knows how selective merchant, kind and status
      // are, as it would on a database someone ran `PRAGMA optimize` on. The figures are for that.
      db.exec('analyze');
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const unnest = DASHBOARD_PG_TYPES.map((t, i) => `$${i + 1}::${t}`).join(', ');
    let done = 0;
    for (const rows of chunks(all, 20_000)) {
      const arrays = DASHBOARD_COLUMNS.map((_, c) => rows.map((r) => r[c]));
      await client.query(`insert into transactions (${columns}) select * from unnest(${unnest})`, arrays);
      done += rows.length;
      fill.progress?.(done, total);
    }
    // Autovacuum analyses a table some time after a bulk load; until then the planner estimates
    // from an empty table. ANALYZE now, so the plans are those of a table that grew over months.
    await client.query('analyze transactions');
  } finally {
    await client.end();
  }
}

function* chunks<T>(items: Iterable<T>, size: number): Generator<T[]> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length) yield chunk;
}
