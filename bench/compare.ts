/**
 * Compares the gateway's CPU time and rate per request between checkouts (an A/B of a change),
 * more steadily than `npm run bench`'s req/s: each checkout's gateway in turn, pinned to CPU 1
 * while the load comes from CPU 0, in rounds whose order alternates; the median of the rounds per
 * checkout and scenario.
 *
 *   git worktree add /tmp/before HEAD~1 && ln -s "$PWD/node_modules" /tmp/before/node_modules
 *   taskset -c 0 node --import tsx bench/compare.ts /tmp/before . [--scenario onsite,payout] [--rounds 5]
 *
 * By default the checkouts share one database, migrated by the last checkout: what differs is
 * their code. With `--own-databases` each has its own, migrated and funded through its own CLI and
 * kept across rounds (so each grows as the other does): what differs is their code and their
 * schema, as a before-and-after of a release. `--db` runs on PostgreSQL. Each checkout is compiled
 * first (`npm run build`) and started through its own bench/processes.ts, so it runs as installed.
 * Linux only (taskset, /proc).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { RequestSpec } from 'autocannon';
import { drive, median, Progress } from './load.ts';
import type { Server } from './processes.ts';
import { freshPosts, payinBody, payoutBody, statusPosts } from './requests.ts';
import { GATEWAY_ENV } from './gateway.ts';
import { fillPayins, freshDatabase, type BenchDatabase } from './store.ts';

interface Checkout {
  dir: string;
  startGateway: (url: string, env: Record<string, string>) => Promise<Server>;
  createFundedMerchant: (url: string) => { merchantId: string; apiKey: string };
  buildGateway: () => void;
}

const STATUS_ROWS = 10_000;
const SCENARIOS: Record<string, (apiKey: string) => RequestSpec[]> = {
  payin_status: (key) => statusPosts('/payments/payin_status', key, STATUS_ROWS),
  onsite: (key) => freshPosts('/payments/onsite/payin', [key], () => payinBody('on')),
  offsite: (key) => freshPosts('/payments/offsite/payin', [key], () => payinBody('off')),
  payout: (key) => freshPosts('/payments/payout', [key], () => payoutBody('po')),
};

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scenario: { type: 'string', default: 'payin_status' },
    rounds: { type: 'string', default: '5' },
    duration: { type: 'string', default: '6' },
    'own-databases': { type: 'boolean', default: false },
    db: { type: 'string' },
  },
});
const scenarios = values.scenario.split(',');
if (positionals.length < 2 || scenarios.some((s) => !SCENARIOS[s])) {
  console.error(
    `usage: taskset -c 0 node --import tsx bench/compare.ts DIR DIR… [--scenario NAME[,NAME]] (${Object.keys(SCENARIOS).join(', ')}) [--rounds N] [--duration S] [--own-databases] [--db postgres://…]`,
  );
  process.exit(2);
}
const rounds = Number(values.rounds);
const durationS = Number(values.duration);

const checkouts: Checkout[] = [];
for (const dir of positionals.map((d) => path.resolve(d))) {
  const processes = (await import(path.join(dir, 'bench/processes.ts'))) as Checkout;
  const gateway = (await import(path.join(dir, 'bench/gateway.ts'))) as Checkout;
  processes.buildGateway();
  checkouts.push({ ...processes, createFundedMerchant: gateway.createFundedMerchant, dir });
}

/** Each checkout's database and merchant; one shared by all unless --own-databases. */
const stores = new Map<string, { database: BenchDatabase; apiKey: string }>();
async function storeFor(checkout: Checkout): Promise<{ database: BenchDatabase; apiKey: string }> {
  const database = await freshDatabase(values.db ?? null, 'compare');
  const merchant = checkout.createFundedMerchant(database.url);
  if (scenarios.includes('payin_status')) await fillPayins(database.url, merchant.merchantId, 1, STATUS_ROWS);
  return { database, apiKey: merchant.apiKey };
}
if (values['own-databases']) for (const c of checkouts) stores.set(c.dir, await storeFor(c));
else {
  const shared = await storeFor(checkouts.at(-1)!);
  for (const c of checkouts) stores.set(c.dir, shared);
}

const progress = new Progress(false);
const key = (scenario: string, dir: string) => `${scenario} ${dir}`;
const cpu = new Map<string, number[]>();
const rps = new Map<string, number[]>();
try {
  for (let round = 1; round <= rounds; round++) {
    for (const scenario of scenarios) {
      for (const checkout of round % 2 === 1 ? checkouts : [...checkouts].reverse()) {
        const { database, apiKey } = stores.get(checkout.dir)!;
        const gateway = await checkout.startGateway(database.url, GATEWAY_ENV);
        try {
          execFileSync('taskset', ['-a', '-p', '-c', '1', String(gateway.pid)], { stdio: 'ignore' });
          const spec = { baseUrl: gateway.baseUrl, pid: gateway.pid, connections: 50 };
          const requests = SCENARIOS[scenario]!;
          await drive({ ...spec, requests: requests(apiKey), durationS: 3, label: 'warm-up' }, progress);
          const label = `round ${round}/${rounds} ${scenario} ${checkout.dir}`;
          const result = await drive({ ...spec, requests: requests(apiKey), durationS, label }, progress);
          if (result.non2xx + result.errors > 0)
            throw new Error(`${checkout.dir}: ${JSON.stringify(result.statusCodes)}`);
          const k = key(scenario, checkout.dir);
          cpu.set(k, [...(cpu.get(k) ?? []), result.cpuUsPerReq ?? NaN]);
          rps.set(k, [...(rps.get(k) ?? []), result.rps]);
          progress.line(
            `${label}: ${result.cpuUsPerReq?.toFixed(1)} µs CPU/req, ${result.rps.toFixed(0)} req/s`,
          );
        } finally {
          await gateway.stop();
        }
      }
    }
  }
} finally {
  for (const store of new Set(stores.values())) await store.database.drop();
}
const where = `${values.db ? 'PostgreSQL' : 'SQLite'}, ${values['own-databases'] ? 'a database each' : 'one database'}`;
console.log(`\n${rounds} rounds of ${durationS} s, gateway pinned to CPU 1 (${where}):`);
for (const scenario of scenarios) {
  const first = checkouts[0]!.dir;
  for (const { dir } of checkouts) {
    const us = cpu.get(key(scenario, dir))!;
    const rate = median(rps.get(key(scenario, dir))!);
    const change = (rate / median(rps.get(key(scenario, first))!) - 1) * 100;
    console.log(
      `${scenario} ${dir}: median ${median(us).toFixed(1)} µs CPU/req (${us.map((u) => u.toFixed(1)).join(', ')}), median ${rate.toFixed(0)} req/s${dir === first ? '' : ` (${change >= 0 ? '+' : ''}${change.toFixed(1)} % against the first)`}`,
    );
  }
}
