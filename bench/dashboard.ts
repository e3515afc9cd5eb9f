/**
 * Dashboard: is the transactions list fast at 1,000,000 rows, and does the CSV export stream?
 * One merchant's transactions (a realistic mix, plus a few of a second merchant's) are bulk-loaded
 * into a migrated database, a dashboard user signs in to the gateway through its HTML form, and
 * the list is read filtered by kind, status and a date range: the first page, the page reached by
 * following 100 `rel="next"` links, a cursor deep into the range, and the same with an amount
 * range. Then a filter matching about 100,000 rows is exported as CSV while the gateway's RSS is
 * sampled. The figures are reported against the marks (p95 ≤ 100 ms; under 50 MB of extra
 * RSS for the export); nothing fails on them.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { cpuSeconds, type Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { paygateCli, ROOT, sampleRss, startGateway, type Server } from './processes.ts';
import { createFundedMerchant, GATEWAY_ENV, profileFlags } from './gateway.ts';
import { connect, engineVersion, fillDashboard, freshDatabase, type RawConnection } from './store.ts';

/** Sequential requests per measured variant, after WARM_UP unmeasured ones. */
const SAMPLES = 200;
const WARM_UP = 20;
/** `rel="next"` links followed to reach the deep page. */
const PAGES_WALKED = 100;
/** Rows the measured export should match (the filter takes whole IST days until it has them). */
const EXPORT_TARGET = 100_000;
/** How often the gateway's RSS is read during an export. */
const RSS_EVERY_MS = 50;
/** The marks of the issue: the list's p95, and the export's extra resident memory. */
export const P95_TARGET_MS = 100;
export const EXPORT_RSS_TARGET_MB = 50;

/** The rows are spread over the last DAYS days; the list's filter covers LIST_DAYS of them. */
const DAYS = 90;
const LIST_DAYS = 60;
/** Rows of the second merchant. */
const OTHER_ROWS = 1_000;

const EMAIL = 'bench@example.com';
const PASSWORD = 'bench-dashboard-password';

/** IST is UTC+05:30 all year (CONTRACT §11: the list's dates are IST days, `to` inclusive). */
const IST_OFFSET_MS = 330 * 60_000;
const DAY_MS = 86_400_000;

/** The IST day of an instant, YYYY-MM-DD. */
function istDate(at: number): string {
  return new Date(at + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** The first instant of an IST day (YYYY-MM-DD). */
function istDayStart(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) - IST_OFFSET_MS;
}

/** The list's query as the dashboard's filter form sends it (amounts in rupees). */
interface ListQuery {
  kind?: 'payin' | 'payout';
  status?: 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';
  from?: string;
  to?: string;
  min?: string;
  max?: string;
  q?: string;
}

export interface Percentiles {
  samples: number;
  concurrency: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers per second over the measurement. */
  perS: number;
  /** Answers other than 200, and requests that failed. */
  failures: number;
  /** The gateway's CPU time (user + system) per request. */
  cpuMsPerReq: number | null;
}

export interface VariantResult {
  name: string;
  title: string;
  /** The measured URL's path and query. */
  url: string;
  /** Rows of the merchant matching the filter, counted with SQL. */
  matching: number;
  /** Rows on the measured page (50 unless the filter runs out). */
  rowsOnPage: number;
  latency: Percentiles;
  /** p95 within P95_TARGET_MS and every answer a 200. */
  met: boolean;
}

export interface ExportResult {
  url: string;
  /** Rows the filter matches, counted with SQL. */
  expectedRows: number;
  /** Lines of the CSV after its header, and distinct payment_ids among them. */
  rowsReceived: number;
  distinctIds: number;
  bytes: number;
  seconds: number;
  /** The gateway's RSS just before the export, and its highest during it less that. */
  rssBeforeMb: number;
  peakExtraMb: number;
  /** Row count right, no row twice, and extra RSS under EXPORT_RSS_TARGET_MB. */
  met: boolean;
}

export interface DashboardReport {
  kind: 'sqlite' | 'postgres';
  engine: string;
  rowsLoaded: number;
  otherMerchantRows: number;
  loadSeconds: number;
  /** The list filter's kind, status and IST days. */
  filter: string;
  variants: VariantResult[];
  /** The measured exports (two, one after the other, after a small warm-up export). */
  exports: ExportResult[];
  peakRssMb: number;
}

function queryString(query: ListQuery, after?: string): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  if (after !== undefined) params.set('after', after);
  return params.toString();
}

/** Rupees as the form takes them ("5000.00") to paise. */
function paise(rupees: string): number {
  return Math.round(Number(rupees) * 100);
}

