/** The results table on stdout, and the same figures as JSON under bench/results/ with machine info. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallbackResult } from './callbacks.ts';
import { EXPORT_RSS_TARGET_MB, P95_TARGET_MS, type DashboardReport } from './dashboard.ts';
import type { GrowthReport } from './growth.ts';
import type { PlansReport } from './plans.ts';
import type { ReconcileReport } from './reconcile.ts';
import type { ReplaysReport } from './replays.ts';
import type { BenchOptions } from './options.ts';
import { ROOT } from './processes.ts';
import type { DatabaseReport } from './scenarios.ts';

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  os: string;
  node: string;
  commit: string;
  /** 1-minute load average at the start and at the end: other work on the machine shows here. */
  loadAverage: { start: number; end?: number };
  startedAt: string;
}

export interface BenchReport {
  machine: Machine;
  options: Omit<BenchOptions, 'db'> & { db: string };
  databases: DatabaseReport[];
  growth?: GrowthReport;
  dashboard?: DashboardReport;
  replays?: ReplaysReport;
  plans?: PlansReport;
  reconcile?: ReconcileReport;
}

export function describeMachine(): Machine {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    if (dirty) commit += ' (with uncommitted changes in src/)';
  } catch {
    // not a git checkout
  }
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    commit,
    loadAverage: { start: os.loadavg()[0]! },
    startedAt: new Date().toISOString(),
  };
}

