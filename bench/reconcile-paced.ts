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

export const PACED_WATCH_S = { setu: 150, cashfree: 300 };
const SLICE_S = 30;

export interface PacedPhase {
  channel: 'setu' | 'cashfree';
  limitPerS: number;
  watchedS: number;
  /** Reads of a transaction at the fake, and every call, from RECONCILE_AT to the end of the watch. */
  reads: number;
  calls: number;
  callsPerS: number;
  idleMb: number;
  peakMb: number;
  /** The highest sampled RSS in each SLICE_S seconds from RECONCILE_AT. */
  slicesMb: number[];
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
  progress: Progress,
): Promise<PacedPhase[]> {
  const phases: PacedPhase[] = [];
  for (const channel of ['setu', 'cashfree'] as const) {
    const phase = await pacedPhase(url, kind, date, channel, fakes, progress);
    phases.push(phase);
    progress.line(
      `[${kind}] reconcile paced ${channel}: ${phase.reads.toLocaleString('en')} read (${phase.calls.toLocaleString('en')} calls, ${phase.callsPerS.toFixed(1)}/s) in ${phase.watchedS} s; RSS ${phase.idleMb.toFixed(0)} MB idle, ${phase.peakMb.toFixed(0)} MB at peak; per ${SLICE_S} s: ${phase.slicesMb.map((x) => x.toFixed(0)).join(', ')} MB`,
    );
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

async function pacedPhase(
  url: string,
  kind: string,
  date: string,
  channel: 'setu' | 'cashfree',
  fakes: Fakes,
  progress: Progress,
): Promise<PacedPhase> {
  const fake = fakes[channel];
  const limitPerS = channel === 'setu' ? 20 : 100;
  const watchedS = PACED_WATCH_S[channel];
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
    const end = at + watchedS * 1000;
    while (Date.now() < end) {
      await sleep(Math.min(5_000, end - Date.now()));
      progress.update(
        `[${kind}] reconcile paced ${channel}: ${t.times('read').length.toLocaleString('en')} read, ${Math.round((end - Date.now()) / 1000)} s to go`,
      );
    }
    clearInterval(sampler);
    sample();
    const hwm = hwmReset ? (rssMb(gateway.pid, 'VmHWM') ?? 0) : 0;
    const reads = t.times('read');
    const all = [...reads, ...t.times('other')].sort((a, b) => a - b);
    const slicesMb: number[] = [];
    for (const s of samples) {
      const i = Math.min(Math.floor((s.at - at) / (SLICE_S * 1000)), watchedS / SLICE_S - 1);
      slicesMb[i] = Math.max(slicesMb[i] ?? 0, s.mb);
    }
    return {
      channel,
      limitPerS,
      watchedS,
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
