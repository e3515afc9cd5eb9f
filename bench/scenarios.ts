/**
 * The default scenario set on one database: set-up (a merchant created and funded through the CLI,
 * a bulk-loaded table for status queries), the gateway and the baseline started side by side, then
 * each scenario measured on the gateway and on the baseline, one after the other.
 */
import path from 'node:path';
import type { RequestSpec } from 'autocannon';
import { migrate, openDatabase } from '../src/db/database.ts';
import { measureCallbacks, type CallbackResult } from './callbacks.ts';
import { measureLive, type LiveResult } from './live.ts';
import { drive, medianResult, type LoadResult, type Progress } from './load.ts';
import type { BenchOptions, ScenarioName } from './options.ts';
import { paygateCli, sampleRss, startBaseline, startGateway, type Server } from './processes.ts';
import { freshPosts, payinBody, payoutBody, statusPosts } from './requests.ts';
import { connect, engineVersion, fillPayins, freshDatabase } from './store.ts';

export interface ScenarioRow {
  scenario: string;
  title: string;
  gateway: LoadResult | null;
  baseline: LoadResult | null;
  ratio: number | null;
  /** e.g. "≥ 0.6"; empty when the scenario has no target. */
  target: string;
  met: boolean | null;
  /** Per-run figures when --runs > 1. */
  runs?: { gateway: LoadResult[]; baseline: LoadResult[] };
  note?: string;
}

export interface DatabaseReport {
  kind: 'sqlite' | 'postgres';
  engine: string;
  rows: ScenarioRow[];
  callbacks?: CallbackResult;
  live?: LiveResult;
  rss: { peakMb: number; byScenarioMb: Record<string, number>; target: string; met: boolean };
}

/** Where the gateway stands: its URL, its database and the funded sandbox merchant. */
export interface GatewayHandle {
  server: Server;
  databaseUrl: string;
  merchantId: string;
  apiKey: string;
  webhookSecret: string;
}

/** Environment for every benchmarked gateway. Payouts are not settled during the run (see docs/performance.md). */
export const GATEWAY_ENV: Record<string, string> = {
  SANDBOX_PAYOUT_SETTLE_MS: String(24 * 3600 * 1000),
  ALLOW_PRIVATE_CALLBACK_URLS: 'true',
  CALLBACK_RETRY_INTERVAL_MS: '2000',
  // The drain phase of the callbacks scenario holds answers for a few seconds while a backlog builds.
  CALLBACK_TIMEOUT_MS: '60000',
};

/** node flags that make a server write a CPU profile on exit, with --profile (the baseline's go to DIR/baseline). */
export function profileFlags(opts: BenchOptions, sub = ''): string[] {
  return opts.profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(opts.profileDir, sub)] : [];
}

export function warmupSeconds(durationS: number): number {
  return Math.min(5, Math.max(1, Math.round(durationS / 3)));
}

/** Creates the merchant through the CLI (which also migrates) and funds its wallet. */
export function createFundedMerchant(
  databaseUrl: string,
  name = 'Bench Merchant',
): { merchantId: string; apiKey: string; webhookSecret: string } {
  const created = paygateCli(['merchant', 'create', '--name', name], { DATABASE_URL: databaseUrl });
  const merchantId = String(created.merchant_id);
  paygateCli(['wallet', 'credit', '--merchant', merchantId, '--amount', '1000000000.00'], {
    DATABASE_URL: databaseUrl,
  });
  return { merchantId, apiKey: String(created.api_key), webhookSecret: String(created.webhook_secret) };
}

/** The baseline's database: the same schema (the gateway's migrations) and one merchant row. */
async function prepareBaselineDatabase(url: string, merchantId: string): Promise<void> {
  const database = openDatabase(url);
  await migrate(database);
  await database.close();
  const conn = await connect(url);
  const p = conn.kind === 'sqlite' ? ['?', '?', '?'] : ['$1', '$2', '$3'];
  await conn.run(
    `insert into merchants (id, name, mode, status, callback_url, vpa, webhook_secret, created_at)
     values (${p[0]}, 'Baseline', 'test', 'active', null, ${p[1]}, 'whsec_x', ${p[2]})`,
    [merchantId, 'baseline@paygate', Date.now()],
  );
  await conn.close();
}

export interface Pair {
  name: ScenarioName;
  title: string;
  target: number;
  gateway: () => RequestSpec[];
  baseline: () => RequestSpec[];
}

