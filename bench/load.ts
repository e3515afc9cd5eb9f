/** Drives one server with autocannon (as a library) and reduces its result to what the table shows. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import autocannon, { type RequestSpec } from 'autocannon';

export interface LoadResult {
  /** Successful (2xx) responses per second over the whole run. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  durationS: number;
  statusCodes: Record<string, number>;
  /**
   * CPU time (user + system) the server process spent per successful request. Less sensitive to
   * other work on the machine than req/s, so it tells where a ratio comes from.
   */
  cpuUsPerReq: number | null;
}

export interface LoadSpec {
  baseUrl: string;
  requests: RequestSpec[];
  durationS: number;
  connections: number;
  /** Requests per second across all connections; unlimited when absent. */
  overallRate?: number;
  /** Stop after this many requests instead of after `durationS`. */
  amount?: number;
  /** Shown in the progress line. */
  label: string;
  /** The server's process id, to measure its CPU time per request (Linux only). */
  pid?: number;
}

let clockTicks: number | null = null;

/** CPU seconds (user + system) a process has used so far, or null where /proc is not there. */
export function cpuSeconds(pid: number): number | null {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    // Fields after the command name: state is 3rd, utime 14th and stime 15th of the full line.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return null;
  }
}

/** A progress line on stderr, rewritten in place on a terminal and once per run otherwise. */
export class Progress {
  private readonly tty = Boolean(process.stderr.isTTY);
  constructor(private readonly quiet: boolean) {}

  update(text: string): void {
    if (this.quiet || !this.tty) return;
    process.stderr.write(`\r\x1b[2K${text}`);
  }

  line(text: string): void {
    if (this.quiet) return;
    process.stderr.write(this.tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
  }
}

export async function drive(spec: LoadSpec, progress: Progress): Promise<LoadResult> {
  const instance = autocannon({
    url: spec.baseUrl,
    connections: spec.connections,
    duration: spec.durationS,
    timeout: 30,
    requests: spec.requests,
    overallRate: spec.overallRate,
    amount: spec.amount,
  });
  const cpuBefore = spec.pid ? cpuSeconds(spec.pid) : null;
  let second = 0;
  let last = 0;
  instance.on('tick', (counter: { counter: number }) => {
    second++;
    last = counter.counter;
    progress.update(`${spec.label}: ${second}${spec.amount ? '' : `/${spec.durationS}`} s, ${last} req/s`);
  });
  const r = await instance;
  const cpuAfter = spec.pid ? cpuSeconds(spec.pid) : null;
  const statusCodes: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(v.count);
  const ok = r['2xx'];
  return {
    rps: ok / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    ok,
    non2xx: r.non2xx,
    errors: r.errors,
    durationS: r.duration,
    statusCodes,
    cpuUsPerReq:
      cpuBefore !== null && cpuAfter !== null && ok > 0 ? ((cpuAfter - cpuBefore) / ok) * 1e6 : null,
  };
}

/** The nearest-rank percentile `p` (0–100) of values sorted ascending; NaN when there are none. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The median of a list of numbers (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Median of each numeric field over several runs; counts (ok, non2xx, errors) are summed. */
export function medianResult(runs: LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  const statusCodes: Record<string, number> = {};
  for (const r of runs)
    for (const [k, v] of Object.entries(r.statusCodes)) statusCodes[k] = (statusCodes[k] ?? 0) + v;
  return {
    rps: median(runs.map((r) => r.rps)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    durationS: sum((r) => r.durationS),
    statusCodes,
    cpuUsPerReq: runs.every((r) => r.cpuUsPerReq !== null) ? median(runs.map((r) => r.cpuUsPerReq!)) : null,
  };
}
