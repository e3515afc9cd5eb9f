/**
 * Callback delivery: pay-ins reach their final status through the real API
 * (`POST /sandbox/payin/complete`, which runs the one final-status transition and writes the
 * outbox row), and the gateway's dispatcher delivers them to a local merchant server that answers
 * 200. Latency is final status (the transaction's `finalized_at`) to arrival at the receiver.
 *
 * Phases: a warm-up; "burst" (final statuses as fast as 50 connections can make them: deliveries
 * per second and latency while the dispatcher keeps up with that rate); "drain" (the receiver holds
 * its answers while final statuses pile up, then lets go: how fast the dispatcher works off a
 * backlog); "paced" (final statuses at half the slower of those rates: latency when not backlogged).
 */
import type { RequestSpec } from 'autocannon';
import { Webhook } from 'standardwebhooks';
import { signBody } from '../src/callbacks/signature.ts';
import { drive, percentile, type Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { startReceiver, type Server } from './processes.ts';
import type { GatewayHandle } from './gateway.ts';
import { connect, filledPaymentId, fillPayins } from './store.ts';

export interface PhaseResult {
  finals: number;
  delivered: number;
  /** Final statuses per second that the API produced in this phase. */
  finalsPerS: number;
  deliveriesPerS: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface CallbackResult {
  available: boolean;
  reason?: string;
  burst?: PhaseResult;
  drain?: PhaseResult & { backlog: number };
  paced?: PhaseResult & { ratePerS: number };
  duplicates?: number;
  signaturesChecked?: number;
  signaturesValid?: boolean;
  target: string;
  met: boolean | null;
}

interface Receipts {
  receipts: [string, number][];
  duplicates: number;
  samples: { body: string; token: string; attempt: string; headers: Record<string, string> }[];
}

const TARGET = '≥ 2,000 deliveries/s, p99 ≤ 250 ms when not backlogged';

async function receiptsOf(receiver: Server): Promise<Receipts> {
  return (await fetch(`${receiver.baseUrl}/__receipts`)).json() as Promise<Receipts>;
}

/** Settles the pay-ins `prefix` 1…n (or until `durationS` runs out) through the sandbox endpoint. */
function completions(
  apiKey: string,
  prefix: string,
  first = 1,
): { requests: RequestSpec[]; taken: () => number } {
  let next = first;
  return {
    requests: [
      {
        method: 'POST',
        path: '/sandbox/payin/complete',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        setupRequest: (req) => {
          req.body = JSON.stringify({ payment_id: filledPaymentId(next++, prefix), status: 'SUCCESS' });
          return req;
        },
      },
    ],
    taken: () => next - first,
  };
}

/** Waits until `expected` callbacks of `prefix` have arrived, or nothing new came for `quietMs`. */
async function awaitReceipts(
  receiver: Server,
  prefix: string,
  expected: number,
  quietMs = 15_000,
): Promise<Map<string, number>> {
  let lastCount = -1;
  let lastChange = Date.now();
  for (;;) {
    const { receipts } = await receiptsOf(receiver);
    const mine = new Map(receipts.filter(([id]) => id.startsWith(prefix)));
    if (mine.size >= expected) return mine;
    if (mine.size !== lastCount) [lastCount, lastChange] = [mine.size, Date.now()];
    else if (Date.now() - lastChange > quietMs) return mine;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function finalizedAt(databaseUrl: string, prefix: string): Promise<Map<string, number>> {
  const conn = await connect(databaseUrl);
  try {
    const p = conn.kind === 'sqlite' ? '?' : '$1';
    const rows = await conn.rows<{ payment_id: string; finalized_at: number | string }>(
      `select payment_id, finalized_at from transactions where payment_id like ${p} and finalized_at is not null`,
      [`${prefix}%`],
    );
    return new Map(rows.map((r) => [r.payment_id, Number(r.finalized_at)]));
  } finally {
    await conn.close();
  }
}

/** Latency and rate of one phase from its receipts and the final-status times in the database. */
async function phaseResult(
  gw: GatewayHandle,
  prefix: string,
  receipts: Map<string, number>,
  finalsPerS: number,
  from?: number,
): Promise<PhaseResult> {
  const finals = await finalizedAt(gw.databaseUrl, prefix);
  const latencies: number[] = [];
  let firstFinal = Infinity;
  let lastReceipt = 0;
  for (const at of finals.values()) firstFinal = Math.min(firstFinal, at);
  for (const [id, at] of receipts) {
    const f = finals.get(id);
    if (f !== undefined) latencies.push(Math.max(0, at - f));
    lastReceipt = Math.max(lastReceipt, at);
  }
  latencies.sort((a, b) => a - b);
  const start = from ?? firstFinal;
  const counted = from === undefined ? receipts.size : [...receipts.values()].filter((t) => t >= from).length;
  return {
    finals: finals.size,
    delivered: receipts.size,
    finalsPerS,
    deliveriesPerS: lastReceipt > start ? (counted / (lastReceipt - start)) * 1000 : 0,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.at(-1) ?? NaN,
  };
}

/** What every phase works with: the gateway, the merchant server, the options and where to report. */
interface Run {
  gw: GatewayHandle;
  receiver: Server;
  opts: BenchOptions;
  progress: Progress;
  kind: string;
}

/** Loads `n` PENDING pay-ins `prefix` 1…n whose callbacks go to the receiver. */
function fill(run: Run, prefix: string, n: number) {
  const callbackUrl = `${run.receiver.baseUrl}/cb`;
  return fillPayins(run.gw.databaseUrl, run.gw.merchantId, 1, n, { prefix, allPending: true, callbackUrl });
}

/**
 * Settles the pay-ins `prefix` through the API: `n` of them, or as many as `durationS` allows when
 * it is given.
 */
async function settle(
  run: Run,
  prefix: string,
  n: number,
  label: string,
  extra: { durationS?: number; overallRate?: number; connections?: number } = {},
) {
  const c = completions(run.gw.apiKey, prefix);
  const durationS = extra.durationS ?? Math.max(run.opts.durationS * 4, 60);
  const started = Date.now();
  const r = await drive(
    {
      baseUrl: run.gw.server.baseUrl,
      requests: c.requests,
      durationS,
      connections: extra.connections ?? run.opts.connections,
      overallRate: extra.overallRate,
      amount: extra.durationS === undefined ? n : undefined,
      label,
    },
    run.progress,
  );
  return { ...r, wallS: (Date.now() - started) / 1000 };
}

/**
 * Is a dispatcher delivering at all? One final status, up to 20 s for its callback. Answers the
 * result that says why not, or null when the callback arrived.
 */
async function probeDispatcher(run: Run): Promise<CallbackResult | null> {
  const { gw, progress, kind } = run;
  progress.line(`[${kind}] callbacks: probing for a callback dispatcher`);
  await fill(run, 'cbpr', 1);
  const answer = await fetch(`${gw.server.baseUrl}/sandbox/payin/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` },
    body: JSON.stringify({ payment_id: filledPaymentId(1, 'cbpr'), status: 'SUCCESS' }),
  });
  if (!answer.ok)
    throw new Error(`settling a sandbox pay-in failed: ${answer.status} ${await answer.text()}`);
  const probe = await awaitReceipts(run.receiver, 'cbpr', 1, 20_000);
  if (probe.size > 0) return null;
  const conn = await connect(gw.databaseUrl);
  const rows = await conn.rows<{ status: string; attempts: number }>(
    `select status, attempts from callback_deliveries where payment_id = ${conn.kind === 'sqlite' ? '?' : '$1'}`,
    [filledPaymentId(1, 'cbpr')],
  );
  await conn.close();
  const row = rows[0];
  return {
    available: false,
    reason: row
      ? `the outbox row was written (status ${row.status}, ${row.attempts} attempts) but no callback arrived within 20 s: no dispatcher is running in the serving process`
      : 'the final status wrote no outbox row',
    target: TARGET,
    met: null,
  };
}

/** Final statuses as fast as the connections make them, delivered while they come. */
async function burstPhase(run: Run, n: number): Promise<PhaseResult> {
  const { kind } = run;
  const burstRun = await settle(run, 'cbbu', n, `[${kind}] callbacks burst`, {
    durationS: run.opts.durationS,
  });
  const burst = await phaseResult(
    run.gw,
    'cbbu',
    await awaitReceipts(run.receiver, 'cbbu', burstRun.ok),
    burstRun.rps,
  );
  run.progress.line(
    `[${kind}] callbacks burst: ${burst.finalsPerS.toFixed(0)} final statuses/s, ${burst.deliveriesPerS.toFixed(0)} deliveries/s, p99 ${burst.p99Ms} ms`,
  );
  return burst;
}

/** Hold the answers, pile up final statuses, then let go and time the backlog. */
async function drainPhase(run: Run, n: number): Promise<PhaseResult & { backlog: number }> {
  const { receiver, kind } = run;
  await fetch(`${receiver.baseUrl}/__hold`, { method: 'POST' });
  const drainRun = await settle(run, 'cbdr', n, `[${kind}] callbacks drain (building backlog)`);
  const released = (await (await fetch(`${receiver.baseUrl}/__release`, { method: 'POST' })).json()) as {
    at: number;
  };
  const drainReceipts = await awaitReceipts(receiver, 'cbdr', drainRun.ok);
  const drainPhase = await phaseResult(run.gw, 'cbdr', drainReceipts, drainRun.rps, released.at);
  const backlog = [...drainReceipts.values()].filter((t) => t >= released.at).length;
  const drain = { ...drainPhase, backlog };
  run.progress.line(
    `[${kind}] callbacks drain: backlog of ${backlog} worked off at ${drain.deliveriesPerS.toFixed(0)} deliveries/s`,
  );
  return drain;
}

/** Final statuses at `rate` a second: latency when the dispatcher is not backlogged. */
async function pacedPhase(run: Run, rate: number): Promise<PhaseResult & { ratePerS: number }> {
  const { opts, kind } = run;
  // Few connections, so the rate arrives evenly rather than as one burst per connection cycle.
  const pacedRun = await settle(
    run,
    'cbpa',
    rate * opts.durationS,
    `[${kind}] callbacks paced at ${rate}/s`,
    {
      durationS: opts.durationS,
      overallRate: rate,
      connections: Math.min(opts.connections, 4),
    },
  );
  const paced = {
    ...(await phaseResult(
      run.gw,
      'cbpa',
      await awaitReceipts(run.receiver, 'cbpa', pacedRun.ok),
      pacedRun.rps,
    )),
    ratePerS: rate,
  };
  run.progress.line(`[${kind}] callbacks paced at ${rate}/s: p50 ${paced.p50Ms} ms, p99 ${paced.p99Ms} ms`);
  return paced;
}

/** The seed's token, and the Standard Webhooks signature as the published library checks it. */
function signaturesValid(secret: string, samples: Receipts['samples']): boolean {
  const webhook = new Webhook(secret);
  return samples.every((s) => {
    try {
      webhook.verify(s.body, s.headers);
    } catch {
      return false;
    }
    return signBody(secret, s.body) === s.token;
  });
}

export async function measureCallbacks(
  gw: GatewayHandle,
  opts: BenchOptions,
  progress: Progress,
  kind: string,
): Promise<CallbackResult> {
  const receiver = await startReceiver();
  const run: Run = { gw, receiver, opts, progress, kind };
  try {
    const absent = await probeDispatcher(run);
    if (absent) return absent;

    const warmN = 2000;
    const burstN = 3000 * opts.durationS;
    const drainN = 5000;
    await fill(run, 'cbwu', warmN);
    await fill(run, 'cbbu', burstN);
    await fill(run, 'cbdr', drainN);
    await fill(run, 'cbpa', 2000 * opts.durationS);

    await settle(run, 'cbwu', warmN, `[${kind}] callbacks warm-up`);
    await awaitReceipts(receiver, 'cbwu', warmN);
    const burst = await burstPhase(run, burstN);
    const drain = await drainPhase(run, drainN);
    const rate = Math.max(
      50,
      Math.floor(Math.min(burst.finalsPerS, drain.deliveriesPerS || burst.finalsPerS) / 2 / 50) * 50,
    );
    const paced = await pacedPhase(run, rate);

    const { duplicates, samples } = await receiptsOf(receiver);
    const valid = signaturesValid(gw.webhookSecret, samples);
    const capacity = Math.max(burst.deliveriesPerS, drain.deliveriesPerS);
    return {
      available: true,
      burst,
      drain,
      paced,
      duplicates,
      signaturesChecked: samples.length,
      signaturesValid: valid,
      target: TARGET,
      met: capacity >= 2000 && paced.p99Ms <= 250 && valid,
    };
  } finally {
    await receiver.stop();
  }
}
