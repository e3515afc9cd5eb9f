/** Command-line options of `npm run bench`. */
import { parseArgs } from 'node:util';

export const DEFAULT_SCENARIOS = [
  'onsite',
  'offsite',
  'payin_status',
  'payout',
  'refund',
  'callbacks',
  'live',
] as const;
export const ALL_SCENARIOS = [
  ...DEFAULT_SCENARIOS,
  'growth',
  'dashboard',
  'replays',
  'plans',
  'reconcile',
] as const;
export type ScenarioName = (typeof ALL_SCENARIOS)[number];

export interface BenchOptions {
  /** A postgres:// URL of a server to benchmark on, or null for a fresh SQLite file. */
  db: string | null;
  durationS: number;
  connections: number;
  scenarios: ScenarioName[];
  json: boolean;
  runs: number;
  /** Pay-ins in the table that payin_status reads. */
  statusRows: number;
  /** SUCCESS-mostly pay-ins the refund scenario refunds, picked at random. */
  refundRows: number;
  /** Rows loaded by the growth scenario. */
  growthRows: number;
  /** Transactions of the merchant the dashboard scenario signs in as. */
  dashboardRows: number;
  /** Pay-ins of the merchant whose creations the replays scenario repeats. */
  replayRows: number;
  /** Pay-ins of the one merchant the plans scenario loads. */
  planRows: number;
  /** Transactions of the day the reconcile scenario reconciles at raised limits. */
  reconcileRows: number;
  /** The longest each channel's paced phase is watched, s (it ends sooner when the channel's run does). */
  reconcileWatchS: { setu: number; cashfree: number };
  /** Only the paced phases at the default limits (no 2,000-row run, no run with the limits raised). */
  reconcilePacedOnly: boolean;
  /** When set, the gateway runs under `node --cpu-prof` and writes its profile here on exit. */
  profileDir: string | null;
}

export const HELP = `Usage: npm run bench -- [options]

Runs the gateway (bin/paygate.js serve, a real child process) and a bare baseline server on the
same database, drives both with autocannon, and prints gateway req/s, p50, p99, baseline req/s and
their ratio per scenario. Results are also written as JSON to bench/results/.

Options:
  --db URL             postgres://user@host:port/db: a fresh database is created on that server for
                       the run and dropped after it. Default: a fresh SQLite file in a temp dir.
  --duration S         seconds per measured run of each scenario (default 10; a warm-up of a
                       third of it, at most 5 s, comes first)
  --connections N      concurrent connections (default 50)
  --only NAME[,NAME]   run only these scenarios: ${ALL_SCENARIOS.join(', ')}
  --runs N             repeat each measurement N times and report medians (default 1)
  --json               print the results as JSON instead of the table
  --status-rows N      pay-ins in the table that payin_status reads (default 10000)
  --refund-rows N      pay-ins the refund scenario refunds at random (default 200000: a refund or two each)
  --growth-rows N      rows loaded by the growth scenario (default 1000000)
  --dashboard-rows N   transactions loaded by the dashboard scenario (default 1000000)
  --replay-rows N      pay-ins of one merchant loaded by the replays scenario (default 200000)
  --plan-rows N        pay-ins of one merchant loaded by the plans scenario (default 1000000)
  --reconcile-rows N   transactions a day in the reconcile scenario (default 100000; 8 days)
  --reconcile-watch S,C  the longest the paced phases watch Setu and Cashfree, s (default 150,300;
                       each ends sooner when its channel's run does)
  --reconcile-paced-only  the reconcile scenario's paced phases alone (no raised-limit run)
  --profile DIR        run the gateway under node --cpu-prof and write its .cpuprofile to DIR
                       (and the baseline's to DIR/baseline)
                       (summarise it with: node --import tsx bench/profile.ts FILE)
  -h, --help           this text

Default scenarios: ${DEFAULT_SCENARIOS.join(', ')} (about 2 minutes per database at the default
duration), plus the gateway's peak RSS, sampled throughout.

live runs a gateway of its own with Setu and Cashfree configured against fakes of both (in the
bench process): live onsite creation against sandbox onsite on that gateway, and 5,000 payouts
from creation to recorded SUCCESS with the fake Cashfree answering after 50 ms.

growth is not in the default set: it loads 1,000,000 transactions and measures payin_status latency
at 10k and at 1M rows, and payout throughput with 1 and with 100 wallets. It takes about 3 to 5
minutes on a 2-core machine; run it with --only growth.

dashboard is not in the default set either: it loads 1,000,000 transactions of one merchant (and
1,000 of another), signs in to the dashboard and measures the transactions list's latency (p50, p95,
p99 of 200 sequential requests; first page, deep pages, amount ranges) and the gateway's extra RSS
while a CSV of about 100,000 rows streams. About 1 to 2 minutes per database on a 2-core machine;
run it with --only dashboard.

replays and plans are not in the default set. replays starts a gateway on a new database, bulk-loads
200,000 pay-ins of its merchant with no ANALYZE, and measures onsite creation, 100 % replays of
earlier creations and creation with 5 % replays on it (each as a ratio to creation; target ≥ 0.8).
plans loads 1,000,000 pay-ins of one merchant with no ANALYZE and checks that every hot-path
statement (test/support/hot-paths.ts) goes through its index, before and after the gateway gathers
statistics.

reconcile is not in the default set: 2,000 live transactions (60 % Setu pay-ins, half FAILED; 30 %
Cashfree payouts; 10 % Setu refunds) reconciled by paygate reconcile at the default limits (the calls
per second each fake saw); then a day of 100,000 of that mix and 7 days of lookback (800,000 rows) put
into the database and the fake providers (each answer 20 ms); on it, a gateway per channel at the
default limits reconciles at RECONCILE_AT for 150 s (Setu) and 300 s (Cashfree), or until its run
ends (--reconcile-watch), its RSS sampled over time, and its heap from /metrics; then a gateway reconciles the whole at RECONCILE_AT with the limits raised: wall time, reads and calls per provider, peak RSS (target
< 150 MB), and the duration projected at the default limits from the measured rates (target < 6 h).
Each gateway waits for a whole minute to start; run it with --only reconcile.`;

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`--${name} must be a positive whole number, got "${raw}"`);
  return n;
}

