/**
 * Reconcile: the daily reconciliation of a day's live transactions against the fake providers
 * (the tests' fakes, in this process, each answer taking 20 ms), the day put straight into the
 * database and the fakes. Two figures:
 * - `reconcileRows` transactions (half Setu pay-ins, half Cashfree payouts) with the providers'
 *   limits raised: the run as a `paygate serve` process does it at RECONCILE_AT, its wall time,
 *   and that process's peak RSS above its RSS while idle just before (target < 150 MB above);
 * - 2,000 transactions at the default limits (SETU_MAX_RPS 20, CASHFREE_MAX_RPS 100), reconciled
 *   by `paygate reconcile`: the calls per second each fake saw (on average, and the most in any one
 *   second), against its limit.
 */
import fs from 'node:fs';
import { migrate, openDatabase, type Database } from '../src/db/database.ts';
import { istTime, istYesterday } from '../src/ist.ts';
import { FakeCashfree } from '../test/support/fake-cashfree.ts';
import { FakeSetu } from '../test/support/fake-setu.ts';
import { seedReconcileDay } from '../test/support/reconcile-day.ts';
import type { Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { cliAsync } from '../test/support/process.ts';
import { startGateway } from './processes.ts';
import { connect, freshDatabase } from './store.ts';

const FAKE_LATENCY_MS = 20;
const PACED_ROWS = 2000;
const DEFAULT_LIMITS = { setu: 20, cashfree: 100 };

export interface ReconcileReport {
  kind: 'sqlite' | 'postgres';
  full: {
    transactions: number;
    fakeLatencyMs: number;
    seedS: number;
    /** From the first run's start to the last run's end (both channels, one after the other). */
    wallS: number;
    perChannelS: { setu: number; cashfree: number };
    readsPerS: number;
    idleMb: number;
    peakMb: number;
    aboveIdleMb: number;
    target: string;
    met: boolean;
  };
  paced: {
    transactions: number;
    setu: Paced;
    cashfree: Paced;
  };
}

interface Paced {
  calls: number;
  limitPerS: number;
  /** Calls the fake received per second, from the first to the last. */
  callsPerS: number;
  /** The most calls the fake received in any one second (a sliding window over their arrivals). */
  maxInAnySecond: number;
}

/** The most of `times` (ms, ascending) in any one second. */
export function maxInAnySecond(times: number[]): number {
  let most = 0;
  let from = 0;
  for (let i = 0; i < times.length; i++) {
    while (times[i]! - times[from]! >= 1000) from++;
    most = Math.max(most, i - from + 1);
  }
  return most;
}

/** What a fake was asked, kept as arrival times per operation; its own log is emptied as it goes. */
function tap(fake: { requests: { at: number }[] }, operation: (r: any) => string | null) {
  const times = new Map<string, number[]>();
  const drain = () => {
    for (const r of fake.requests.splice(0)) {
      const op = operation(r);
      if (op) (times.get(op) ?? times.set(op, []).get(op)!).push(r.at);
    }
  };
  const timer = setInterval(drain, 500);
  return {
    times(op: string) {
      drain();
      return times.get(op) ?? [];
    },
    stop() {
      clearInterval(timer);
    },
  };
}

const historyOp = (r: { method: string; path: string }) =>
  r.method === 'GET' && r.path.endsWith('/history') ? 'read' : null;
const transferOp = (r: { method: string }) => (r.method === 'GET' ? 'read' : null);

/** Resident memory of a process, from /proc (MB), or null off Linux. */
function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
}

export async function runReconcile(opts: BenchOptions, progress: Progress): Promise<ReconcileReport> {
  const setu = await new FakeSetu().start();
  const cashfree = await new FakeCashfree().start();
  setu.latencyMs = FAKE_LATENCY_MS;
  cashfree.latencyMs = FAKE_LATENCY_MS;
  try {
    const full = await fullRun(opts, progress, setu, cashfree);
    setu.qrs.clear();
    cashfree.transfers.clear();
    const paced = await pacedRun(opts, progress, setu, cashfree);
    return { kind: full.kind, full: full.report, paced };
  } finally {
    await setu.stop();
    await cashfree.stop();
  }
}

