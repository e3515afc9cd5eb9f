/**
 * The live scenario: a gateway with both live channels configured against the fake providers
 * (the tests' fakes, run in this process). Two figures:
 * - payouts per second from creation to recorded SUCCESS, with the fake Cashfree answering each
 *   call after 50 ms and sending its webhook at once (the worker must submit concurrently);
 * - live onsite creation (a Setu QR per pay-in) against sandbox onsite creation, on the same
 *   gateway in the same run, as a ratio and CPU per request.
 */
import { Pool } from 'undici';
import { FakeCashfree } from '../test/support/fake-cashfree.ts';
import { FakeSetu } from '../test/support/fake-setu.ts';
import { cpuSeconds, type Progress } from './load.ts';
import type { BenchOptions } from './options.ts';
import { paygateCli, startGateway, type Server } from './processes.ts';
import { maxInAnySecond } from './reconcile-watch.ts';
import { freshPosts, nextOrderNo, payinBody } from './requests.ts';
import { createFundedMerchant, GATEWAY_ENV, measurePair, profileFlags, type ScenarioRow } from './gateway.ts';
import { connect, freshDatabase } from './store.ts';

export interface LivePayouts {
  payouts: number;
  /** Seconds from the first creation request to the last creation answer. */
  createS: number;
  /** Seconds from the first creation request to the last SUCCESS recorded. */
  settleS: number;
  /** payouts / settleS */
  perS: number;
  /** Creation to recorded SUCCESS (finalized_at − created_at), ms. */
  p50Ms: number;
  p99Ms: number;
  /** POST /transfers the fake received per payout (1 is right). */
  transfersPerPayout: number;
  fakeLatencyMs: number;
  /** CPU time of the gateway process per payout, creation to SUCCESS (µs). */
  gatewayCpuUsPerPayout: number | null;
  /** CPU time of this process (the load and both fakes) per payout (µs). */
  benchCpuUsPerPayout: number;
}

/** Payouts sent at the default CASHFREE_MAX_RPS: how close the calls per second come to it. */
export interface PacedPayouts {
  payouts: number;
  limitPerS: number;
  /**
   * Calls the fake received per second once the payouts were all sent and the first second was
   * over, to the last. The throttle's window lets the first second's `limit` calls go at once, so a
   * rate from the very first call overstates a short run by about one second's calls over its length.
   */
  callsPerS: number;
  /** (callsPerS − limit) / limit, in %. */
  offByPct: number;
  /** The most calls the fake received in any one second of that part (a sliding window over their arrivals). */
  maxInAnySecond: number;
}

export interface LiveResult {
  onsite: ScenarioRow;
  payouts: LivePayouts;
  paced: PacedPayouts;
}

const PAYOUTS = 5000;
/** CASHFREE_MAX_RPS's default, and how many payouts the paced run sends at it (about 6 s). */
const DEFAULT_MAX_RPS = 100;
const PACED_PAYOUTS = 600;
const IN_FLIGHT = 64;
const FAKE_LATENCY_MS = 50;

export async function measureLive(opts: BenchOptions, progress: Progress): Promise<LiveResult> {
  const setu = await new FakeSetu().start();
  const cashfree = await new FakeCashfree().start();
  cashfree.latencyMs = FAKE_LATENCY_MS;
  const db = await freshDatabase(opts.db, 'live');
  const env = {
    ...GATEWAY_ENV,
    ...setu.env(),
    ...cashfree.env(),
    LIVE_MAX_PAYOUT: '500000.00',
    WORKER_POLL_MS: '100',
  };
  // The throughput runs: the per-process limits raised past the load, so the gateway's own cost shows.
  const unthrottled = { ...env, CASHFREE_MAX_RPS: '100000', SETU_MAX_RPS: '100000' };
  const sandbox = createFundedMerchant(db.url, 'Bench Sandbox');
  const live = paygateCli(
    ['merchant', 'create', '--name', 'Bench Live', '--live', '--vpa', 'bench.live@pineaxis'],
    {
      DATABASE_URL: db.url,
    },
  );
  paygateCli(['wallet', 'credit', '--merchant', String(live.merchant_id), '--amount', '1000000000.00'], {
    DATABASE_URL: db.url,
  });
  const liveKey = String(live.api_key);
  const gateway = await startGateway(db.url, unthrottled, profileFlags(opts, 'live'));
  setu.notifyUrl = `${gateway.baseUrl}/channels/setu/notifications`;
  cashfree.notifyUrl = `${gateway.baseUrl}/channels/cashfree/notifications`;
  try {
    progress.line(`[${db.kind}] live: onsite creation through the Setu fake against sandbox onsite`);
    const onsite = await measurePair(
      {
        name: 'live',
        title: 'live onsite create (Setu QR) vs sandbox onsite',
        target: 0,
        gateway: () => freshPosts('/payments/onsite/payin', [liveKey], () => payinBody('lv')),
        baseline: () => freshPosts('/payments/onsite/payin', [sandbox.apiKey], () => payinBody('sb')),
      },
      gateway,
      gateway,
      opts,
      progress,
      db.kind,
    );
    progress.line(
      `[${db.kind}] live: ${PAYOUTS} payouts through the Cashfree fake (${FAKE_LATENCY_MS} ms per call)`,
    );
    const payouts = await payoutRun(gateway, db.url, liveKey, String(live.merchant_id), cashfree);
    progress.line(
      `[${db.kind}] live payouts: ${payouts.perS.toFixed(0)}/s creation to SUCCESS, p50 ${payouts.p50Ms} ms, ${payouts.transfersPerPayout} transfer(s) per payout`,
    );
    await gateway.stop();
    progress.line(
      `[${db.kind}] live: ${PACED_PAYOUTS} payouts at the default CASHFREE_MAX_RPS (${DEFAULT_MAX_RPS})`,
    );
    const pacedGateway = await startGateway(db.url, env, []);
    cashfree.notifyUrl = `${pacedGateway.baseUrl}/channels/cashfree/notifications`;
    let paced: PacedPayouts;
    try {
      paced = await pacedRun(pacedGateway, liveKey, cashfree);
    } finally {
      await pacedGateway.stop();
    }
    progress.line(
      `[${db.kind}] live paced: ${paced.callsPerS.toFixed(1)} calls/s to Cashfree at a limit of ${DEFAULT_MAX_RPS} (${paced.offByPct.toFixed(1)} %)`,
    );
    return { onsite: { ...onsite, target: '', met: null }, payouts, paced };
  } finally {
    await gateway.stop();
    await setu.stop();
    await cashfree.stop();
    await db.drop();
  }
}

