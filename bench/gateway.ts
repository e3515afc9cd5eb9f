/**
 * What every benchmark that drives a gateway shares: the gateway's environment and its funded
 * merchant, and one scenario measured on the gateway and on the baseline in turn (`measurePair`).
 */
import path from 'node:path';
import type { RequestSpec } from 'autocannon';
import { drive, median, medianResult, type LoadResult, type Progress } from './load.ts';
import type { BenchOptions, ScenarioName } from './options.ts';
import { paygateCli, type Server } from './processes.ts';

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
  const ratio = pairedRatio(g, b);
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

/**
 * The gateway's req/s over the baseline's: with several runs, the median of each run's own ratio
 * (a gateway run over the baseline run right after it). The machine's speed drifts over a set of
 * runs (±30 % here), and a ratio of the two medians can set a gateway run of a fast minute against
 * a baseline run of a slow one.
 */
export function pairedRatio(gateway: LoadResult[], baseline: LoadResult[]): number | null {
  const ratios = gateway.flatMap((g, i) => {
    const b = baseline[i]!.rps;
    return b > 0 ? [g.rps / b] : [];
  });
  return ratios.length > 0 ? median(ratios) : null;
}