async function fullRun(opts: BenchOptions, progress: Progress, setu: FakeSetu, cashfree: FakeCashfree) {
  const store = await freshDatabase(opts.db, 'reconcile');
  const database = openDatabase(store.url);
  const kind = database.kind;
  const rows = opts.reconcileRows;
  const reads = { setu: tap(setu, historyOp), cashfree: tap(cashfree, transferOp) };
  let gateway: Awaited<ReturnType<typeof startGateway>> | null = null;
  try {
    await migrate(database);
    const day = await seedDay(store.url, database, { setu, cashfree }, rows, progress);
    gateway = await startGateway(store.url, {
      ...setu.env(),
      ...cashfree.env(),
      SETU_MAX_RPS: '100000',
      CASHFREE_MAX_RPS: '100000',
      RECONCILE_AT: istTime(day.at).slice(11, 16),
    });
    if (Date.now() > day.at - 5_000) throw new Error('the gateway started too late to be seen idle');
    progress.line(
      `[${kind}] reconcile: seeded in ${day.seedS.toFixed(1)} s; the gateway waits for RECONCILE_AT (${Math.round((day.at - Date.now()) / 1000)} s)`,
    );
    const read = () => reads.setu.times('read').length + reads.cashfree.times('read').length;
    const watched = await watchRuns(gateway.pid, store.url, day, (peak) =>
      progress.update(
        `[${kind}] reconcile: ${read().toLocaleString('en')} of ${rows.toLocaleString('en')} read, ${Math.round(peak)} MB`,
      ),
    );
    const readCount = read();
    const report = fullReport(watched, rows, day.seedS, readCount);
    progress.line(
      `[${kind}] reconcile: ${rows.toLocaleString('en')} in ${report.wallS.toFixed(1)} s, ${readCount.toLocaleString('en')} reads; RSS ${report.idleMb.toFixed(0)} MB idle, ${report.peakMb.toFixed(0)} MB at peak`,
    );
    return { kind, report };
  } finally {
    reads.setu.stop();
    reads.cashfree.stop();
    await gateway?.stop();
    await database.close();
    await store.drop();
  }
}

interface DayToReconcile {
  /** When the gateway reconciles (RECONCILE_AT), and the IST day it reconciles then. */
  at: number;
  date: string;
  seedS: number;
}

/**
 * Seeds the day that a run at the first whole minute a while away reconciles (the seeding, the
 * start and a look at the idle process come first): half pay-ins, half payouts.
 */
async function seedDay(
  url: string,
  database: Database,
  fakes: { setu: FakeSetu; cashfree: FakeCashfree },
  rows: number,
  progress: Progress,
): Promise<DayToReconcile> {
  const lead = 45_000 + Math.ceil(rows / 10_000) * 3_000;
  const at = Math.ceil((Date.now() + lead) / 60_000) * 60_000;
  // The run of RECONCILE_AT reconciles the day before it.
  const date = istYesterday(at);
  const t0 = Date.now();
  progress.line(`[${database.kind}] reconcile: seeding ${rows.toLocaleString('en')} transactions of ${date}`);
  const payins = Math.ceil(rows / 2);
  await seedReconcileDay(database, fakes, { date, payins, payouts: rows - payins });
  const seedS = (Date.now() - t0) / 1000;
  if (database.kind === 'postgres') {
    const conn = await connect(url);
    await conn.run('analyze transactions');
    await conn.close();
  }
  return { at, date, seedS };
}

/** The finished runs of a day, and the serving process's RSS while idle before them and at peak during them. */
interface Watched {
  runs: RunRow[];
  idleMb: number;
  peakMb: number;
}

/**
 * Waits for the runs of `day` in process `pid`, sampling its RSS: the samples of the 3 s before
 * RECONCILE_AT (once the process has settled) are its idle RSS, the highest after it its peak.
 */
async function watchRuns(
  pid: number,
  url: string,
  day: DayToReconcile,
  onProgress: (peakMb: number) => void,
): Promise<Watched> {
  const { at } = day;
  await new Promise((r) => setTimeout(r, at - 3_000 - Date.now()));
  const idle: number[] = [];
  let peak = 0;
  const sample = () => {
    const mb = rssMb(pid, 'VmRSS');
    if (mb === null) return;
    if (Date.now() < at) idle.push(mb);
    else peak = Math.max(peak, mb);
  };
  const sampler = setInterval(sample, 100);
  await new Promise((r) => setTimeout(r, at - 200 - Date.now()));
  // The kernel's own peak from here on (Linux: writing 5 to clear_refs resets VmHWM).
  let hwmReset = false;
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    hwmReset = true;
  } catch {
    // the sampled peak alone
  }
  const runs = await waitForRuns(url, day.date, at + 3_600_000, () => onProgress(peak));
  clearInterval(sampler);
  sample();
  if (hwmReset) peak = Math.max(peak, rssMb(pid, 'VmHWM') ?? 0);
  const idleMb = idle.length > 0 ? idle.reduce((a, b) => a + b, 0) / idle.length : 0;
  return { runs, idleMb, peakMb: peak };
}

/** The full run's figures; throws unless the runs checked every one of the `rows` transactions. */
function fullReport(w: Watched, rows: number, seedS: number, readCount: number): ReconcileReport['full'] {
  const { runs, idleMb, peakMb } = w;
  const wallS = (Math.max(...runs.map((r) => r.finished)) - Math.min(...runs.map((r) => r.started))) / 1000;
  const span = (c: string) => {
    const r = runs.find((x) => x.channel === c);
    return r ? (r.finished - r.started) / 1000 : 0;
  };
  const checked = runs.reduce((a, r) => a + r.checked, 0);
  if (checked !== rows) throw new Error(`the runs checked ${checked} of ${rows} transactions`);
  return {
    transactions: rows,
    fakeLatencyMs: FAKE_LATENCY_MS,
    seedS,
    wallS,
    perChannelS: { setu: span('setu'), cashfree: span('cashfree') },
    readsPerS: readCount / wallS,
    idleMb,
    peakMb,
    aboveIdleMb: peakMb - idleMb,
    target: '< 150 MB above idle',
    met: peakMb - idleMb < 150,
  };
}

