/**
 * The processes a benchmark run starts: the gateway (`bin/paygate.js serve`, exactly as deployed),
 * the baseline server, and CLI commands; plus a sampler of a process's resident memory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/support/process.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/paygate.js');

/**
 * Compiles the gateway (`npm run build`), so that `bin/paygate.js` runs the build, as a deployment
 * installed with `npm ci` does, rather than the sources through tsx (which doubles its memory).
 */
export function buildGateway(): void {
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed (${r.status}): ${r.stdout}${r.stderr}`);
}

/** Runs one `paygate … --json` command against a database and returns its JSON answer. */
export function paygateCli(args: string[], env: Record<string, string>): Record<string, unknown> {
  const r = spawnSync(process.execPath, [BIN, ...args, '--json'], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
  });
  if (r.status !== 0)
    throw new Error(`paygate ${args.join(' ')} failed (${r.status}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

export interface Server {
  pid: number;
  baseUrl: string;
  output(): string;
  stop(): Promise<void>;
}

async function startProcess(
  label: string,
  args: string[],
  env: Record<string, string>,
  port: number,
): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 100_000) out = out.slice(-50_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${label} exited early (${child.exitCode}):\n${out}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${label} did not become ready within 60 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    pid: child.pid ?? 0,
    baseUrl,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * The gateway as a real child process. `nodeFlags` go before the script (e.g. --cpu-prof).
 * Settings: no rate limit, warn-level logs, and whatever the scenario adds.
 */
export async function startGateway(
  databaseUrl: string,
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<Server> {
  const port = await freePort();
  return startProcess(
    'paygate serve',
    [...nodeFlags, BIN, 'serve'],
    {
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
      ...env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    port,
  );
}

export async function startBaseline(
  databaseUrl: string,
  merchantId: string,
  nodeFlags: string[] = [],
): Promise<Server> {
  const port = await freePort();
  return startProcess(
    'baseline',
    [...nodeFlags, '--import', 'tsx', path.join(ROOT, 'bench/baseline.ts')],
    {
      BASELINE_DATABASE_URL: databaseUrl,
      BASELINE_PORT: String(port),
      BASELINE_MERCHANT_ID: merchantId,
    },
    port,
  );
}

/** kB figures from /proc/PID/status; null where /proc is not there (not Linux). */
function procStatus(pid: number): { rssKb: number; hwmKb: number } | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0);
    return { rssKb: kb('VmRSS'), hwmKb: kb('VmHWM') };
  } catch {
    return null;
  }
}

export interface RssSampler {
  /** Highest VmRSS seen since the last `mark()`, in MB. */
  mark(): number;
  /** VmHWM (the kernel's own peak) and the highest sample, in MB. */
  stop(): { peakMb: number; sampledPeakMb: number; lastMb: number };
}

/** Samples VmRSS every 250 ms; the kernel's VmHWM is read at the end as the true peak. */
export function sampleRss(pid: number): RssSampler {
  let windowMax = 0;
  let overallMax = 0;
  let last = 0;
  const tick = () => {
    const s = procStatus(pid);
    if (!s) return;
    last = s.rssKb;
    windowMax = Math.max(windowMax, s.rssKb);
    overallMax = Math.max(overallMax, s.rssKb);
  };
  tick();
  const timer = setInterval(tick, 250);
  timer.unref();
  return {
    mark() {
      tick();
      const m = windowMax / 1024;
      windowMax = 0;
      return m;
    },
    stop() {
      tick();
      clearInterval(timer);
      const hwm = procStatus(pid)?.hwmKb ?? overallMax;
      return {
        peakMb: Math.max(hwm, overallMax) / 1024,
        sampledPeakMb: overallMax / 1024,
        lastMb: last / 1024,
      };
    },
  };
}

/** The callbacks scenario's merchant server (bench/receiver.ts) in a process of its own. */
export async function startReceiver(): Promise<Server> {
  const port = await freePort();
  return startProcess(
    'receiver',
    ['--import', 'tsx', path.join(ROOT, 'bench/receiver.ts')],
    { RECEIVER_PORT: String(port) },
    port,
  );
}
