/**
 * Refund creation against payout creation, in short rounds that alternate on one gateway: a
 * steadier ratio than `npm run bench -- --only refund` gets from 10 s runs (the machine's speed
 * drifts between runs), and where each kind's cost goes, per request: the gateway's CPU and, on a
 * PostgreSQL server on this machine, its processes' CPU, buffer hits and reads, and WAL. A tool
 * for people, never part of the tests. Linux only (/proc, pgrep).
 *
 *   npm run build && node --import tsx bench/alternate.ts [--db postgres://root@127.0.0.1:5432/test]
 *     [--rounds 12] [--duration 5] [--refund-rows 200000]
 *
 * The PostgreSQL figures count every postgres process on the machine: run nothing else on it.
 *
 * The worker can take a round's transactions on (PENDING to PROCESSING) during the next round, so
 * each kind may pay some of the other's cost, most on SQLite, where the worker runs in the gateway's
 * process: there it gave a ratio of 0.92 where `npm run bench -- --only refund` gave 0.84 minutes
 * later. Take the ratio from the bench on SQLite.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { createFundedMerchant, GATEWAY_ENV } from './gateway.ts';
import { cpuSeconds, drive, median, Progress } from './load.ts';
import { startGateway } from './processes.ts';
import { freshPosts, payoutBody, refundBody } from './requests.ts';
import { connect, fillPayins, freshDatabase, type RawConnection } from './store.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    rounds: { type: 'string', default: '12' },
    duration: { type: 'string', default: '5' },
    'refund-rows': { type: 'string', default: '200000' },
  },
});
const rounds = Number(values.rounds);
const durationS = Number(values.duration);
const rows = Number(values['refund-rows']);

type Kind = 'refund' | 'payout';

interface Sample {
  at: number;
  gatewayCpu: number;
  postgresCpu: number;
  hit: number;
  read: number;
  wal: number;
}

/** CPU seconds of every postgres process on this machine. */
function postgresCpu(): number {
  let total = 0;
  let pids: string[] = [];
  try {
    pids = execFileSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return 0;
  }
  for (const pid of pids) total += cpuSeconds(Number(pid)) ?? 0;
  return total;
}

const database = await freshDatabase(values.db ?? null, 'alternate');
const merchant = createFundedMerchant(database.url);
await fillPayins(database.url, merchant.merchantId, 1, rows, { prefix: 'rfnd' });
const gateway = await startGateway(database.url, GATEWAY_ENV);
const stats: RawConnection | null = database.kind === 'postgres' ? await connect(database.url) : null;
const databaseName = database.kind === 'postgres' ? new URL(database.url).pathname.slice(1) : '';

async function sample(): Promise<Sample> {
  const base = { at: Date.now(), gatewayCpu: cpuSeconds(gateway.pid) ?? 0 };
  if (!stats) return { ...base, postgresCpu: 0, hit: 0, read: 0, wal: 0 };
  const [s] = await stats.rows<{ hit: string; read: string; wal: string }>(
    `select blks_hit::text as hit, blks_read::text as read, (select wal_bytes::text from pg_stat_wal) as wal
     from pg_stat_database where datname = $1`,
    [databaseName],
  );
  return {
    ...base,
    postgresCpu: postgresCpu(),
    hit: Number(s!.hit),
    read: Number(s!.read),
    wal: Number(s!.wal),
  };
}

const requests = {
  refund: () => freshPosts('/payments/refund', [merchant.apiKey], () => refundBody('rf', rows)),
  payout: () => freshPosts('/payments/payout', [merchant.apiKey], () => payoutBody('po')),
};
const columns = ['req/s', 'gateway µs', 'postgres µs', 'buffer hits', 'buffer reads', 'WAL bytes'];
const measured: Record<Kind, number[][]> = { refund: [], payout: [] };
const progress = new Progress(false);
try {
  for (const kind of ['refund', 'payout'] as const)
    await drive(
      {
        baseUrl: gateway.baseUrl,
        requests: requests[kind](),
        durationS: 3,
        connections: 50,
        label: `${kind} warm-up`,
      },
      progress,
    );
  for (let round = 1; round <= rounds; round++) {
    // Each kind goes first in every other round, so that neither always follows the other.
    const order: Kind[] = round % 2 ? ['refund', 'payout'] : ['payout', 'refund'];
    for (const kind of order) {
      const before = await sample();
      const result = await drive(
        {
          baseUrl: gateway.baseUrl,
          requests: requests[kind](),
          durationS,
          connections: 50,
          label: `round ${round}/${rounds} ${kind}`,
        },
        progress,
      );
      const after = await sample();
      if (result.non2xx + result.errors > 0)
        throw new Error(`${kind}: ${JSON.stringify(result.statusCodes)}, ${result.errors} errors`);
      const n = result.ok;
      measured[kind].push([
        result.rps,
        ((after.gatewayCpu - before.gatewayCpu) * 1e6) / n,
        ((after.postgresCpu - before.postgresCpu) * 1e6) / n,
        (after.hit - before.hit) / n,
        (after.read - before.read) / n,
        (after.wal - before.wal) / n,
      ]);
    }
    progress.line(
      `round ${round}/${rounds}: refund ${measured.refund.at(-1)![0]!.toFixed(0)} req/s, payout ${measured.payout.at(-1)![0]!.toFixed(0)} req/s`,
    );
  }
} finally {
  await stats?.close();
  await gateway.stop();
  await database.drop();
}
const ratios = measured.refund.map((r, i) => r[0]! / measured.payout[i]![0]!);
console.log(
  `\n${database.kind}, ${rounds} rounds of ${durationS} s of each kind, 50 connections; medians per request:`,
);
const shown = database.kind === 'postgres' ? columns : columns.slice(0, 2);
console.log(['kind', ...shown].map((c) => c.padStart(14)).join(''));
for (const kind of ['refund', 'payout'] as const)
  console.log(
    [kind, ...shown.map((_, c) => median(measured[kind].map((r) => r[c]!)).toFixed(c === 4 ? 2 : 0))]
      .map((c) => c.padStart(14))
      .join(''),
  );
console.log(
  `refund/payout, each round's own: median ${median(ratios).toFixed(3)} (${ratios.map((r) => r.toFixed(2)).join(', ')})`,
);
