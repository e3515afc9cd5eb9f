/**
 * The fake Cashfree in a process of its own, for a soak that measures when calls arrive: the test
 * process (the gateway making payouts, the database checks) then cannot hold up the event loop
 * that stamps them, so a stall of the test does not bunch the stamps. `spawnFakeCashfree` starts it;
 * run as a script, this file is that process: it prints its env as one JSON line, takes
 * `notify <url>` on stdin, and answers `report` with the call stamps and the transfers created.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FakeCashfree } from './fake-cashfree.ts';

/**
 * What the fake saw: each call's method and arrival (ms, this machine's clock), the creations by
 * transfer_id, and the longest time its event loop was held up (ms): calls that came then were
 * stamped late, together.
 */
export interface CashfreeReport {
  calls: { method: string; at: number }[];
  created: Record<string, number>;
  longestStallMs: number;
}

export interface FakeCashfreeProcess {
  env: Record<string, string>;
  /** Where its webhooks go. */
  notify(url: string): void;
  report(): Promise<CashfreeReport>;
  stop(): Promise<void>;
}

const SELF = fileURLToPath(import.meta.url);
const TICK_MS = 5;

/** Starts the fake Cashfree in its own process and waits for its env. */
export function spawnFakeCashfree(): Promise<FakeCashfreeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', SELF], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    // Ahead of the other processes for the CPU, as a provider on its own machine is (where allowed).
    os.setPriority(child.pid!, -10);
  } catch {
    // Not allowed here (not root): it runs at the others' priority, and says how long it stalled.
  }
  const lines = readline.createInterface({ input: child.stdout! });
  const next: ((line: string) => void)[] = [];
  lines.on('line', (line) => next.shift()?.(line));
  const line = () =>
    new Promise<string>((resolve, reject) => {
      next.push(resolve);
      child.once('exit', (code) => reject(new Error(`the fake Cashfree exited (${code})`)));
    });
  return line().then((first) => handle(child, JSON.parse(first), line));
}

function handle(
  child: ChildProcess,
  env: Record<string, string>,
  line: () => Promise<string>,
): FakeCashfreeProcess {
  return {
    env,
    notify: (url) => child.stdin!.write(`notify ${url}\n`),
    report: async () => {
      const answer = line();
      child.stdin!.write('report\n');
      return JSON.parse(await answer) as CashfreeReport;
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin!.end();
      await exited;
    },
  };
}

async function serve(): Promise<void> {
  const cashfree = await new FakeCashfree().start();
  process.stdout.write(`${JSON.stringify(cashfree.env())}\n`);
  let [ticked, longestStallMs] = [performance.now(), 0];
  const ticker = setInterval(() => {
    const now = performance.now();
    longestStallMs = Math.max(longestStallMs, now - ticked - TICK_MS);
    ticked = now;
  }, TICK_MS);
  const commands = readline.createInterface({ input: process.stdin });
  for await (const command of commands) {
    if (command.startsWith('notify ')) cashfree.notifyUrl = command.slice('notify '.length);
    if (command === 'report') {
      const report: CashfreeReport = {
        calls: cashfree.requests.map((r) => ({ method: r.method, at: r.at })),
        created: Object.fromEntries(cashfree.created),
        longestStallMs: Math.round(longestStallMs),
      };
      process.stdout.write(`${JSON.stringify(report)}\n`);
    }
  }
  clearInterval(ticker);
  await cashfree.stop();
}

if (process.argv[1] === SELF) await serve();
