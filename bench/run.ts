/**
 * `npm run bench`: measures the gateway against a bare baseline on the same database and prints
 * one table per database (see `npm run bench -- --help`). A tool for people, never part of the tests.
 */
import os from 'node:os';
import path from 'node:path';
import { runDashboard, type DashboardReport } from './dashboard.ts';
import { runGrowth, type GrowthReport } from './growth.ts';
import { Progress } from './load.ts';
import { DEFAULT_SCENARIOS, HELP, parseOptions, type BenchOptions } from './options.ts';
import { formatPlans, runPlans, type PlansReport } from './plans.ts';
import { buildGateway, ROOT } from './processes.ts';
import { formatReconcile, runReconcile, type ReconcileReport } from './reconcile.ts';
import { formatReplays, runReplays, type ReplaysReport } from './replays.ts';
import {
  describeMachine,
  formatDashboard,
  formatDatabase,
  formatGrowth,
  formatMachine,
  writeReport,
  type BenchReport,
} from './report.ts';
import { runDefaultSet, type DatabaseReport } from './scenarios.ts';

let opts: BenchOptions | null;
try {
  opts = parseOptions(process.argv.slice(2));
} catch (err) {
  console.error(`bench: ${(err as Error).message}\n\n${HELP}`);
  process.exit(2);
}
if (!opts) {
  console.log(HELP);
  process.exit(0);
}

const progress = new Progress(false);
progress.line('compiling the gateway (npm run build): it runs as installed, from dist/');
buildGateway();
const machine = describeMachine();
progress.line(formatMachine(machine));

const databases: DatabaseReport[] = [];
let growth: GrowthReport | undefined;
let dashboard: DashboardReport | undefined;
let replays: ReplaysReport | undefined;
let plans: PlansReport | undefined;
let reconcile: ReconcileReport | undefined;
const inDefaultSet = (s: string) => (DEFAULT_SCENARIOS as readonly string[]).includes(s);
if (opts.scenarios.some(inDefaultSet)) databases.push(await runDefaultSet(opts, progress));
if (opts.scenarios.includes('growth')) growth = await runGrowth(opts, progress);
if (opts.scenarios.includes('dashboard')) dashboard = await runDashboard(opts, progress);
if (opts.scenarios.includes('replays')) replays = await runReplays(opts, progress);
if (opts.scenarios.includes('plans')) plans = await runPlans(opts, progress);
if (opts.scenarios.includes('reconcile')) reconcile = await runReconcile(opts, progress);
machine.loadAverage.end = os.loadavg()[0];

const report: BenchReport = {
  machine,
  // A PostgreSQL URL may carry a password: keep only the server's host and port.
  options: {
    ...opts,
    db: opts.db ? `postgres://${new URL(opts.db).host}` : 'sqlite (fresh file in a temp dir)',
  },
  databases,
  growth,
  dashboard,
  replays,
  plans,
  reconcile,
};
const file = writeReport(report);
if (opts.json) {
  console.log(JSON.stringify(report, null, 2));
} else {
  const parts = [
    formatMachine(machine),
    ...databases.map((d) => formatDatabase(d, opts)),
    ...(growth ? [formatGrowth(growth)] : []),
    ...(dashboard ? [formatDashboard(dashboard)] : []),
    ...(replays ? [formatReplays(replays)] : []),
    ...(plans ? [formatPlans(plans)] : []),
    ...(reconcile ? [formatReconcile(reconcile)] : []),
  ];
  console.log(`\n${parts.join('\n\n')}\n`);
}
progress.line(`results written to ${path.relative(ROOT, file)}`);
