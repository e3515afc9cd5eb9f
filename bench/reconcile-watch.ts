/**
 * What the reconcile scenario watches: the calls each fake received (by arrival time), the serving
 * process's resident memory while it reconciles, and the runs it stores as they finish.
 */
import fs from 'node:fs';
import { connect } from './store.ts';

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
export function tap(fake: { requests: { at: number }[] }, operation: (r: any) => string | null) {
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

/** Resident memory of a process, from /proc (MB), or null off Linux. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(text)?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null;
  }
}

/** The finished runs of a day, and the serving process's RSS while idle before them and at peak during them. */
export interface Watched {
  runs: RunRow[];
  idleMb: number;
  peakMb: number;
}

/**
 * Waits for the runs of `day` in process `pid`, sampling its RSS: the samples of the 3 s before
 * RECONCILE_AT (once the process has settled) are its idle RSS, the highest after it its peak.
 */
export async function watchRuns(
  pid: number,
  url: string,
  day: { at: number; date: string },
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

export interface RunRow {
  channel: string;
  started: number;
  finished: number;
  checked: number;
}

/** Waits until both channels' runs of `date` are finished (a run writes its counts when it ends). */
export async function waitForRuns(
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