/** The WHERE clause of a list query over one merchant's rows, for counting with SQL. */
function whereOf(
  conn: RawConnection,
  merchantId: string,
  query: ListQuery,
): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (v: unknown) => {
    params.push(v);
    return conn.kind === 'sqlite' ? '?' : `$${params.length}`;
  };
  const parts = [`merchant_id = ${p(merchantId)}`];
  if (query.kind) parts.push(`kind = ${p(query.kind)}`);
  if (query.status) parts.push(`status = ${p(query.status)}`);
  if (query.from) parts.push(`created_at >= ${p(istDayStart(query.from))}`);
  if (query.to) parts.push(`created_at < ${p(istDayStart(query.to) + DAY_MS)}`);
  if (query.min) parts.push(`amount >= ${p(paise(query.min))}`);
  if (query.max) parts.push(`amount <= ${p(paise(query.max))}`);
  if (query.q) parts.push(`merchant_order_no = ${p(query.q)}`);
  return { text: parts.join(' and '), params };
}

async function countOf(conn: RawConnection, merchantId: string, query: ListQuery): Promise<number> {
  const w = whereOf(conn, merchantId, query);
  const [row] = await conn.rows<{ n: number | string }>(
    `select count(*) as n from transactions where ${w.text}`,
    w.params,
  );
  return Number(row?.n ?? 0);
}

/** The list's cursor (`created_at.payment_id`) of the row `offset` rows into the filter's order. */
async function cursorAt(
  conn: RawConnection,
  merchantId: string,
  query: ListQuery,
  offset: number,
): Promise<string | null> {
  const w = whereOf(conn, merchantId, query);
  const [row] = await conn.rows<{ created_at: number | string; payment_id: string }>(
    `select created_at, payment_id from transactions where ${w.text}
     order by created_at desc, payment_id desc limit 1 offset ${Math.max(0, Math.floor(offset))}`,
    w.params,
  );
  return row ? `${row.created_at}.${row.payment_id}` : null;
}

/**
 * The export's filter: `base` over the newest whole IST days before today until about `target`
 * rows match (counted with SQL per day), so that the export's size does not hang on the load's
 * exact spread.
 */
async function exportQuery(
  conn: RawConnection,
  merchantId: string,
  base: ListQuery,
  to: string,
  target: number,
): Promise<ListQuery> {
  const w = whereOf(conn, merchantId, { ...base, to });
  const days = await conn.rows<{ d: number | string; n: number | string }>(
    `select (created_at + ${IST_OFFSET_MS}) / ${DAY_MS} as d, count(*) as n from transactions
     where ${w.text} group by (created_at + ${IST_OFFSET_MS}) / ${DAY_MS} order by d desc`,
    w.params,
  );
  let sum = 0;
  let from = to;
  for (const day of days) {
    sum += Number(day.n);
    // d counts IST days since the epoch, so d days after it is that IST day's date.
    from = new Date(Number(day.d) * DAY_MS).toISOString().slice(0, 10);
    if (sum >= target) break;
  }
  return { ...base, from, to };
}

/** Creates the dashboard user through the CLI, its password on standard input. */
function createUser(databaseUrl: string, merchantId: string): void {
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/paygate.js'),
      'user',
      'create',
      '--email',
      EMAIL,
      '--merchant',
      merchantId,
      '--password-stdin',
      '--json',
    ],
    {
      env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: databaseUrl },
      input: `${PASSWORD}\n`,
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`paygate user create failed (${r.status}): ${r.stdout}${r.stderr}`);
}

/** The value of cookie `name` among a response's set-cookie headers. */
function cookieFrom(setCookie: string | string[] | undefined, name: string): string | null {
  for (const line of [setCookie ?? []].flat()) {
    const m = new RegExp(`^${name}=([^;]*)`).exec(line);
    if (m?.[1]) return m[1];
  }
  return null;
}

/** Signs in through the HTML form, as a browser does; returns the session's cookie header. */
async function signIn(pool: Pool): Promise<string> {
  const form = await pool.request({ method: 'GET', path: '/dashboard/sign-in' });
  const page = await form.body.text();
  const token = cookieFrom(form.headers['set-cookie'], 'paygate_signin');
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  if (form.statusCode !== 200 || !token || !csrf)
    throw new Error(`GET /dashboard/sign-in answered ${form.statusCode} without its token`);
  const posted = await pool.request({
    method: 'POST',
    path: '/dashboard/sign-in',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `paygate_signin=${token}`,
    },
    body: new URLSearchParams({ email: EMAIL, password: PASSWORD, csrf }).toString(),
  });
  await posted.body.text();
  const session = cookieFrom(posted.headers['set-cookie'], 'paygate_session');
  if (posted.statusCode !== 303 || !session)
    throw new Error(`POST /dashboard/sign-in answered ${posted.statusCode} without a session`);
  return `paygate_session=${session}`;
}