interface RunRow {
  channel: string;
  started: number;
  finished: number;
  checked: number;
}

/** Waits until both channels' runs of `date` are finished (a run writes its counts when it ends). */
async function waitForRuns(
  url: string,
  date: string,
  deadline: number,
  onProgress: () => void,
): Promise<RunRow[]> {
  const conn = await connect(url);
  try {
    const p = conn.kind === 'sqlite' ? '?' : '$1';
    for (;;) {
      const rows = await conn.rows<{
        channel: string;
        started_at: number | string;
        finished_at: number | string | null;
        checked: number | string;
      }>(`select channel, started_at, finished_at, checked from reconcile_runs where date = ${p}`, [date]);
      const done = rows.filter((r) => r.finished_at !== null);
      if (done.length === 2)
        return done.map((r) => ({
          channel: r.channel,
          started: Number(r.started_at),
          finished: Number(r.finished_at),
          checked: Number(r.checked),
        }));
      onProgress();
      if (Date.now() > deadline) throw new Error(`the runs of ${date} did not finish`);
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await conn.close();
  }
}

async function pacedRun(
  opts: BenchOptions,
  progress: Progress,
  setu: FakeSetu,
  cashfree: FakeCashfree,
): Promise<ReconcileReport['paced']> {
  const store = await freshDatabase(opts.db, 'reconcile_paced');
  const database = openDatabase(store.url);
  const reads = { setu: tap(setu, historyOp), cashfree: tap(cashfree, transferOp) };
  try {
    await migrate(database);
    const date = istYesterday(Date.now());
    await seedReconcileDay(
      database,
      { setu, cashfree },
      { date, payins: PACED_ROWS / 2, payouts: PACED_ROWS / 2 },
    );
    progress.line(
      `[${database.kind}] reconcile: ${PACED_ROWS.toLocaleString('en')} transactions at the default limits (paygate reconcile)`,
    );
    // Not blocking this process: the fakes it calls answer from here.
    const answer = await cliAsync(['reconcile', '--date', date, '--json'], {
      DATABASE_URL: store.url,
      ...setu.env(),
      ...cashfree.env(),
    });
    const runs = (answer.json?.runs ?? []) as { checked: number }[];
    if (answer.status !== 0 || runs.reduce((a, r) => a + r.checked, 0) !== PACED_ROWS)
      throw new Error(`paygate reconcile failed (${answer.status}): ${answer.stdout}${answer.stderr}`);
    const paced = (times: number[], limitPerS: number): Paced => ({
      calls: times.length,
      limitPerS,
      callsPerS: (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000),
      maxInAnySecond: maxInAnySecond(times),
    });
    const result = {
      transactions: PACED_ROWS,
      setu: paced(reads.setu.times('read'), DEFAULT_LIMITS.setu),
      cashfree: paced(reads.cashfree.times('read'), DEFAULT_LIMITS.cashfree),
    };
    progress.line(
      `[${database.kind}] reconcile paced: at most ${result.setu.maxInAnySecond} calls in a second to Setu (limit ${DEFAULT_LIMITS.setu}), ${result.cashfree.maxInAnySecond} to Cashfree (limit ${DEFAULT_LIMITS.cashfree})`,
    );
    return result;
  } finally {
    reads.setu.stop();
    reads.cashfree.stop();
    await database.close();
    await store.drop();
  }
}

export function formatReconcile(r: ReconcileReport): string {
  const f = r.full;
  const p = r.paced;
  const line = (name: string, x: Paced) =>
    `  ${name}: ${x.calls.toLocaleString('en')} reads at ${x.callsPerS.toFixed(1)}/s first to last, at most ${x.maxInAnySecond} in any second (limit ${x.limitPerS}/s)`;
  return [
    `reconcile (${r.kind}): ${f.transactions.toLocaleString('en')} transactions of one day (seeded in ${f.seedS.toFixed(1)} s), fakes answering in ${f.fakeLatencyMs} ms, limits raised`,
    `  run at RECONCILE_AT in paygate serve: ${f.wallS.toFixed(1)} s (Setu ${f.perChannelS.setu.toFixed(1)} s, Cashfree ${f.perChannelS.cashfree.toFixed(1)} s), ${f.readsPerS.toFixed(0)} reads/s`,
    `  RSS: ${f.idleMb.toFixed(0)} MB idle, ${f.peakMb.toFixed(0)} MB at peak: ${f.aboveIdleMb.toFixed(0)} MB above idle (target ${f.target}: ${f.met ? 'met' : 'NOT met'})`,
    `  ${p.transactions.toLocaleString('en')} transactions at the default limits (paygate reconcile):`,
    line('Setu /history', p.setu),
    line('Cashfree GET /transfers', p.cashfree),
  ].join('\n');
}