/** `--reconcile-watch SETU,CASHFREE` (seconds; default 150,300). */
function watchSeconds(raw: string | undefined): { setu: number; cashfree: number } {
  if (raw === undefined) return { setu: 150, cashfree: 300 };
  const [setu, cashfree, ...rest] = raw.split(',');
  if (rest.length > 0 || cashfree === undefined)
    throw new Error(`--reconcile-watch takes two numbers of seconds, SETU,CASHFREE; got "${raw}"`);
  return {
    setu: positiveInt('reconcile-watch', setu, 0),
    cashfree: positiveInt('reconcile-watch', cashfree, 0),
  };
}

/** Parses argv; throws an Error with a one-line message on a bad option. Returns null for --help. */
export function parseOptions(argv: string[]): BenchOptions | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      db: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      runs: { type: 'string' },
      json: { type: 'boolean' },
      'status-rows': { type: 'string' },
      'refund-rows': { type: 'string' },
      'growth-rows': { type: 'string' },
      'dashboard-rows': { type: 'string' },
      'replay-rows': { type: 'string' },
      'plan-rows': { type: 'string' },
      'reconcile-rows': { type: 'string' },
      'reconcile-watch': { type: 'string' },
      'reconcile-paced-only': { type: 'boolean' },
      profile: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  if (values.db !== undefined && !/^postgres(ql)?:\/\//i.test(values.db)) {
    throw new Error('--db must be a postgres:// URL (without it, a fresh SQLite file is used)');
  }
  let scenarios: ScenarioName[] = [...DEFAULT_SCENARIOS];
  if (values.only !== undefined) {
    const names = values.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const name of names) {
      if (!(ALL_SCENARIOS as readonly string[]).includes(name)) {
        throw new Error(`--only: unknown scenario "${name}"; choose from ${ALL_SCENARIOS.join(', ')}`);
      }
    }
    scenarios = names as ScenarioName[];
  }
  return {
    db: values.db ?? null,
    durationS: positiveInt('duration', values.duration, 10),
    connections: positiveInt('connections', values.connections, 50),
    scenarios,
    json: values.json ?? false,
    runs: positiveInt('runs', values.runs, 1),
    statusRows: positiveInt('status-rows', values['status-rows'], 10_000),
    refundRows: positiveInt('refund-rows', values['refund-rows'], 200_000),
    growthRows: positiveInt('growth-rows', values['growth-rows'], 1_000_000),
    dashboardRows: positiveInt('dashboard-rows', values['dashboard-rows'], 1_000_000),
    replayRows: positiveInt('replay-rows', values['replay-rows'], 200_000),
    planRows: positiveInt('plan-rows', values['plan-rows'], 1_000_000),
    reconcileRows: positiveInt('reconcile-rows', values['reconcile-rows'], 100_000),
    reconcileWatchS: watchSeconds(values['reconcile-watch']),
    reconcilePacedOnly: values['reconcile-paced-only'] ?? false,
    profileDir: values.profile ?? null,
  };
}