/** Creates payouts as fast as the gateway takes them, and reads the fake's call rate once they are all sent. */
async function pacedRun(gateway: Server, key: string, cashfree: FakeCashfree): Promise<PacedPayouts> {
  const from = cashfree.requests.length;
  await createPayouts(gateway, key, PACED_PAYOUTS, 'pp');
  // The fake answers from this process: while it was also sending the payouts, it noted arrivals
  // late and in bunches. Only what arrived after that is measured.
  const loadSent = Date.now();
  const deadline = Date.now() + 120_000;
  const sent = () => cashfree.requests.slice(from).filter((r) => r.method === 'POST').length;
  while (sent() < PACED_PAYOUTS) {
    if (Date.now() > deadline) throw new Error('the paced payouts were not all sent');
    await new Promise((r) => setTimeout(r, 50));
  }
  const calls = cashfree.requests
    .slice(from)
    .map((r) => r.at)
    .sort((a, b) => a - b);
  const steady = calls.filter((at) => at >= Math.max(calls[0]! + 1000, loadSent));
  if (steady.length < 2 * DEFAULT_MAX_RPS) throw new Error('the paced payouts were sent too fast to measure');
  const callsPerS = (steady.length - 1) / ((steady.at(-1)! - steady[0]!) / 1000);
  return {
    payouts: PACED_PAYOUTS,
    limitPerS: DEFAULT_MAX_RPS,
    callsPerS,
    offByPct: ((callsPerS - DEFAULT_MAX_RPS) / DEFAULT_MAX_RPS) * 100,
    maxInAnySecond: maxInAnySecond(steady),
  };
}

async function createPayouts(gateway: Server, key: string, count: number, prefix: string): Promise<void> {
  const pool = new Pool(gateway.baseUrl, { connections: IN_FLIGHT });
  let next = 0;
  const post = async () => {
    while (next < count) {
      next++;
      const res = await pool.request({
        method: 'POST',
        path: '/payments/payout',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          money: { amount: 1 },
          merchant_order_no: nextOrderNo(prefix),
          receiver: { name: 'Bench Receiver', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
        }),
      });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`payout creation answered ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, post));
  await pool.close();
}

async function payoutRun(
  gateway: Server,
  databaseUrl: string,
  key: string,
  merchantId: string,
  cashfree: FakeCashfree,
): Promise<LivePayouts> {
  const gatewayCpu = cpuSeconds(gateway.pid);
  const benchCpu = process.cpuUsage();
  const started = Date.now();
  await createPayouts(gateway, key, PAYOUTS, 'lp');
  const created = Date.now();
  const conn = await connect(databaseUrl);
  try {
    const p = conn.kind === 'sqlite' ? '?' : '$1';
    const deadline = Date.now() + 300_000;
    for (;;) {
      const [row] = await conn.rows<{ n: number | string }>(
        `select count(*) as n from transactions where merchant_id = ${p} and kind = 'payout' and status = 'SUCCESS'`,
        [merchantId],
      );
      if (Number(row!.n) >= PAYOUTS) break;
      if (Date.now() > deadline) throw new Error(`only ${row!.n} of ${PAYOUTS} payouts settled`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const settled = Date.now();
    const gatewayCpuEnd = cpuSeconds(gateway.pid);
    const benchCpuUsed = process.cpuUsage(benchCpu);
    const latencies = (
      await conn.rows<{ ms: number | string }>(
        `select finalized_at - created_at as ms from transactions where merchant_id = ${p} and kind = 'payout' order by 1`,
        [merchantId],
      )
    ).map((r) => Number(r.ms));
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
    const posts = cashfree.count('transfer_create');
    return {
      payouts: PAYOUTS,
      createS: (created - started) / 1000,
      settleS: (settled - started) / 1000,
      perS: PAYOUTS / ((settled - started) / 1000),
      p50Ms: at(0.5),
      p99Ms: at(0.99),
      transfersPerPayout: posts / PAYOUTS,
      fakeLatencyMs: FAKE_LATENCY_MS,
      gatewayCpuUsPerPayout:
        gatewayCpu === null || gatewayCpuEnd === null ? null : ((gatewayCpuEnd - gatewayCpu) * 1e6) / PAYOUTS,
      benchCpuUsPerPayout: (benchCpuUsed.user + benchCpuUsed.system) / PAYOUTS,
    };
  } finally {
    await conn.close();
  }
}
