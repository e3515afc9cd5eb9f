/**
 * The dashboard as a browser uses it, timed: signing in through the HTML form, reading pages of
 * the transactions list (following their `rel="next"` links), and streaming a CSV export while
 * the gateway's resident memory is sampled.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { cpuSeconds, percentile } from './load.ts';
import { sampleRss, type Server } from './processes.ts';

/** How often the gateway's RSS is read during an export. */
const RSS_EVERY_MS = 50;

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

export interface ExportMeasure {
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
export async function signIn(gateway: Server, email: string, password: string): Promise<string> {
  const pool = new Pool(gateway.baseUrl, { connections: 1 });
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
    body: new URLSearchParams({ email, password, csrf }).toString(),
  });
  await posted.body.text();
  const session = cookieFrom(posted.headers['set-cookie'], 'paygate_session');
  if (posted.statusCode !== 303 || !session)
    throw new Error(`POST /dashboard/sign-in answered ${posted.statusCode} without a session`);
  await pool.close();
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

/** The pages after `first` reached by their `rel="next"` links, at most `pages` of them. */
export async function followNext(gateway: Server, cookie: string, first: string, pages: number) {
  const pool = new Pool(gateway.baseUrl, { connections: 1 });
  const walked: string[] = [];
  let link = (await getPage(pool, cookie, first)).next;
  while (link && walked.length < pages) {
    walked.push(link);
    link = (await getPage(pool, cookie, link)).next;
  }
  await pool.close();
  return walked;
}

function summarise(
  ms: number[],
  failures: number,
  wallS: number,
  concurrency: number,
  cpuS: number | null,
): Percentiles {
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
export async function measureUrls(
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
export async function measureExport(
  gateway: Server,
  cookie: string,
  url: string,
  expectedRows: number,
): Promise<ExportMeasure> {
  const hwmBefore = sampleRss(gateway.pid).stop().peakMb;
  const rss = sampleRss(gateway.pid);
  const rssBeforeMb = rss.mark();
  let sampledPeak = rssBeforeMb;
  const timer = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rss.mark());
  }, RSS_EVERY_MS);
  const t0 = performance.now();
  let csv: { lines: number; ids: Set<string>; bytes: number };
  try {
    csv = await readCsv(gateway, cookie, url);
  } finally {
    clearInterval(timer);
  }
  const seconds = (performance.now() - t0) / 1000;
  const end = rss.stop();
  const peak = Math.max(sampledPeak, end.sampledPeakMb, end.peakMb > hwmBefore ? end.peakMb : 0);
  return {
    url,
    expectedRows,
    rowsReceived: Math.max(0, csv.lines - 1),
    distinctIds: csv.ids.size,
    bytes: csv.bytes,
    seconds: Math.round(seconds * 100) / 100,
    rssBeforeMb: Math.round(rssBeforeMb * 10) / 10,
    peakExtraMb: Math.round((peak - rssBeforeMb) * 10) / 10,
  };
}

/** GETs a CSV and reads it as it arrives: its lines (the header among them), payment_ids and bytes. */
async function readCsv(gateway: Server, cookie: string, url: string) {
  const pool = new Pool(gateway.baseUrl, { connections: 1 });
  const ids = new Set<string>();
  let lines = 0;
  let bytes = 0;
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
    await pool.close();
  }
  return { lines, ids, bytes };
}
