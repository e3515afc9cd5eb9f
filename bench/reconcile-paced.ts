/**
 * The reconcile scenario's paced phase: on the full-size database just seeded, a `paygate serve` at
 * the default provider limits reconciles the day at RECONCILE_AT, one channel per process (the
 * other provider not configured: the scheduler runs the channels one after the other, and Setu's
 * alone takes hours), each watched for a bounded time. Its RSS is sampled every 250 ms: idle (the
 * 3 s before RECONCILE_AT), at peak (the kernel's high-water mark from RECONCILE_AT on), and the
 * highest of each 30 s, to show whether what the process holds grows with the rows read. The
 * phase's runs are then stopped and forgotten (runs and leases of the day deleted) so that the
 * accelerated run reconciles the same day from its start.
 */
import fs from 'node:fs';
import { istTime } from '../src/ist.ts';
import type { FakeCashfree } from '../test/support/fake-cashfree.ts';
import type { FakeSetu } from '../test/support/fake-setu.ts';
import type { Progress } from './load.ts';
import { startGateway } from './processes.ts';
import { rssMb, tap } from './reconcile-watch.ts';
import { connect } from './store.ts';

const SLICE_S = 30;
/** How often the serving process's heap is read from its /metrics. */
const HEAP_EVERY_MS = 2_000;

export interface PacedPhase {
  channel: 'setu' | 'cashfree';
  limitPerS: number;
  watchedS: number;
  /** Whether the channel's run ended within the watch (else it was stopped at its end). */
  finished: boolean;
  /** Reads of a transaction at the fake, and every call, from RECONCILE_AT to the end of the watch. */
  reads: number;
  calls: number;
  callsPerS: number;
  idleMb: number;
  peakMb: number;
  /** The highest sampled RSS in each SLICE_S seconds from RECONCILE_AT. */
  slicesMb: number[];
  /** V8's heap (reserved, and in use) at its highest in each SLICE_S seconds, and external memory (Buffers). */
  heapTotalMb: number[];
  heapUsedMb: number[];
  externalMb: number[];
}

interface Fakes {
  setu: FakeSetu;
  cashfree: FakeCashfree;
  ops: { setu: (r: any) => string; cashfree: (r: any) => string };
}

/** Both channels' paced phases on the seeded `date`; leaves the day as if never reconciled. */
export async function pacedPhases(
  url: string,
  kind: string,
  date: string,
  fakes: Fakes,
  watchS: { setu: number; cashfree: number },
  progress: Progress,
): Promise<PacedPhase[]> {
  const phases: PacedPhase[] = [];
  for (const channel of ['setu', 'cashfree'] as const) {
    const phase = await pacedPhase(url, kind, { date, channel, watchedS: watchS[channel] }, fakes, progress);
    phases.push(phase);
    progress.line(`[${kind}] ${formatPacedPhase(phase)}`);
  }
  const conn = await connect(url);
  try {
    const p = kind === 'sqlite' ? '?' : '$1';
    await conn.run(`delete from reconcile_runs where date = ${p}`, [date]);
    await conn.run(`delete from reconcile_leases where date = ${p}`, [date]);
  } finally {
    await conn.close();
  }
  return phases;
}

/** One paced phase in a line: reads, rate, RSS per slice and the heap beside it. */
export function formatPacedPhase(x: PacedPhase): string {
  const mb = (xs: number[]) => xs.map((m) => m.toFixed(0)).join(', ');
  const n = (v: number) => v.toLocaleString('en');
  const ran = x.finished ? `its whole run, ${x.watchedS} s` : `${x.watchedS} s (its run not finished)`;
  return [
    `reconcile paced ${x.channel}: ${n(x.reads)} read (${n(x.calls)} calls, ${x.callsPerS.toFixed(1)}/s, limit ${x.limitPerS}/s) in ${ran};`,
    `RSS ${x.idleMb.toFixed(0)} MB idle, ${x.peakMb.toFixed(0)} MB at peak; highest per ${SLICE_S} s: ${mb(x.slicesMb)} MB;`,
    `heap reserved ${mb(x.heapTotalMb)} MB; in use ${mb(x.heapUsedMb)} MB; external ${mb(x.externalMb)} MB`,
  ].join(' ');
}

