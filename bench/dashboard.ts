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
import {
  followNext,
  measureExport,
  measureUrls,
  signIn,
  type ExportMeasure,
  type Percentiles,
} from './dashboard-client.ts';
import {
  countOf,
  csvPath,
  cursorAt,
  exportQuery,
  listFilters,
  listPath,
  type ListFilters,
  type ListQuery,
} from './dashboard-filters.ts';
import type { Progress } from './load.ts';
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

export interface ExportResult extends ExportMeasure {
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

interface Loaded {
  /** The merchant the dashboard user belongs to. */
  merchantId: string;
  rows: number;
  /** The instant the rows' days count back from. */
  now: number;
  loadSeconds: number;
}

/** Two merchants and the dashboard user through the CLI, then `rows` transactions bulk-loaded. */
async function loadTransactions(
  url: string,
  kind: string,
  rows: number,
  progress: Progress,
): Promise<Loaded> {
  progress.line(`[${kind}] dashboard: two merchants and a dashboard user through the CLI`);
  const merchant = createFundedMerchant(url);
  const other = String(
    paygateCli(['merchant', 'create', '--name', 'Bench Merchant 2'], { DATABASE_URL: url }).merchant_id,
  );
  createUser(url, merchant.merchantId);
  const now = Date.now();
  const t0 = Date.now();
  await fillDashboard(url, {
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
  return { merchantId: merchant.merchantId, rows, now, loadSeconds };
}

/** One measured reading of the list: its URLs (taken in turn) and the rows its filter matches. */
interface Variant {
  name: string;
  title: string;
  urls: string[];
  matching: number;
  concurrency?: number;
}

/**
 * The variants of the list to measure: what each filter matches (counted with SQL), the pages
 * reached by `rel="next"` links, and cursors 90 % into each range.
 */
async function listVariants(
  gateway: Server,
  cookie: string,
  conn: RawConnection,
  loaded: Loaded,
  f: ListFilters,
  progress: Progress,
  kind: string,
): Promise<Variant[]> {
  const count = (q: ListQuery) => countOf(conn, loaded.merchantId, q);
  // One after another: a pg client runs one query at a time.
  const n = {
    list: await count(f.list),
    wide: await count(f.wide),
    narrow: await count(f.narrow),
    none: await count(f.none),
    failed: await count(f.failed),
  };
  // Pages 2 to 101 by their rel="next" links; the last one is the deep page measured below.
  progress.update(`[${kind}] dashboard: following ${PAGES_WALKED} next-page links`);
  const walked = await followNext(gateway, cookie, listPath(f.list), PAGES_WALKED);
  const deepPath = async (q: ListQuery, matching: number) => {
    const cursor = await cursorAt(conn, loaded.merchantId, q, matching * 0.9);
    return cursor ? listPath(q, cursor) : listPath(q);
  };
  const deep = {
    list: await deepPath(f.list, n.list),
    wide: await deepPath(f.wide, n.wide),
    failed: await deepPath(f.failed, n.failed),
  };
  const search: ListQuery = { q: `bd-${Math.floor(loaded.rows / 2)}` };
  return [
    ...pageVariants(f, n, walked, deep),
    ...amountVariants(f, n, deep),
    {
      name: 'search',
      title: 'search by order no., no other filter',
      urls: [listPath(search)],
      matching: await count(search),
    },
  ];
}

type Counts = Record<'list' | 'wide' | 'narrow' | 'none' | 'failed', number>;
type DeepPaths = Record<'list' | 'wide' | 'failed', string>;

/** The list's pages without an amount range: first, walked, deep, by cursor, four at a time. */
function pageVariants(f: ListFilters, n: Counts, walked: string[], deep: DeepPaths): Variant[] {
  return [
    { name: 'first', title: 'first page', urls: [listPath(f.list)], matching: n.list },
    {
      name: 'walk',
      title: `pages 2–${walked.length + 1}, each once, by rel="next"`,
      urls: walked,
      matching: n.list,
    },
    {
      name: 'deep_page',
      title: `page ${walked.length + 1} (after ${walked.length} next links)`,
      urls: [walked.at(-1) ?? listPath(f.list)],
      matching: n.list,
    },
    { name: 'deep_cursor', title: 'cursor 90 % into the range', urls: [deep.list], matching: n.list },
    { name: 'failed_deep', title: 'status FAILED, cursor 90 % in', urls: [deep.failed], matching: n.failed },
    {
      name: 'first_c4',
      title: 'first page, 4 at a time',
      urls: [listPath(f.list)],
      matching: n.list,
      concurrency: 4,
    },
  ];
}

/** The list with an amount range: wide (first page and deep), narrow, and matching nothing. */
function amountVariants(f: ListFilters, n: Counts, deep: DeepPaths): Variant[] {
  const { wide, narrow, none } = f;
  return [
    {
      name: 'amount_first',
      title: `+ amount ₹${wide.min}–₹${wide.max}, first page`,
      urls: [listPath(wide)],
      matching: n.wide,
    },
    {
      name: 'amount_deep',
      title: `+ amount ₹${wide.min}–₹${wide.max}, cursor 90 % in`,
      urls: [deep.wide],
      matching: n.wide,
    },
    {
      name: 'amount_narrow',
      title: `+ amount ₹${narrow.min}–₹${narrow.max}, first page`,
      urls: [listPath(narrow)],
      matching: n.narrow,
    },
    {
      name: 'amount_none',
      title: `+ amount from ₹${none.min}: nothing matches`,
      urls: [listPath(none)],
      matching: n.none,
    },
  ];
}

/** Each variant's latency, one after the other (the walk once through its pages, unwarmed). */
async function measureVariants(
  gateway: Server,
  cookie: string,
  variants: Variant[],
  progress: Progress,
  kind: string,
): Promise<VariantResult[]> {
  const results: VariantResult[] = [];
  for (const v of variants) {
    const concurrency = v.concurrency ?? 1;
    const samples = v.name === 'walk' ? v.urls.length : SAMPLES * concurrency;
    progress.update(`[${kind}] dashboard: ${v.title}`);
    const warmUp = v.name === 'walk' ? 0 : WARM_UP;
    const m = await measureUrls(gateway, cookie, v.urls, samples, concurrency, warmUp);
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
  return results;
}

/** The export: a small one first (the code paths warm), then the measured one twice. */
async function measureExports(
  gateway: Server,
  cookie: string,
  conn: RawConnection,
  merchantId: string,
  to: string,
  progress: Progress,
  kind: string,
): Promise<ExportResult[]> {
  const base: ListQuery = { kind: 'payin', status: 'SUCCESS' };
  const filter = await exportQuery(conn, merchantId, base, to, EXPORT_TARGET);
  const expected = await countOf(conn, merchantId, filter);
  const lastDay = { ...filter, from: to };
  await measureExport(gateway, cookie, csvPath(lastDay), await countOf(conn, merchantId, lastDay));
  const exports: ExportResult[] = [];
  for (let i = 1; i <= 2; i++) {
    progress.update(`[${kind}] dashboard: CSV export of ${expected.toLocaleString('en')} rows (${i} of 2)`);
    const m = await measureExport(gateway, cookie, csvPath(filter), expected);
    const e: ExportResult = {
      ...m,
      met: m.rowsReceived === expected && m.distinctIds === expected && m.peakExtraMb < EXPORT_RSS_TARGET_MB,
    };
    exports.push(e);
    progress.line(
      `[${kind}] dashboard CSV export ${i}: ${e.rowsReceived.toLocaleString('en')} rows (expected ${e.expectedRows.toLocaleString('en')}, ${e.distinctIds.toLocaleString('en')} distinct), ${(e.bytes / 1e6).toFixed(1)} MB in ${e.seconds} s, RSS ${e.rssBeforeMb} MB + ${e.peakExtraMb} MB`,
    );
  }
  return exports;
}

export async function runDashboard(opts: BenchOptions, progress: Progress): Promise<DashboardReport> {
  const db = await freshDatabase(opts.db, 'dash');
  const kind = db.kind;
  let gateway: Server | null = null;
  let conn: RawConnection | null = null;
  try {
    const loaded = await loadTransactions(db.url, kind, opts.dashboardRows, progress);
    const engine = await engineVersion(db.url);
    gateway = await startGateway(db.url, GATEWAY_ENV, profileFlags(opts));
    const rss = sampleRss(gateway.pid);
    const cookie = await signIn(gateway, EMAIL, PASSWORD);
    const filters = listFilters(loaded.now, LIST_DAYS);
    conn = await connect(db.url);
    const variants = await listVariants(gateway, cookie, conn, loaded, filters, progress, kind);
    const results = await measureVariants(gateway, cookie, variants, progress, kind);
    const exports = await measureExports(
      gateway,
      cookie,
      conn,
      loaded.merchantId,
      filters.to,
      progress,
      kind,
    );
    return {
      kind,
      engine,
      rowsLoaded: loaded.rows,
      otherMerchantRows: OTHER_ROWS,
      loadSeconds: loaded.loadSeconds,
      filter: `kind=payin, status=SUCCESS, ${filters.list.from} to ${filters.list.to} (IST days)`,
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
