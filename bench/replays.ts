/**
 * Replays: idempotent repeats of onsite creations (the same order number and body again, as a
 * merchant's retry after a timeout sends them) on a gateway whose merchant already has many rows.
 * The gateway starts on a new database; then `replayRows` pay-ins of its merchant are bulk-loaded
 * with no ANALYZE (a burst into an empty table: the planner has whatever statistics the gateway
 * itself gathers), and 2,000 pay-ins are created through the API to be replayed. Then, on that one
 * gateway, runs alternate: plain creation, 100 % replays, and creation with 5 % replays; each is
 * reported as a ratio to plain creation (target ≥ 0.8).
 */
import type { RequestSpec } from 'autocannon';
import type { LoadResult, Progress } from './load.ts';
import { drive, medianResult } from './load.ts';
import type { BenchOptions } from './options.ts';
import { startGateway, type Server } from './processes.ts';
import { freshPosts, payinBody } from './requests.ts';
import { createFundedMerchant, GATEWAY_ENV, profileFlags, warmupSeconds } from './gateway.ts';
import { engineVersion, fillPayins, freshDatabase } from './store.ts';

export interface ReplaysReport {
  kind: 'sqlite' | 'postgres';
  engine: string;
  rowsLoaded: number;
  loadSeconds: number;
  creation: LoadResult;
  rows: { name: string; result: LoadResult; ratio: number; met: boolean }[];
}

const TARGET = 0.8;
const REPLAYED = 2000;
const PATH = '/payments/onsite/payin';

/** Creates the pay-ins to replay through the API, `concurrency` at a time; returns their bodies. */
async function createReplayable(server: Server, apiKey: string, concurrency = 20): Promise<string[]> {
  const bodies = Array.from({ length: REPLAYED }, (_, i) =>
    payinBody('rp', { merchant_order_no: `rp-${i}` }),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const res = await fetch(`${server.baseUrl}${PATH}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body,
        });
        if (res.status !== 200)
          throw new Error(`creating a pay-in to replay: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return bodies;
}

/** A way of posting creations: plain, replays only, or a mix. */
interface Variant {
  name: string;
  requests: () => RequestSpec[];
}

/** The variants over `replayable` (bodies created already, so each post of one is a replay). */
function variantsOf(apiKey: string, replayable: string[]): Variant[] {
  const key = [apiKey];
  const pick = () => replayable[Math.floor(Math.random() * replayable.length)]!;
  return [
    { name: 'creation', requests: () => freshPosts(PATH, key, () => payinBody('rc')) },
    { name: '100 % replays', requests: () => freshPosts(PATH, key, pick) },
    {
      name: 'creation with 5 % replays',
      requests: () => freshPosts(PATH, key, () => (Math.random() < 0.05 ? pick() : payinBody('rm'))),
    },
  ];
}

/** Each variant warmed once, then `opts.runs` rounds of all of them in turn; the runs of each variant. */
async function driveVariants(
  gateway: Server,
  variants: Variant[],
  opts: BenchOptions,
  progress: Progress,
  kind: string,
): Promise<LoadResult[][]> {
  const base = { baseUrl: gateway.baseUrl, pid: gateway.pid, connections: opts.connections };
  for (const v of variants)
    await drive(
      {
        ...base,
        durationS: warmupSeconds(opts.durationS),
        requests: v.requests(),
        label: `[${kind}] ${v.name} warm-up`,
      },
      progress,
    );
  const runs = variants.map(() => [] as LoadResult[]);
  for (let run = 1; run <= opts.runs; run++)
    for (const [i, v] of variants.entries()) {
      const r = await drive(
        {
          ...base,
          durationS: opts.durationS,
          requests: v.requests(),
          label: `[${kind}] ${v.name} run ${run}`,
        },
        progress,
      );
      runs[i]!.push(r);
      progress.line(
        `[${kind}] ${v.name} run ${run}/${opts.runs}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99Ms} ms`,
      );
    }
  return runs;
}

export async function runReplays(opts: BenchOptions, progress: Progress): Promise<ReplaysReport> {
  const db = await freshDatabase(opts.db, 'replays');
  const kind = db.kind;
  let gateway: Server | null = null;
  try {
    const merchant = createFundedMerchant(db.url);
    const engine = await engineVersion(db.url);
    gateway = await startGateway(db.url, GATEWAY_ENV, profileFlags(opts));
    const total = opts.replayRows;
    const t0 = Date.now();
    await fillPayins(db.url, merchant.merchantId, 1, total, {
      analyze: false,
      progress: (done) =>
        progress.update(
          `[${kind}] replays: loaded ${done.toLocaleString('en')} of ${total.toLocaleString('en')} rows`,
        ),
    });
    const loadSeconds = (Date.now() - t0) / 1000;
    progress.line(
      `[${kind}] replays: loaded ${total.toLocaleString('en')} pay-ins of one merchant in ${loadSeconds.toFixed(1)} s (no ANALYZE)`,
    );
    const variants = variantsOf(merchant.apiKey, await createReplayable(gateway, merchant.apiKey));
    const runs = await driveVariants(gateway, variants, opts, progress, kind);
    const [creation, ...others] = runs.map(medianResult);
    return {
      kind,
      engine,
      rowsLoaded: total,
      loadSeconds,
      creation: creation!,
      rows: others.map((result, i) => {
        const ratio = result.rps / creation!.rps;
        return {
          name: variants[i + 1]!.name,
          result,
          ratio,
          met: ratio >= TARGET && result.non2xx + result.errors === 0,
        };
      }),
    };
  } finally {
    await gateway?.stop();
    await db.drop();
  }
}

export function formatReplays(r: ReplaysReport): string {
  const line = (name: string, x: LoadResult, extra: string) =>
    `  ${name.padEnd(26)} ${x.rps.toFixed(0).padStart(6)} req/s  p50 ${x.p50Ms} ms  p99 ${x.p99Ms} ms  ${x.cpuUsPerReq?.toFixed(0) ?? '?'} µs CPU/req${extra}`;
  return [
    `replays (${r.kind}: ${r.engine}): ${r.rowsLoaded.toLocaleString('en')} pay-ins of one merchant loaded in ${r.loadSeconds.toFixed(1)} s with no ANALYZE, then ${REPLAYED.toLocaleString('en')} created to replay`,
    line('creation', r.creation, ''),
    ...r.rows.map((x) =>
      line(
        x.name,
        x.result,
        `  ratio ${x.ratio.toFixed(2)} (target ≥ ${TARGET}) ${x.met ? 'ok' : 'NOT MET'}${x.result.non2xx + x.result.errors ? `; answers ${JSON.stringify(x.result.statusCodes)}` : ''}`,
      ),
    ),
  ].join('\n');
}