/** Warm-up, then `runs` measured runs alternating gateway and baseline; medians when runs > 1. */
export async function measurePair(
  pair: Pair,
  gateway: Server,
  baseline: Server,
  opts: BenchOptions,
  progress: Progress,
  kind: string,
): Promise<ScenarioRow> {
  const warm = warmupSeconds(opts.durationS);
  const common = { durationS: warm, connections: opts.connections };
  const gw = { baseUrl: gateway.baseUrl, pid: gateway.pid };
  const bl = { baseUrl: baseline.baseUrl, pid: baseline.pid };
  await drive(
    { ...common, ...gw, requests: pair.gateway(), label: `[${kind}] ${pair.name} gateway warm-up` },
    progress,
  );
  await drive(
    { ...common, ...bl, requests: pair.baseline(), label: `[${kind}] ${pair.name} baseline warm-up` },
    progress,
  );
  const g: LoadResult[] = [];
  const b: LoadResult[] = [];
  for (let run = 1; run <= opts.runs; run++) {
    const suffix = opts.runs > 1 ? ` run ${run}/${opts.runs}` : '';
    const m = { durationS: opts.durationS, connections: opts.connections };
    g.push(
      await drive(
        { ...m, ...gw, requests: pair.gateway(), label: `[${kind}] ${pair.name} gateway${suffix}` },
        progress,
      ),
    );
    b.push(
      await drive(
        { ...m, ...bl, requests: pair.baseline(), label: `[${kind}] ${pair.name} baseline${suffix}` },
        progress,
      ),
    );
    progress.line(
      `[${kind}] ${pair.name}${suffix}: gateway ${g.at(-1)!.rps.toFixed(0)} req/s, baseline ${b.at(-1)!.rps.toFixed(0)} req/s`,
    );
  }
  const gm = medianResult(g);
  const bm = medianResult(b);
  const ratio = bm.rps > 0 ? gm.rps / bm.rps : null;
  const failures = gm.non2xx + gm.errors;
  return {
    scenario: pair.name,
    title: pair.title,
    gateway: gm,
    baseline: bm,
    ratio,
    target: `≥ ${pair.target}`,
    met: ratio === null ? null : ratio >= pair.target && failures === 0,
    runs: opts.runs > 1 ? { gateway: g, baseline: b } : undefined,
    note: failures
      ? `gateway answered ${gm.non2xx} non-2xx and had ${gm.errors} errors: ${JSON.stringify(gm.statusCodes)}`
      : undefined,
  };
}

export async function runDefaultSet(opts: BenchOptions, progress: Progress): Promise<DatabaseReport> {
  const gwDb = await freshDatabase(opts.db, 'gw');
  const blDb = await freshDatabase(opts.db, 'base');
  const kind = gwDb.kind;
  let gateway: Server | null = null;
  let baseline: Server | null = null;
  try {
    progress.line(
      `[${kind}] setting up: merchant and wallet through the CLI, ${opts.statusRows} pay-ins for payin_status`,
    );
    const merchant = createFundedMerchant(gwDb.url);
    await prepareBaselineDatabase(blDb.url, merchant.merchantId);
    const wants = (s: ScenarioName) => opts.scenarios.includes(s);
    if (wants('payin_status')) {
      await fillPayins(gwDb.url, merchant.merchantId, 1, opts.statusRows);
      await fillPayins(blDb.url, merchant.merchantId, 1, opts.statusRows);
    }
    const engine = await engineVersion(gwDb.url);
    gateway = await startGateway(gwDb.url, GATEWAY_ENV, profileFlags(opts));
    baseline = await startBaseline(blDb.url, merchant.merchantId, profileFlags(opts, 'baseline'));
    const rss = sampleRss(gateway.pid);
    const byScenarioMb: Record<string, number> = {};
    const key = merchant.apiKey;
    const pairs: Pair[] = [
      {
        name: 'onsite',
        title: 'onsite pay-in create',
        target: 0.6,
        gateway: () => freshPosts('/payments/onsite/payin', [key], () => payinBody('on')),
        baseline: () => freshPosts('/insert', [null], () => payinBody('on')),
      },
      {
        name: 'offsite',
        title: 'offsite pay-in create (QR)',
        target: 0.3,
        gateway: () => freshPosts('/payments/offsite/payin', [key], () => payinBody('off')),
        baseline: () => freshPosts('/insert', [null], () => payinBody('off')),
      },
      {
        name: 'payin_status',
        title: `payin_status (${opts.statusRows.toLocaleString('en')} rows)`,
        target: 0.7,
        gateway: () => statusPosts('/payments/payin_status', key, opts.statusRows),
        baseline: () => statusPosts('/select', null, opts.statusRows),
      },
      {
        name: 'payout',
        title: 'payout create, one hot wallet',
        target: 0.4,
        gateway: () => freshPosts('/payments/payout', [key], () => payoutBody('po')),
        baseline: () => freshPosts('/insert', [null], () => payinBody('po')),
      },
    ];
    const rows: ScenarioRow[] = [];
    for (const pair of pairs) {
      if (!wants(pair.name)) continue;
      rss.mark();
      rows.push(await measurePair(pair, gateway, baseline, opts, progress, kind));
      byScenarioMb[pair.name] = rss.mark();
    }
    let callbacks: CallbackResult | undefined;
    if (wants('callbacks')) {
      rss.mark();
      callbacks = await measureCallbacks(
        { server: gateway, databaseUrl: gwDb.url, ...merchant },
        opts,
        progress,
        kind,
      );
      byScenarioMb.callbacks = rss.mark();
    }
    const peak = rss.stop();
    // On a gateway of its own (the live channels configured against the fakes), after the others.
    const live = wants('live') ? await measureLive(opts, progress) : undefined;
    return {
      kind,
      engine,
      rows,
      callbacks,
      live,
      rss: { peakMb: peak.peakMb, byScenarioMb, target: '≤ 300 MB', met: peak.peakMb <= 300 },
    };
  } finally {
    await gateway?.stop();
    await baseline?.stop();
    await gwDb.drop();
    await blDb.drop();
  }
}
