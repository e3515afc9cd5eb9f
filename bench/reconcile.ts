/**
 * Reconcile: the daily reconciliation of live transactions against the fake providers (the tests'
 * fakes, in this process, each answer taking 20 ms), the days put straight into the database and
 * the fakes. A day is `reconcileRows` transactions: 60 % Setu pay-ins (half of them FAILED, a QR
 * nobody paid), 30 % Cashfree payouts (one in ten FAILED), 10 % Setu refunds (SUCCESS). Two runs:
 * - paced at defaults (bench/reconcile-paced.ts): on the full run's database once seeded, each
 *   channel reconciled by a `paygate serve` at the default limits for a bounded time, its RSS over time;
 * - full: the day plus LOOKBACK_DAYS such days before it (what became final then is read back:
 *   FAILED pay-ins, refunds, every payout), reconciled by a `paygate serve` process at
 *   RECONCILE_AT with the providers' limits raised: its wall time, the reads and calls each fake
 *   received, and that process's RSS (idle just before, peak during);
 * - paced: 2,000 transactions of the same mix at the default limits (SETU_MAX_RPS 20,
 *   CASHFREE_MAX_RPS 100), reconciled by `paygate reconcile`: the calls per second each fake saw.
 * The full run's duration at the default limits is projected from the two: each channel's calls in
 * the full run divided by the rate the paced run measured for it, the channels one after the other
 * (as the scheduler runs them).
 */
