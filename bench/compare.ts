/**
 * Compares the gateway's CPU time per request between checkouts (an A/B of a change), more
 * steadily than `npm run bench`'s req/s: each checkout's gateway in turn, on one shared SQLite
 * database, pinned to CPU 1 while the load comes from CPU 0, in alternating rounds; the median of
 * the rounds per checkout.
 *
 *   git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   taskset -c 0 node --import tsx bench/compare.ts /tmp/before . [--scenario payin_status] [--rounds 5]
 *
 * Each checkout is compiled first (`tsc -p tsconfig.build.json`) and started through its own
 * bench/processes.ts, so it runs as installed. Linux only (taskset, /proc).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { RequestSpec } from 'autocannon';
import { drive, median, Progress } from './load.ts';
import type { Server } from './processes.ts';
import { freshPosts, payinBody, statusPosts } from './requests.ts';
import { createFundedMerchant, GATEWAY_ENV } from './gateway.ts';
import { fillPayins, freshDatabase } from './store.ts';

type StartGateway = (url: string, env: Record<string, string>) => Promise<Server>;

const SCENARIOS: Record<string, (apiKey: string) => RequestSpec[]> = {
  payin_status: (key) => statusPosts('/payments/payin_status', key, 10_000),
  onsite: (key) => freshPosts('/payments/onsite/payin', [key], () => payinBody('on')),
  offsite: (key) => freshPosts('/payments/offsite/payin', [key], () => payinBody('off')),
};

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scenario: { type: 'string', default: 'payin_status' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '6' },
  },
});
const requests = SCENARIOS[values.scenario];
if (positionals.length < 2 || !requests) {
  console.error(
    `usage: taskset -c 0 node --import tsx bench/compare.ts DIR DIR… [--scenario ${Object.keys(SCENARIOS).join('|')}] [--rounds N] [--duration S]`,
  );
  process.exit(2);
}
const rounds = Number(values.rounds);
const durationS = Number(values.duration);

const trees = positionals.map((dir) => path.resolve(dir));
const starters = new Map<string, StartGateway>();
for (const dir of trees) {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  const processes = (await import(path.join(dir, 'bench/processes.ts'))) as { startGateway: StartGateway };
  starters.set(dir, processes.startGateway);
}

const database = await freshDatabase(null, 'compare');
const merchant = createFundedMerchant(database.url);
await fillPayins(database.url, merchant.merchantId, 1, 10_000);
const progress = new Progress(false);
const cpu = new Map<string, number[]>(trees.map((t) => [t, []]));
const rps = new Map<string, number[]>(trees.map((t) => [t, []]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const dir of trees) {
      const gateway = await starters.get(dir)!(database.url, GATEWAY_ENV);
      try {
        execFileSync('taskset', ['-a', '-p', '-c', '1', String(gateway.pid)], { stdio: 'ignore' });
        const spec = { baseUrl: gateway.baseUrl, pid: gateway.pid, connections: 50 };
        await drive(
          { ...spec, requests: requests(merchant.apiKey), durationS: 3, label: 'warm-up' },
          progress,
        );
        const label = `round ${round}/${rounds} ${dir}`;
        const result = await drive(
          { ...spec, requests: requests(merchant.apiKey), durationS, label },
          progress,
        );
        if (result.non2xx + result.errors > 0)
          throw new Error(`${dir}: ${JSON.stringify(result.statusCodes)}`);
        cpu.get(dir)!.push(result.cpuUsPerReq ?? NaN);
        rps.get(dir)!.push(result.rps);
        progress.line(
          `${label}: ${result.cpuUsPerReq?.toFixed(1)} µs CPU/req, ${result.rps.toFixed(0)} req/s`,
        );
      } finally {
        await gateway.stop();
      }
    }
  }
} finally {
  await database.drop();
}
console.log(`\n${values.scenario}, ${rounds} rounds of ${durationS} s, gateway pinned to CPU 1:`);
for (const dir of trees) {
  const us = cpu.get(dir)!;
  console.log(
    `${dir}: median ${median(us).toFixed(1)} µs CPU/req (${us.map((u) => u.toFixed(1)).join(', ')}), median ${median(rps.get(dir)!).toFixed(0)} req/s`,
  );
}