async function pacedPhase(
  url: string,
  kind: string,
  run: { date: string; channel: 'setu' | 'cashfree'; watchedS: number },
  fakes: Fakes,
  progress: Progress,
): Promise<PacedPhase> {
  const { date, channel } = run;
  const fake = fakes[channel];
  const limitPerS = channel === 'setu' ? 20 : 100;
  const at = Math.ceil((Date.now() + 25_000) / 60_000) * 60_000;
  // Default limits: no SETU_MAX_RPS or CASHFREE_MAX_RPS given.
  const gateway = await startGateway(url, {
    ...fake.env(),
    RECONCILE_AT: istTime(at).slice(11, 16),
  });
  fake.requests.splice(0);
  const t = tap(fake, fakes.ops[channel]);
  try {
    if (Date.now() > at - 5_000) throw new Error('the gateway started too late to be seen idle');
    progress.update(`[${kind}] reconcile paced ${channel}: waiting for RECONCILE_AT`);
    const idle: number[] = [];
    const samples: { at: number; mb: number }[] = [];
    const sample = () => {
      const mb = rssMb(gateway.pid, 'VmRSS');
      if (mb === null) return;
      if (Date.now() < at) idle.push(mb);
      else samples.push({ at: Date.now(), mb });
    };
    await sleep(at - 3_000 - Date.now());
    const sampler = setInterval(sample, 250);
    sample();
    await sleep(at - 200 - Date.now());
    let hwmReset = false;
    try {
      fs.writeFileSync(`/proc/${gateway.pid}/clear_refs`, '5');
      hwmReset = true;
    } catch {
      // the sampled peak alone
    }
    const heap = watchHeap(gateway.baseUrl, at);
    const end = at + run.watchedS * 1000;
    let finished = false;
    while (Date.now() < end && !finished) {
      await sleep(Math.min(5_000, end - Date.now()));
      finished = await runFinished(url, kind, date, channel);
      progress.update(
        `[${kind}] reconcile paced ${channel}: ${t.times('read').length.toLocaleString('en')} read, ${Math.round((end - Date.now()) / 1000)} s to go`,
      );
    }
    const watchedS = Math.round((Date.now() - at) / 1000);
    clearInterval(sampler);
    sample();
    const heapSlices = await heap.stop();
    const hwm = hwmReset ? (rssMb(gateway.pid, 'VmHWM') ?? 0) : 0;
    const reads = t.times('read');
    const all = [...reads, ...t.times('other')].sort((a, b) => a - b);
    const slicesMb = highestPerSlice(samples, at);
    return {
      channel,
      limitPerS,
      watchedS,
      finished,
      ...heapSlices,
      reads: reads.length,
      calls: all.length,
      callsPerS: all.length > 1 ? (all.length - 1) / ((all.at(-1)! - all[0]!) / 1000) : 0,
      idleMb: idle.length > 0 ? idle.reduce((a, b) => a + b, 0) / idle.length : 0,
      peakMb: Math.max(hwm, ...samples.map((s) => s.mb)),
      slicesMb,
    };
  } finally {
    t.stop();
    await gateway.stop();
    fake.requests.splice(0);
  }
}

/** The highest of `samples` in each SLICE_S seconds from `at`. */
function highestPerSlice(samples: { at: number; mb: number }[], at: number): number[] {
  const slices: number[] = [];
  for (const s of samples) {
    const i = Math.floor((s.at - at) / (SLICE_S * 1000));
    slices[i] = Math.max(slices[i] ?? 0, s.mb);
  }
  return slices;
}

/** Whether the channel's run of `date` has ended. */
async function runFinished(url: string, kind: string, date: string, channel: string): Promise<boolean> {
  const conn = await connect(url);
  try {
    const [p1, p2] = kind === 'sqlite' ? ['?', '?'] : ['$1', '$2'];
    const rows = await conn.rows<{ finished_at: unknown }>(
      `select finished_at from reconcile_runs where date = ${p1} and channel = ${p2}`,
      [date, channel],
    );
    return rows.length > 0 && rows.every((r) => r.finished_at !== null);
  } finally {
    await conn.close();
  }
}

/** Reads the process's heap from its /metrics every HEAP_EVERY_MS from `at`; the highest per slice. */
function watchHeap(baseUrl: string, at: number) {
  const slices = { heapTotalMb: [] as number[], heapUsedMb: [] as number[], externalMb: [] as number[] };
  const gauge = (text: string, name: string) =>
    Number(new RegExp(`^paygate_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  const read = async () => {
    if (Date.now() < at) return;
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const i = Math.floor((Date.now() - at) / (SLICE_S * 1000));
    const keep = (key: keyof typeof slices, v: number) => {
      if (Number.isFinite(v)) slices[key][i] = Math.max(slices[key][i] ?? 0, v);
    };
    keep('heapTotalMb', gauge(text, 'nodejs_heap_size_total_bytes'));
    keep('heapUsedMb', gauge(text, 'nodejs_heap_size_used_bytes'));
    keep('externalMb', gauge(text, 'nodejs_external_memory_bytes'));
  };
  let last: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    last = read().catch(() => {});
  }, HEAP_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await last;
      return slices;
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