const num = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined || Number.isNaN(n)
    ? '–'
    : n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function pad(cells: string[], widths: number[], rightFrom: number): string {
  return cells.map((c, i) => (i >= rightFrom ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ');
}

function verdict(met: boolean | null): string {
  return met === null ? '' : met ? 'ok' : 'MISSED';
}

function callbackLines(c: CallbackResult): string[] {
  if (!c.available) return [`callbacks: not available: ${c.reason}`];
  const { burst, drain, paced } = c;
  const lines = ['callbacks (target ' + c.target + '): ' + verdict(c.met)];
  if (burst) {
    lines.push(
      `  burst:  ${num(burst.finals)} final statuses at ${num(burst.finalsPerS)}/s → ${num(burst.deliveriesPerS)} deliveries/s, latency p50 ${num(burst.p50Ms)} ms, p99 ${num(burst.p99Ms)} ms`,
    );
  }
  if (drain)
    lines.push(
      `  drain:  backlog of ${num(drain.backlog)} delivered at ${num(drain.deliveriesPerS)} deliveries/s once the receiver answered`,
    );
  if (paced) {
    lines.push(
      `  paced:  ${num(paced.ratePerS)} final statuses/s (not backlogged) → latency p50 ${num(paced.p50Ms)} ms, p99 ${num(paced.p99Ms)} ms, max ${num(paced.maxMs)} ms`,
    );
  }
  lines.push(
    `  ${c.duplicates ?? 0} duplicate deliveries; ${c.signaturesChecked ?? 0} signatures checked: ${c.signaturesValid ? 'valid' : 'INVALID'}`,
  );
  return lines;
}

export function formatDatabase(d: DatabaseReport, opts: BenchOptions): string {
  const header = [
    'scenario',
    'gateway req/s',
    'p50 ms',
    'p99 ms',
    'baseline req/s',
    'ratio',
    'target',
    '',
    'CPU µs/req gw / base',
  ];
  const body = d.rows.map((r) => [
    r.title,
    num(r.gateway?.rps),
    num(r.gateway?.p50Ms, 1),
    num(r.gateway?.p99Ms, 1),
    num(r.baseline?.rps),
    num(r.ratio, 2),
    r.target,
    verdict(r.met),
    `${num(r.gateway?.cpuUsPerReq)} / ${num(r.baseline?.cpuUsPerReq)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const lines = [
    `${d.kind}: ${d.engine}; ${opts.connections} connections, ${opts.durationS} s per run, ${opts.runs === 1 ? '1 run' : `median of ${opts.runs} runs (ratio: median of each run's own)`}`,
  ];
  if (body.length) {
    lines.push(
      pad(header, widths, 1),
      pad(
        widths.map((w) => '-'.repeat(w)),
        widths,
        1,
      ),
      ...body.map((row) => pad(row, widths, 1)),
    );
  }
  for (const r of d.rows) if (r.note) lines.push(`note (${r.scenario}): ${r.note}`);
  if (d.callbacks) lines.push(...callbackLines(d.callbacks));
  if (d.live) {
    const { onsite, payouts: p, paced } = d.live;
    lines.push(
      `live (Setu and Cashfree fakes):`,
      `  onsite create: live ${num(onsite.gateway?.rps)} req/s (p50 ${num(onsite.gateway?.p50Ms, 1)} ms) vs sandbox ${num(onsite.baseline?.rps)} req/s: ratio ${num(onsite.ratio, 2)}; CPU µs/req ${num(onsite.gateway?.cpuUsPerReq)} / ${num(onsite.baseline?.cpuUsPerReq)}`,
      `  payouts: ${num(p.payouts)} created in ${num(p.createS, 1)} s, all SUCCESS after ${num(p.settleS, 1)} s: ${num(p.perS)} payouts/s creation to SUCCESS (target ≥ 500) ${verdict(p.perS >= 500 && p.transfersPerPayout === 1)}; creation to SUCCESS p50 ${num(p.p50Ms)} ms, p99 ${num(p.p99Ms)} ms; ${num(p.transfersPerPayout, 2)} transfer per payout; fake Cashfree answers after ${p.fakeLatencyMs} ms; CPU µs per payout: gateway ${num(p.gatewayCpuUsPerPayout)}, load and fakes ${num(p.benchCpuUsPerPayout)} (CASHFREE_MAX_RPS raised past the load)`,
      `  paced: ${num(paced.payouts)} payouts at the default CASHFREE_MAX_RPS ${paced.limitPerS}: ${num(paced.callsPerS, 1)} calls/s to Cashfree after the first second (${num(paced.offByPct, 1)} % off), at most ${num(paced.maxInAnySecond)} in any second (target within 5 %) ${verdict(Math.abs(paced.offByPct) <= 5 && paced.maxInAnySecond <= paced.limitPerS * 1.05)}`,
    );
  }
  const by = Object.entries(d.rss.byScenarioMb)
    .map(([k, v]) => `${k} ${num(v)}`)
    .join(', ');
  lines.push(
    `gateway peak RSS: ${num(d.rss.peakMb)} MB (target ${d.rss.target}) ${verdict(d.rss.met)}${by ? `; highest sample per scenario, MB: ${by}` : ''}`,
  );
  return lines.join('\n');
}

export function formatGrowth(g: GrowthReport): string {
  const lines = [
    `growth (${g.kind}, ${g.engine}): loaded ${num(g.rowsLoaded)} rows in ${num(g.loadSeconds, 1)} s`,
  ];
  for (const s of g.status) {
    lines.push(
      `  payin_status at ${num(s.rows)} rows: ${num(s.result.rps)} req/s, p50 ${num(s.result.p50Ms, 1)} ms, p99 ${num(s.result.p99Ms, 1)} ms, ${num(s.result.cpuUsPerReq)} µs CPU/request`,
    );
  }
  for (const p of g.payouts) {
    lines.push(
      `  payout create, ${p.wallets} wallet${p.wallets === 1 ? '' : 's'}: ${num(p.result.rps)} req/s, p50 ${num(p.result.p50Ms, 1)} ms, p99 ${num(p.result.p99Ms, 1)} ms, ${num(p.result.cpuUsPerReq)} µs CPU/request${p.result.non2xx || p.result.errors ? ` (${p.result.non2xx} non-2xx, ${p.result.errors} errors or timeouts)` : ''}`,
    );
  }
  lines.push(`  gateway peak RSS: ${num(g.peakRssMb)} MB`);
  return lines.join('\n');
}

export function formatDashboard(d: DashboardReport): string {
  const lines = [
    `dashboard (${d.kind}, ${d.engine}): loaded ${num(d.rowsLoaded)} rows of one merchant and ${num(d.otherMerchantRows)} of another in ${num(d.loadSeconds, 1)} s`,
    `  transactions list, ${d.filter}; p95 target ≤ ${P95_TARGET_MS} ms:`,
  ];
  const header = [
    'variant',
    'matching',
    'rows',
    'requests',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'req/s',
    'CPU ms/req',
    '',
  ];
  const body = d.variants.map((v) => [
    v.title,
    num(v.matching),
    num(v.rowsOnPage),
    num(v.latency.samples),
    num(v.latency.concurrency),
    num(v.latency.p50Ms, 1),
    num(v.latency.p95Ms, 1),
    num(v.latency.p99Ms, 1),
    num(v.latency.perS),
    num(v.latency.cpuMsPerReq, 2),
    `${verdict(v.met)}${v.latency.failures ? ` (${v.latency.failures} failed)` : ''}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  lines.push(
    `  ${pad(header, widths, 1)}`,
    `  ${pad(
      widths.map((w) => '-'.repeat(w)),
      widths,
      1,
    )}`,
    ...body.map((row) => `  ${pad(row, widths, 1)}`),
  );
  for (const [i, e] of d.exports.entries()) {
    lines.push(
      `  CSV export ${i + 1}: ${num(e.rowsReceived)} rows (expected ${num(e.expectedRows)}, ${num(e.distinctIds)} distinct), ${num(e.bytes / 1e6, 1)} MB in ${num(e.seconds, 2)} s; gateway RSS ${num(e.rssBeforeMb)} MB before, peak extra ${num(e.peakExtraMb, 1)} MB (target < ${EXPORT_RSS_TARGET_MB} MB) ${verdict(e.met)}`,
    );
  }
  lines.push(`  gateway peak RSS: ${num(d.peakRssMb)} MB`);
  return lines.join('\n');
}

export function formatMachine(m: Machine): string {
  return `machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.os}, Node ${m.node}; commit ${m.commit}; load average ${m.loadAverage.start.toFixed(2)} at start${m.loadAverage.end !== undefined ? `, ${m.loadAverage.end.toFixed(2)} at end` : ''}`;
}

/** Writes the report to bench/results/<time>-<databases>.json and returns the path. */
export function writeReport(report: BenchReport): string {
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const stamp = report.machine.startedAt.replace(/[:.]/g, '-');
  const kinds =
    [
      ...report.databases.map((d) => d.kind),
      ...(report.growth ? [`growth-${report.growth.kind}`] : []),
      ...(report.dashboard ? [`dashboard-${report.dashboard.kind}`] : []),
      ...(report.replays ? [`replays-${report.replays.kind}`] : []),
      ...(report.plans ? [`plans-${report.plans.kind}`] : []),
      ...(report.reconcile ? [`reconcile-${report.reconcile.kind}`] : []),
    ].join('-') || 'none';
  const file = path.join(dir, `${stamp}-${kinds}.json`);
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
