/**
 * The default scenario set on one database: set-up (a merchant created and funded through the CLI,
 * a bulk-loaded table for status queries), the gateway and the baseline started side by side, then
 * each scenario measured on the gateway and on the baseline, one after the other.
 */
import { migrate, openDatabase } from '../src/db/database.ts';
import { measureCallbacks, type CallbackResult } from './callbacks.ts';
import {
  createFundedMerchant,
  GATEWAY_ENV,
  measurePair,
  profileFlags,
  type GatewayHandle,
  type Pair,
  type ScenarioRow,
} from './gateway.ts';
import { measureLive, type LiveResult } from './live.ts';
import type { Progress } from './load.ts';
import type { BenchOptions, ScenarioName } from './options.ts';
import { sampleRss, startBaseline, startGateway, type Server } from './processes.ts';
import { freshPosts, payinBody, payoutBody, refundBody, statusPosts } from './requests.ts';
import { connect, engineVersion, fillPayins, freshDatabase } from './store.ts';

export interface DatabaseReport {
  kind: 'sqlite' | 'postgres';
  engine: string;
  rows: ScenarioRow[];
  callbacks?: CallbackResult;
  live?: LiveResult;
  rss: { peakMb: number; byScenarioMb: Record<string, number>; target: string; met: boolean };
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

/** Set-up for the scenarios asked for: the merchant, the baseline's database, the loaded pay-ins. */
async function setUp(gwUrl: string, blUrl: string, opts: BenchOptions, progress: Progress, kind: string) {
  progress.line(
    `[${kind}] setting up: merchant and wallet through the CLI, pay-ins for payin_status and refund`,
  );
  const merchant = createFundedMerchant(gwUrl);
  await prepareBaselineDatabase(blUrl, merchant.merchantId);
  if (opts.scenarios.includes('payin_status')) {
    await fillPayins(gwUrl, merchant.merchantId, 1, opts.statusRows);
    await fillPayins(blUrl, merchant.merchantId, 1, opts.statusRows);
  }
  if (opts.scenarios.includes('refund'))
    await fillPayins(gwUrl, merchant.merchantId, 1, opts.refundRows, { prefix: 'rfnd' });
  return merchant;
}

/** The scenarios measured on the gateway and on the baseline server, in this order. */
function pairsOf(key: string, opts: BenchOptions): Pair[] {
  return [
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
}

/**
 * Refund creation against payout creation on the same gateway, one hot wallet for both: the
 * "baseline" of this row is payouts, so its ratio says what a refund costs next to a payout.
 */
function refundPair(key: string, opts: BenchOptions): Pair {
  return {
    name: 'refund',
    title: 'refund create vs payout create (baseline column), one hot wallet',
    target: 0.85,
    gateway: () => freshPosts('/payments/refund', [key], () => refundBody('rf', opts.refundRows)),
    baseline: () => freshPosts('/payments/payout', [key], () => payoutBody('pr')),
  };
}

/** Each scenario asked for on the gateway, in turn, and the gateway's RSS during each. */
async function measureScenarios(
  gateway: Server,
  baseline: Server,
  merchant: Omit<GatewayHandle, 'server' | 'databaseUrl'>,
  databaseUrl: string,
  opts: BenchOptions,
  progress: Progress,
  kind: 'sqlite' | 'postgres',
): Promise<
  Pick<DatabaseReport, 'rows' | 'callbacks'> & { byScenarioMb: Record<string, number>; peakMb: number }
> {
  const wants = (s: ScenarioName) => opts.scenarios.includes(s);
  const rss = sampleRss(gateway.pid);
  const byScenarioMb: Record<string, number> = {};
  // A scenario's RSS: the highest sampled from the mark before it to the mark after it.
  const measured = async <T>(name: string, measure: () => Promise<T>): Promise<T> => {
    rss.mark();
    const result = await measure();
    byScenarioMb[name] = rss.mark();
    return result;
  };
  const rows: ScenarioRow[] = [];
  for (const pair of pairsOf(merchant.apiKey, opts))
    if (wants(pair.name))
      rows.push(await measured(pair.name, () => measurePair(pair, gateway, baseline, opts, progress, kind)));
  const refund = refundPair(merchant.apiKey, opts);
  if (wants('refund'))
    rows.push(await measured('refund', () => measurePair(refund, gateway, gateway, opts, progress, kind)));
  const callbacks = wants('callbacks')
    ? await measured('callbacks', () =>
        measureCallbacks({ server: gateway, databaseUrl, ...merchant }, opts, progress, kind),
      )
    : undefined;
  return { rows, callbacks, byScenarioMb, peakMb: rss.stop().peakMb };
}

export async function runDefaultSet(opts: BenchOptions, progress: Progress): Promise<DatabaseReport> {
  const gwDb = await freshDatabase(opts.db, 'gw');
  const blDb = await freshDatabase(opts.db, 'base');
  const kind = gwDb.kind;
  let gateway: Server | null = null;
  let baseline: Server | null = null;
  try {
    const merchant = await setUp(gwDb.url, blDb.url, opts, progress, kind);
    const engine = await engineVersion(gwDb.url);
    gateway = await startGateway(gwDb.url, GATEWAY_ENV, profileFlags(opts));
    baseline = await startBaseline(blDb.url, merchant.merchantId, profileFlags(opts, 'baseline'));
    const m = await measureScenarios(gateway, baseline, merchant, gwDb.url, opts, progress, kind);
    // On a gateway of its own (the live channels configured against the fakes), after the others.
    const live = opts.scenarios.includes('live') ? await measureLive(opts, progress) : undefined;
    return {
      kind,
      engine,
      rows: m.rows,
      callbacks: m.callbacks,
      live,
      rss: { peakMb: m.peakMb, byScenarioMb: m.byScenarioMb, target: '≤ 300 MB', met: m.peakMb <= 300 },
    };
  } finally {
    await gateway?.stop();
    await baseline?.stop();
    await gwDb.drop();
    await blDb.drop();
  }
}