interface Page {
  status: number;
  ms: number;
  rows: number;
  /** The `rel="next"` link's path and query, or null on the last page. */
  next: string | null;
}

/** GETs one page of the list and reads it whole; `ms` runs until its last byte. */
async function getPage(pool: Pool, cookie: string, url: string): Promise<Page> {
  const t0 = performance.now();
  const res = await pool.request({ method: 'GET', path: url, headers: { cookie } });
  const text = await res.body.text();
  const ms = performance.now() - t0;
  const next = /<a rel="next" href="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&') ?? null;
  return { status: res.statusCode, ms, rows: text.split('href="/dashboard/transactions/').length - 1, next };
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summarise(ms: number[], failures: number, wallS: number, concurrency: number, cpuS: number | null) {
  const sorted = [...ms].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    samples: ms.length,
    concurrency,
    p50Ms: round(percentile(sorted, 50)),
    p95Ms: round(percentile(sorted, 95)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? NaN),
    perS: Math.round(ms.length / wallS),
    failures,
    cpuMsPerReq: cpuS === null ? null : Math.round((cpuS / ms.length) * 1000 * 100) / 100,
  };
}

/**
 * `samples` requests for `urls` (taken in turn), `concurrency` at a time, each connection one
 * request after another; after `warmUp` unmeasured ones.
 */
async function measureUrls(
  gateway: Server,
  cookie: string,
  urls: string[],
  samples: number,
  concurrency: number,
  warmUp: number,
): Promise<{ latency: Percentiles; rows: number }> {
  const pool = new Pool(gateway.baseUrl, { connections: concurrency, pipelining: 1 });
  try {
    let turn = 0;
    const nextUrl = () => urls[turn++ % urls.length]!;
    for (let i = 0; i < warmUp; i++) await getPage(pool, cookie, nextUrl());
    turn = 0;
    const ms: number[] = [];
    let failures = 0;
    let rows = -1;
    let left = samples;
    const cpu0 = cpuSeconds(gateway.pid);
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left > 0) {
          left--;
          try {
            const page = await getPage(pool, cookie, nextUrl());
            ms.push(page.ms);
            if (page.status !== 200) failures++;
            if (rows < 0) rows = page.rows;
          } catch {
            failures++;
          }
        }
      }),
    );
    const wallS = (performance.now() - t0) / 1000;
    const cpu1 = cpuSeconds(gateway.pid);
    const cpuS = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
    return { latency: summarise(ms, failures, wallS, concurrency, cpuS), rows: Math.max(rows, 0) };
  } finally {
    await pool.close();
  }
}

/**
 * Streams one CSV export, counting its bytes, lines and distinct payment_ids (the first cell),
 * while the gateway's RSS is read every RSS_EVERY_MS; the kernel's own peak (VmHWM) counts too
 * when it rose during the export.
 */
