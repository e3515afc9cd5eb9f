/**
 * Growth: does the gateway stay as fast when the transactions table is large, and how much do
 * concurrent payouts on one wallet contend? payin_status is measured at 10k rows and again after
 * bulk-loading up to 1M (the latency must stay flat: every query is by primary key), then payout
 * creation with every request on one wallet versus spread over 100 merchants' wallets.
 */
import { buildServices } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/database.ts';
import { drive, medianResult, type LoadResult, type Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { sampleRss, startGateway, type Server } from './processes.ts';
import { freshPosts, payoutBody, statusPosts } from './requests.ts';
import { createFundedMerchant, GATEWAY_ENV, profileFlags, warmupSeconds } from './gateway.ts';
import { engineVersion, fillPayins, freshDatabase } from './store.ts';

export interface GrowthReport {
  kind: 'sqlite' | 'postgres';
  engine: string;
  rowsLoaded: number;
  loadSeconds: number;
  status: { rows: number; result: LoadResult }[];
  payouts: { wallets: number; result: LoadResult }[];
  peakRssMb: number;
}

const FIRST_ROWS = 10_000;

async function measure(
  server: Server,
  requests: () => ReturnType<typeof freshPosts>,
  opts: BenchOptions,
  progress: Progress,
  label: string,
): Promise<LoadResult> {
  const base = { baseUrl: server.baseUrl, pid: server.pid, connections: opts.connections };
  await drive(
    { ...base, durationS: warmupSeconds(opts.durationS), requests: requests(), label: `${label} warm-up` },
    progress,
  );
  const runs: LoadResult[] = [];
  for (let i = 1; i <= opts.runs; i++) {
    runs.push(await drive({ ...base, durationS: opts.durationS, requests: requests(), label }, progress));
  }
  const r = medianResult(runs);
  const other =
    r.non2xx || r.errors
      ? ` (answers: ${JSON.stringify(r.statusCodes)}, ${r.errors} errors or timeouts)`
      : '';
  progress.line(
    `${label}: ${r.rps.toFixed(0)} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, ${r.cpuUsPerReq?.toFixed(0) ?? '?'} µs CPU/request${other}`,
  );
  return r;
}

/** `count` more sandbox merchants, each with a funded wallet; returns their API keys. */
async function extraMerchants(databaseUrl: string, count: number): Promise<string[]> {
  const config = loadConfig({ DATABASE_URL: databaseUrl });
  const database = openDatabase(databaseUrl);
  try {
    const services = buildServices(config, database);
    const keys: string[] = [];
    for (let i = 0; i < count; i++) {
      const m = await services.merchants.create({ name: `Bench Merchant ${i + 2}` });
      await services.wallets.topUp(m.merchant_id, 'INR', 100_000_000_00);
      keys.push(m.api_key);
    }
    return keys;
  } finally {
    await database.close();
  }
}

export async function runGrowth(opts: BenchOptions, progress: Progress): Promise<GrowthReport> {
  const db = await freshDatabase(opts.db, 'growth');
  const kind = db.kind;
  let gateway: Server | null = null;
  try {
    progress.line(`[${kind}] growth: setting up with ${FIRST_ROWS.toLocaleString('en')} pay-ins`);
    const merchant = createFundedMerchant(db.url);
    // Made before the gateway starts: on SQLite a second writer would wait on a busy gateway.
    const keys = [merchant.apiKey, ...(await extraMerchants(db.url, 99))];
    await fillPayins(db.url, merchant.merchantId, 1, FIRST_ROWS);
    const engine = await engineVersion(db.url);
    gateway = await startGateway(db.url, GATEWAY_ENV, profileFlags(opts));
    const rss = sampleRss(gateway.pid);
    const status: GrowthReport['status'] = [];
    const key = merchant.apiKey;

    status.push({
      rows: FIRST_ROWS,
      result: await measure(
        gateway,
        () => statusPosts('/payments/payin_status', key, FIRST_ROWS),
        opts,
        progress,
        `[${kind}] payin_status at 10k rows`,
      ),
    });

    const total = Math.max(opts.growthRows, FIRST_ROWS);
    const t0 = Date.now();
    await fillPayins(db.url, merchant.merchantId, FIRST_ROWS + 1, total, {
      progress: (done) =>
        progress.update(
          `[${kind}] growth: loaded ${(FIRST_ROWS + done).toLocaleString('en')} of ${total.toLocaleString('en')} rows`,
        ),
    });
    const loadSeconds = (Date.now() - t0) / 1000;
    progress.line(
      `[${kind}] growth: loaded ${total.toLocaleString('en')} rows in ${loadSeconds.toFixed(1)} s`,
    );

    status.push({
      rows: total,
      result: await measure(
        gateway,
        () => statusPosts('/payments/payin_status', key, total),
        opts,
        progress,
        `[${kind}] payin_status at ${total.toLocaleString('en')} rows`,
      ),
    });

    const payouts: GrowthReport['payouts'] = [];
    payouts.push({
      wallets: 1,
      result: await measure(
        gateway,
        () => freshPosts('/payments/payout', [key], () => payoutBody('g1')),
        opts,
        progress,
        `[${kind}] payouts on 1 wallet`,
      ),
    });
    payouts.push({
      wallets: keys.length,
      result: await measure(
        gateway,
        () => freshPosts('/payments/payout', keys, () => payoutBody('gc')),
        opts,
        progress,
        `[${kind}] payouts over ${keys.length} wallets`,
      ),
    });
    return { kind, engine, rowsLoaded: total, loadSeconds, status, payouts, peakRssMb: rss.stop().peakMb };
  } finally {
    await gateway?.stop();
    await db.drop();
  }
}