import type { Database } from '../src/db/database.ts';
import { migrate, openDatabase } from '../src/db/database.ts';
import { DAY_MS, istDate, istDayBounds, istTime, istYesterday } from '../src/ist.ts';
import { FakeCashfree } from '../test/support/fake-cashfree.ts';
import { FakeSetu } from '../test/support/fake-setu.ts';
import { seedReconcileDay } from '../test/support/reconcile-day.ts';
import { cliAsync } from '../test/support/process.ts';
import type { Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { startGateway } from './processes.ts';
import { formatPacedPhase, pacedPhases, type PacedPhase } from './reconcile-paced.ts';
import { maxInAnySecond, tap, watchRuns, type Watched } from './reconcile-watch.ts';
import { connect, freshDatabase } from './store.ts';

const FAKE_LATENCY_MS = 20;
const PACED_ROWS = 2000;
const LOOKBACK_DAYS = 7;
const DEFAULT_LIMITS = { setu: 20, cashfree: 100 };
const TARGET = { hours: 6, rssMb: 150 };

export interface ReconcileReport {
  kind: 'sqlite' | 'postgres';
  perDay: number;
  /** Whether the paced phases at the default limits stayed under the RSS target. */
  rssMet: boolean;
  /** The run with the limits raised (null with --reconcile-paced-only). */
  full: FullRun | null;
  /** On the full-size database at the default limits, one channel per process, for a bounded time. */
  pacedAtDefaults: PacedPhase[];
  paced: {
    transactions: number;
    setu: Paced;
    cashfree: Paced;
  } | null;
  projection: {
    /** Hours per channel: the full run's calls ÷ the paced run's measured calls per second. */
    setuH: number;
    cashfreeH: number;
    totalH: number;
    met: { duration: boolean; rss: boolean };
  } | null;
}

interface FullRun {
  /** Transactions per day, the days seeded (the day and its lookback), and all of them. */
  perDay: number;
  days: number;
  rows: number;
  /** The transactions the runs read back: the day's and those of the lookback the provider can change. */
  checked: number;
  fakeLatencyMs: number;
  seedS: number;
  /** From the first run's start to the last run's end (both channels, one after the other). */
  wallS: number;
  perChannelS: { setu: number; cashfree: number };
  /** Reads of a transaction at each fake (Setu: payment histories and refunds), and every call. */
  reads: { setu: number; cashfree: number };
  calls: { setu: number; cashfree: number };
  readsPerS: number;
  idleMb: number;
  peakMb: number;
  aboveIdleMb: number;
}

interface Paced {
  calls: number;
  limitPerS: number;
  /** Calls the fake received per second, from the first to the last. */
  callsPerS: number;
  /** The most calls the fake received in any one second (a sliding window over their arrivals). */
  maxInAnySecond: number;
}

interface Mix {
  payins: number;
  payouts: number;
  refunds: number;
  failedEvery: number;
}

/** A day of `rows` in the mix above. */
function mixOf(rows: number): Mix {
  const payins = Math.round(rows * 0.6);
  const refunds = Math.round(rows * 0.1);
  return { payins, payouts: rows - payins - refunds, refunds, failedEvery: 2 };
}

/** What a lookback day leaves for reconciliation to read back: FAILED pay-ins, refunds, every payout. */
function changeable(m: Mix): number {
  return Math.floor(m.payins / m.failedEvery) + m.refunds + m.payouts;
}

/** Setu's reads of a transaction: a QR's payment history, a refund. */
const setuOp = (r: { method: string; path: string }) =>
  r.method === 'GET' && (r.path.endsWith('/history') || /\/refunds\/[^/]+$/.test(r.path)) ? 'read' : 'other';
const cashfreeOp = (r: { method: string }) => (r.method === 'GET' ? 'read' : 'other');

export async function runReconcile(opts: BenchOptions, progress: Progress): Promise<ReconcileReport> {
  const setu = await new FakeSetu().start();
  const cashfree = await new FakeCashfree().start();
  setu.latencyMs = FAKE_LATENCY_MS;
  cashfree.latencyMs = FAKE_LATENCY_MS;
  try {
    const paced = opts.reconcilePacedOnly ? null : await pacedRun(opts, progress, setu, cashfree);
    setu.qrs.clear();
    setu.refunds.clear();
    cashfree.transfers.clear();
    const full = await fullRun(opts, progress, setu, cashfree);
    // The RSS that counts is the run's at the default limits: the paced phases' peak (the raised run allocates many times faster).
    const rss = Math.max(...full.pacedAtDefaults.map((x) => x.peakMb)) < TARGET.rssMb;
    let projection: ReconcileReport['projection'] = null;
    if (full.report && paced) {
      const setuH = full.report.calls.setu / paced.setu.callsPerS / 3600;
      const cashfreeH = full.report.calls.cashfree / paced.cashfree.callsPerS / 3600;
      const totalH = setuH + cashfreeH;
      projection = { setuH, cashfreeH, totalH, met: { duration: totalH < TARGET.hours, rss } };
    }
    return {
      kind: full.kind,
      perDay: opts.reconcileRows,
      full: full.report,
      pacedAtDefaults: full.pacedAtDefaults,
      rssMet: rss,
      paced,
      projection,
    };
  } finally {
    await setu.stop();
    await cashfree.stop();
  }
}

async function fullRun(opts: BenchOptions, progress: Progress, setu: FakeSetu, cashfree: FakeCashfree) {
  const store = await freshDatabase(opts.db, 'reconcile');
  const database = openDatabase(store.url);
  const kind = database.kind;
  const perDay = opts.reconcileRows;
  const days = LOOKBACK_DAYS + 1;
  const expected = perDay + LOOKBACK_DAYS * changeable(mixOf(perDay));
  let taps: { setu: ReturnType<typeof tap>; cashfree: ReturnType<typeof tap> } | null = null;
  const count = (op: string) => taps!.setu.times(op).length + taps!.cashfree.times(op).length;
  let gateway: Awaited<ReturnType<typeof startGateway>> | null = null;
  try {
    await migrate(database);
    const seeded = await seedDays(store.url, database, { setu, cashfree }, perDay, progress);
    progress.line(
      `[${kind}] reconcile: ${(perDay * days).toLocaleString('en')} seeded in ${seeded.seedS.toFixed(1)} s; paced phases at the default limits first`,
    );
    const ops = { setu: setuOp, cashfree: cashfreeOp };
    const pacedAtDefaults = await pacedPhases(
      store.url,
      kind,
      seeded.date,
      { setu, cashfree, ops },
      opts.reconcileWatchS,
      progress,
    );
    if (opts.reconcilePacedOnly) return { kind, report: null, pacedAtDefaults };
    const day = { ...seeded, at: Math.ceil((Date.now() + 45_000) / 60_000) * 60_000 };
    if (istYesterday(day.at) !== day.date) throw new Error('the IST day turned during the paced phases');
    taps = { setu: tap(setu, setuOp), cashfree: tap(cashfree, cashfreeOp) };
    gateway = await startGateway(store.url, {
      ...setu.env(),
      ...cashfree.env(),
      SETU_MAX_RPS: '100000',
      CASHFREE_MAX_RPS: '100000',
      RECONCILE_LOOKBACK_DAYS: String(LOOKBACK_DAYS),
      RECONCILE_AT: istTime(day.at).slice(11, 16),
    });
    if (Date.now() > day.at - 5_000) throw new Error('the gateway started too late to be seen idle');
    progress.line(
      `[${kind}] reconcile: the accelerated gateway waits for RECONCILE_AT (${Math.round((day.at - Date.now()) / 1000)} s)`,
    );
    const watched = await watchRuns(gateway.pid, store.url, day, (peak) =>
      progress.update(
        `[${kind}] reconcile: ${count('read').toLocaleString('en')} of ${expected.toLocaleString('en')} read, ${Math.round(peak)} MB`,
      ),
    );
    const n = (t: ReturnType<typeof tap>, op: string) => t.times(op).length;
    const reads = { setu: n(taps.setu, 'read'), cashfree: n(taps.cashfree, 'read') };
    const calls = {
      setu: reads.setu + n(taps.setu, 'other'),
      cashfree: reads.cashfree + n(taps.cashfree, 'other'),
    };
    const report = fullReport(watched, { perDay, days, expected, seedS: day.seedS, reads, calls });
    progress.line(
      `[${kind}] reconcile: ${expected.toLocaleString('en')} read back in ${report.wallS.toFixed(1)} s; RSS ${report.idleMb.toFixed(0)} MB idle, ${report.peakMb.toFixed(0)} MB at peak`,
    );
    return { kind, report, pacedAtDefaults };
  } finally {
    taps?.setu.stop();
    taps?.cashfree.stop();
    await gateway?.stop();
    await database.close();
    await store.drop();
  }
}

/**
 * Seeds the day that a run at RECONCILE_AT reconciles (yesterday, IST) and the LOOKBACK_DAYS before
 * it (the runs' RECONCILE_AT is set after, to a whole minute far enough for the gateway's start
 * and a look at the idle process).
 */
async function seedDays(
  url: string,
  database: Database,
  fakes: { setu: FakeSetu; cashfree: FakeCashfree },
  perDay: number,
  progress: Progress,
): Promise<{ date: string; seedS: number }> {
  const t0 = Date.now();
  const date = istYesterday(t0);
  const mix = mixOf(perDay);
  for (let back = 0; back <= LOOKBACK_DAYS; back++) {
    const day = istDate(istDayBounds(date).from - back * DAY_MS);
    progress.update(
      `[${database.kind}] reconcile: seeding ${perDay.toLocaleString('en')} transactions of ${day}`,
    );
    await seedReconcileDay(database, fakes, { date: day, ...mix });
  }
  const seedS = (Date.now() - t0) / 1000;
  if (database.kind === 'postgres') {
    const conn = await connect(url);
    await conn.run('analyze transactions');
    await conn.close();
  }
  if (istYesterday(Date.now()) !== date) throw new Error('the IST day turned while seeding: run it again');
  return { date, seedS };
}

/** The full run's figures; throws unless the runs checked every transaction expected. */
function fullReport(
  w: Watched,
  r: Pick<FullRun, 'perDay' | 'days' | 'seedS' | 'reads' | 'calls'> & { expected: number },
): FullRun {
  const { runs, idleMb, peakMb } = w;
  const wallS = (Math.max(...runs.map((x) => x.finished)) - Math.min(...runs.map((x) => x.started))) / 1000;
  const span = (c: string) => {
    const x = runs.find((y) => y.channel === c);
    return x ? (x.finished - x.started) / 1000 : 0;
  };
  const checked = runs.reduce((a, x) => a + x.checked, 0);
  if (checked !== r.expected) throw new Error(`the runs checked ${checked} of ${r.expected} transactions`);
  return {
    perDay: r.perDay,
    days: r.days,
    rows: r.perDay * r.days,
    checked,
    fakeLatencyMs: FAKE_LATENCY_MS,
    seedS: r.seedS,
    wallS,
    perChannelS: { setu: span('setu'), cashfree: span('cashfree') },
    reads: r.reads,
    calls: r.calls,
    readsPerS: (r.reads.setu + r.reads.cashfree) / wallS,
    idleMb,
    peakMb,
    aboveIdleMb: peakMb - idleMb,
  };
}

async function pacedRun(
  opts: BenchOptions,
  progress: Progress,
  setu: FakeSetu,
  cashfree: FakeCashfree,
): Promise<ReconcileReport['paced']> {
  const store = await freshDatabase(opts.db, 'reconcile_paced');
  const database = openDatabase(store.url);
  const taps = { setu: tap(setu, setuOp), cashfree: tap(cashfree, cashfreeOp) };
  try {
    await migrate(database);
    const date = istYesterday(Date.now());
    await seedReconcileDay(database, { setu, cashfree }, { date, ...mixOf(PACED_ROWS) });
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
    const all = (t: ReturnType<typeof tap>) =>
      [...t.times('read'), ...t.times('other')].sort((a, b) => a - b);
    const result = {
      transactions: PACED_ROWS,
      setu: paced(all(taps.setu), DEFAULT_LIMITS.setu),
      cashfree: paced(all(taps.cashfree), DEFAULT_LIMITS.cashfree),
    };
    progress.line(
      `[${database.kind}] reconcile paced: Setu ${result.setu.callsPerS.toFixed(1)} calls/s (limit ${DEFAULT_LIMITS.setu}), Cashfree ${result.cashfree.callsPerS.toFixed(1)} (limit ${DEFAULT_LIMITS.cashfree})`,
    );
    return result;
  } finally {
    taps.setu.stop();
    taps.cashfree.stop();
    await database.close();
    await store.drop();
  }
}

export function formatReconcile(r: ReconcileReport): string {
  const n = (x: number) => x.toLocaleString('en');
  const line = (name: string, x: Paced) =>
    `  ${name}: ${n(x.calls)} calls at ${x.callsPerS.toFixed(1)}/s first to last, at most ${x.maxInAnySecond} in any second (limit ${x.limitPerS}/s)`;
  const rows = r.perDay * (LOOKBACK_DAYS + 1);
  const out = [
    `reconcile (${r.kind}): ${n(r.perDay)} live transactions a day (60 % Setu pay-ins, half FAILED; 30 % Cashfree payouts; 10 % Setu refunds), the day and ${LOOKBACK_DAYS} days of lookback: ${n(rows)} rows`,
    `  paced phases on them, paygate serve at RECONCILE_AT at the default limits, one channel per process, RSS sampled every 250 ms (target < ${TARGET.rssMb} MB: ${r.rssMet ? 'met' : 'NOT met'}):`,
    ...r.pacedAtDefaults.map((x) => `  ${formatPacedPhase(x)}`),
  ];
  const f = r.full;
  if (f)
    out.push(
      `  full run in paygate serve at RECONCILE_AT, limits raised, fakes answering in ${f.fakeLatencyMs} ms (seeded in ${f.seedS.toFixed(1)} s): ${n(f.checked)} read back in ${f.wallS.toFixed(1)} s (Setu ${f.perChannelS.setu.toFixed(1)} s, Cashfree ${f.perChannelS.cashfree.toFixed(1)} s), ${f.readsPerS.toFixed(0)} reads/s`,
      `  reads: Setu ${n(f.reads.setu)}, Cashfree ${n(f.reads.cashfree)}; calls: Setu ${n(f.calls.setu)}, Cashfree ${n(f.calls.cashfree)}`,
      `  RSS of that process: ${f.idleMb.toFixed(0)} MB idle, ${f.peakMb.toFixed(0)} MB at peak (${f.aboveIdleMb.toFixed(0)} MB above idle)`,
    );
  if (r.paced)
    out.push(
      `  ${n(r.paced.transactions)} transactions of the mix at the default limits (paygate reconcile):`,
      line('Setu', r.paced.setu),
      line('Cashfree', r.paced.cashfree),
    );
  const j = r.projection;
  if (j)
    out.push(
      `  projected at the default limits (the full run's calls ÷ the paced calls/s, channels one after the other): Setu ${j.setuH.toFixed(2)} h + Cashfree ${j.cashfreeH.toFixed(2)} h = ${j.totalH.toFixed(2)} h (target < ${TARGET.hours} h: ${j.met.duration ? 'met' : 'NOT met'})`,
    );
  return out.join('\n');
}