async function measureExport(
  gateway: Server,
  cookie: string,
  url: string,
  expectedRows: number,
): Promise<ExportResult> {
  const hwmBefore = sampleRss(gateway.pid).stop().peakMb;
  const rss = sampleRss(gateway.pid);
  const rssBeforeMb = rss.mark();
  let sampledPeak = rssBeforeMb;
  const timer = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rss.mark());
  }, RSS_EVERY_MS);
  const pool = new Pool(gateway.baseUrl, { connections: 1 });
  const ids = new Set<string>();
  let lines = 0;
  let bytes = 0;
  const t0 = performance.now();
  try {
    const res = await pool.request({ method: 'GET', path: url, headers: { cookie } });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      throw new Error(`GET ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    }
    let rest = '';
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      bytes += buf.length;
      const parts = (rest + buf.toString('utf8')).split('\r\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        // The header is line 0; a payment_id never needs quoting, so it ends at the first comma.
        if (lines++ > 0) ids.add(line.slice(0, line.indexOf(',')));
      }
    }
    if (rest !== '') throw new Error('the CSV does not end with a line break');
  } finally {
    clearInterval(timer);
    await pool.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  const end = rss.stop();
  const peak = Math.max(sampledPeak, end.sampledPeakMb, end.peakMb > hwmBefore ? end.peakMb : 0);
  const rowsReceived = Math.max(0, lines - 1);
  const peakExtraMb = Math.round((peak - rssBeforeMb) * 10) / 10;
  return {
    url,
    expectedRows,
    rowsReceived,
    distinctIds: ids.size,
    bytes,
    seconds: Math.round(seconds * 100) / 100,
    rssBeforeMb: Math.round(rssBeforeMb * 10) / 10,
    peakExtraMb,
    met: rowsReceived === expectedRows && ids.size === expectedRows && peakExtraMb < EXPORT_RSS_TARGET_MB,
  };
}

export async function runDashboard(opts: BenchOptions, progress: Progress): Promise<DashboardReport> {
  const db = await freshDatabase(opts.db, 'dash');
  const kind = db.kind;
  let gateway: Server | null = null;
  let conn: RawConnection | null = null;
  try {
    progress.line(`[${kind}] dashboard: two merchants and a dashboard user through the CLI`);
    const merchant = createFundedMerchant(db.url);
    const other = String(
      paygateCli(['merchant', 'create', '--name', 'Bench Merchant 2'], { DATABASE_URL: db.url }).merchant_id,
    );
    createUser(db.url, merchant.merchantId);

    const rows = opts.dashboardRows;
    const now = Date.now();
    const t0 = Date.now();
    await fillDashboard(db.url, {
      merchantId: merchant.merchantId,
      rows,
      otherMerchantId: other,
      otherRows: OTHER_ROWS,
      now,
      days: DAYS,
      progress: (done, total) =>
        progress.update(
          `[${kind}] dashboard: loaded ${done.toLocaleString('en')} of ${total.toLocaleString('en')} rows`,
        ),
    });
    const loadSeconds = (Date.now() - t0) / 1000;
    progress.line(
      `[${kind}] dashboard: loaded ${(rows + OTHER_ROWS).toLocaleString('en')} rows and analysed in ${loadSeconds.toFixed(1)} s`,
    );
    const engine = await engineVersion(db.url);
    gateway = await startGateway(db.url, GATEWAY_ENV, profileFlags(opts));
    const rss = sampleRss(gateway.pid);
    const signInPool = new Pool(gateway.baseUrl, { connections: 1 });
    const cookie = await signIn(signInPool);
    await signInPool.close();

    // The list's filter: successful pay-ins of the last LIST_DAYS whole IST days before today.
    const to = istDate(now - DAY_MS);
    const list: ListQuery = {
      kind: 'payin',
      status: 'SUCCESS',
      from: istDate(now - LIST_DAYS * DAY_MS),
      to,
    };
    // The same days' failed pay-ins: a seventh as many rows, so a cursor 90 % in lies further back.
    const failed: ListQuery = { ...list, status: 'FAILED' };
    // A wide amount band (about a third of the rows), a narrow one (about 0.1 %) and one that
    // matches nothing: the index gives the rows in order, and the amount is checked row by row
    // until a page is full or the range ends.
    const wide: ListQuery = { ...list, min: '100.00', max: '5000.00' };
    const narrow: ListQuery = { ...list, min: '99000.00', max: '100000.00' };
    // Above every loaded amount (₹1,00,000.00 at most): nothing matches, so the whole range is read.
    const none: ListQuery = { ...list, min: '100000.01' };
    conn = await connect(db.url);
    const c = conn;
    const count = (q: ListQuery) => countOf(c, merchant.merchantId, q);
    // One after another: a pg client runs one query at a time.
    const listCount = await count(list);
    const wideCount = await count(wide);
    const narrowCount = await count(narrow);
    const noneCount = await count(none);
    const failedCount = await count(failed);
    const path = (q: ListQuery, after?: string) => `/dashboard/transactions?${queryString(q, after)}`;

    // Pages 2 to 101 by their rel="next" links; the last one is the deep page measured below.
    progress.update(`[${kind}] dashboard: following ${PAGES_WALKED} next-page links`);
    const walkPool = new Pool(gateway.baseUrl, { connections: 1 });
    const walked: string[] = [];
    let link = (await getPage(walkPool, cookie, path(list))).next;
    while (link && walked.length < PAGES_WALKED) {
      walked.push(link);
      link = (await getPage(walkPool, cookie, link)).next;
    }
    await walkPool.close();
    const deepPage = walked.at(-1) ?? path(list);

    const deepCursor = (q: ListQuery, n: number) => cursorAt(c, merchant.merchantId, q, n * 0.9);
    const listDeep = await deepCursor(list, listCount);
    const wideDeep = await deepCursor(wide, wideCount);
    const failedDeep = await deepCursor(failed, failedCount);
    const orderNo = `bd-${Math.floor(rows / 2)}`;

    const variants: {
      name: string;
      title: string;
      urls: string[];
      matching: number;
      concurrency?: number;
    }[] = [
      { name: 'first', title: 'first page', urls: [path(list)], matching: listCount },
      {
        name: 'walk',
        title: `pages 2–${walked.length + 1}, each once, by rel="next"`,
        urls: walked,
        matching: listCount,
      },
      {
        name: 'deep_page',
        title: `page ${walked.length + 1} (after ${walked.length} next links)`,
        urls: [deepPage],
        matching: listCount,
      },
      {
        name: 'deep_cursor',
        title: 'cursor 90 % into the range',
        urls: [listDeep ? path(list, listDeep) : path(list)],
        matching: listCount,
      },
      {
        name: 'failed_deep',
        title: 'status FAILED, cursor 90 % in',
        urls: [failedDeep ? path(failed, failedDeep) : path(failed)],
        matching: failedCount,
      },
      {
        name: 'first_c4',
        title: 'first page, 4 at a time',
        urls: [path(list)],
        matching: listCount,
        concurrency: 4,
      },
      {
        name: 'amount_first',
        title: `+ amount ₹${wide.min}–₹${wide.max}, first page`,
        urls: [path(wide)],
        matching: wideCount,
      },
      {
        name: 'amount_deep',
        title: `+ amount ₹${wide.min}–₹${wide.max}, cursor 90 % in`,
        urls: [wideDeep ? path(wide, wideDeep) : path(wide)],
        matching: wideCount,
      },
      {
        name: 'amount_narrow',
        title: `+ amount ₹${narrow.min}–₹${narrow.max}, first page`,
        urls: [path(narrow)],
        matching: narrowCount,
      },
      {
        name: 'amount_none',
        title: `+ amount from ₹${none.min}: nothing matches`,
        urls: [path(none)],
        matching: noneCount,
      },
      {
        name: 'search',
        title: 'search by order no., no other filter',
        urls: [path({ q: orderNo })],
        matching: await count({ q: orderNo }),
      },
    ];
    const results: VariantResult[] = [];
    for (const v of variants) {
      const concurrency = v.concurrency ?? 1;
      const samples = v.name === 'walk' ? v.urls.length : SAMPLES * concurrency;
      progress.update(`[${kind}] dashboard: ${v.title}`);
      const m = await measureUrls(
        gateway,
        cookie,
        v.urls,
        samples,
        concurrency,
        v.name === 'walk' ? 0 : WARM_UP,
      );
      const r: VariantResult = {
        name: v.name,
        title: v.title,
        url: v.urls[0]!,
        matching: v.matching,
        rowsOnPage: m.rows,
        latency: m.latency,
        met: m.latency.p95Ms <= P95_TARGET_MS && m.latency.failures === 0,
      };
      results.push(r);
      progress.line(
        `[${kind}] dashboard ${r.title}: p50 ${r.latency.p50Ms} ms, p95 ${r.latency.p95Ms} ms, p99 ${r.latency.p99Ms} ms (${r.rowsOnPage} rows, ${r.latency.failures} failures)`,
      );
    }

    // The export: a small one first (the code paths warm), then the measured one twice.
    const exportFilter = await exportQuery(
      c,
      merchant.merchantId,
      { kind: 'payin', status: 'SUCCESS' },
      to,
      EXPORT_TARGET,
    );
    const expected = await count(exportFilter);
    const csvPath = (q: ListQuery) => `/dashboard/transactions.csv?${queryString(q)}`;
    await measureExport(
      gateway,
      cookie,
      csvPath({ ...exportFilter, from: to }),
      await count({ ...exportFilter, from: to }),
    );
    const exports: ExportResult[] = [];
    for (let i = 1; i <= 2; i++) {
      progress.update(`[${kind}] dashboard: CSV export of ${expected.toLocaleString('en')} rows (${i} of 2)`);
      const e = await measureExport(gateway, cookie, csvPath(exportFilter), expected);
      exports.push(e);
      progress.line(
        `[${kind}] dashboard CSV export ${i}: ${e.rowsReceived.toLocaleString('en')} rows (expected ${e.expectedRows.toLocaleString('en')}, ${e.distinctIds.toLocaleString('en')} distinct), ${(e.bytes / 1e6).toFixed(1)} MB in ${e.seconds} s, RSS ${e.rssBeforeMb} MB + ${e.peakExtraMb} MB`,
      );
    }
    return {
      kind,
      engine,
      rowsLoaded: rows,
      otherMerchantRows: OTHER_ROWS,
      loadSeconds,
      filter: `kind=payin, status=SUCCESS, ${list.from} to ${list.to} (IST days)`,
      variants: results,
      exports,
      peakRssMb: rss.stop().peakMb,
    };
  } finally {
    await conn?.close();
    await gateway?.stop();
    await db.drop();
  }
}
