/**
 * A gateway with both live channels configured against the fake providers, for the live-channel
 * tests: the fakes, a live merchant with a funded wallet, a callback receiver, and waits.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import type { CreatedMerchant } from '../../src/merchants/merchants.service.ts';
import { FakeCashfree } from './fake-cashfree.ts';
import { FakeSetu } from './fake-setu.ts';
import { startGateway, type Gateway, type Reply } from './harness.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { CASHFREE_SPEC, SETU_SPEC, useSpecProxy, type SpecProxy } from './spec-proxy.ts';

export interface LiveGateway {
  gw: Gateway;
  setu: FakeSetu;
  cashfree: FakeCashfree;
  receiver: Receiver;
  merchant: CreatedMerchant;
  /** POST with the live merchant's key. */
  post(path: string, body: unknown): Promise<Reply>;
  status(kind: 'payin' | 'payout', paymentId: string): Promise<any>;
  /** Waits until the transaction's status is `status`. */
  waitStatus(kind: 'payin' | 'payout', paymentId: string, status: string, timeoutMs?: number): Promise<any>;
  balance(): Promise<{ available: number; held: number }>;
  exceptions(paymentId?: string): Promise<{ kind: string; payment_id: string | null; reference: string }[]>;
  ledgerOk(): Promise<void>;
}

export const LIVE_VPA = 'shop.one@pineaxis';

export interface LiveOptions {
  /** Base URLs to reach the providers through (spec proxies); the fakes' own URLs otherwise. */
  proxies?: { setu?: string; cashfree?: string };
  /** Fakes to use instead of new ones (the proxies' upstreams). */
  fakes?: { setu: FakeSetu; cashfree: FakeCashfree };
}

export async function startLive(
  kind: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  opts: LiveOptions = {},
): Promise<LiveGateway> {
  const proxies = opts.proxies ?? {};
  const setu = opts.fakes?.setu ?? (await new FakeSetu().start());
  const cashfree = opts.fakes?.cashfree ?? (await new FakeCashfree().start());
  const gw = await startGateway(kind, {
    listen: true,
    worker: true,
    env: {
      ALLOW_PRIVATE_CALLBACK_URLS: 'true',
      CHANNEL_TIMEOUT_MS: '1000',
      CHANNEL_POLL_MS: '60000',
      WORKER_POLL_MS: '100',
      CALLBACK_RETRY_INTERVAL_MS: '100',
      ...setu.env(proxies.setu),
      ...cashfree.env(proxies.cashfree),
      ...env,
    },
  });
  setu.notifyUrl = `${gw.baseUrl}/channels/setu/notifications`;
  cashfree.notifyUrl = `${gw.baseUrl}/channels/cashfree/notifications`;
  const receiver = await startReceiver();
  let merchant: Awaited<ReturnType<typeof gw.paygate.services.merchants.create>>;
  try {
    // A fake shared by several gateways registered the UPI id for the first: the others name its id.
    const held = [...setu.vpas.values()].find((v) => v.vpa === LIVE_VPA);
    merchant = await gw.paygate.services.merchants.create({
      name: 'Live Shop',
      live: true,
      vpa: LIVE_VPA,
      setuVpaId: held?.id ?? null,
      callbackUrl: receiver.url('/live'),
    });
    await gw.paygate.services.wallets.topUp(merchant.merchant_id, 'INR', 10_000_000_00);
  } catch (err) {
    // Nothing started here may outlive the failure: a gateway's worker left running keeps the test process alive.
    await gw.close();
    await receiver.close();
    if (!opts.fakes) await Promise.all([setu.stop(), cashfree.stop()]);
    throw err;
  }
  const post = (path: string, body: unknown) => gw.post(path, body, { key: merchant.api_key });
  const status = async (k: 'payin' | 'payout', paymentId: string) =>
    (await post(`/payments/${k}_status`, { payment_id: paymentId })).body;
  return {
    gw,
    setu,
    cashfree,
    receiver,
    merchant,
    post,
    status,
    async waitStatus(k, paymentId, want, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await status(k, paymentId);
        if (s?.status === want) return s;
        if (Date.now() > deadline) assert.fail(`${k} ${paymentId} is ${s?.status}, not ${want}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async balance() {
      const b = await gw.paygate.services.wallets.balance(merchant.merchant_id, 'INR');
      return { available: b.available, held: b.held };
    },
    async exceptions(paymentId) {
      let q = gw.database.db.selectFrom('channel_exceptions').select(['kind', 'payment_id', 'reference']);
      if (paymentId) q = q.where('payment_id', '=', paymentId);
      return q.orderBy('id').execute();
    },
    async ledgerOk() {
      const report = await gw.paygate.services.wallets.verify();
      assert.deepEqual(report.problems, []);
      assert.ok(report.ok);
    },
  };
}

/** Registers before/after hooks for a live gateway in the enclosing describe block. */
export function useLive(
  kind: 'sqlite' | 'postgres',
  env: Record<string, string> = {},
  opts?: () => LiveOptions,
): () => LiveGateway {
  let live: LiveGateway | undefined;
  let shared = false;
  before(async () => {
    const o = opts?.() ?? {};
    shared = o.fakes !== undefined;
    live = await startLive(kind, env, o);
  });
  after(async () => {
    await live?.gw.close();
    await live?.receiver.close();
    if (!shared) {
      await live?.setu.stop();
      await live?.cashfree.stop();
    }
  });
  return () => {
    if (!live) throw new Error('live gateway not started');
    return live;
  };
}

/** A live gateway whose calls to the fakes go through the providers' documents (the spec proxies). */
export interface LiveBehindDocuments extends LiveGateway {
  proxies: { setu?: SpecProxy; cashfree?: SpecProxy };
}

/**
 * The set-up of the live files that put the providers' documents between Paygate and the fakes.
 * Call it at the file's top level with the documents the file checks: it starts one spec proxy per
 * document for the whole file (`useSpecProxy`). The function it answers registers, in a block (one
 * per database), fakes of the block's own routed through those proxies, a live gateway over them
 * (`useLive`, with `env`) and the hooks that stop them.
 */
export function useLiveBehindDocuments(
  documents: { setu?: boolean; cashfree?: boolean } = { setu: true, cashfree: true },
): (kind: 'sqlite' | 'postgres', env?: Record<string, string>) => () => LiveBehindDocuments {
  const setuProxy = documents.setu ? useSpecProxy(SETU_SPEC) : null;
  const cashfreeProxy = documents.cashfree ? useSpecProxy(CASHFREE_SPEC) : null;
  return (kind, env = {}) => {
    let fakes: { setu: FakeSetu; cashfree: FakeCashfree } | undefined;
    const proxies: LiveBehindDocuments['proxies'] = {};
    before(async () => {
      fakes = { setu: await new FakeSetu().start(), cashfree: await new FakeCashfree().start() };
      proxies.setu = await setuProxy?.route(fakes.setu.url);
      proxies.cashfree = await cashfreeProxy?.route(fakes.cashfree.url);
    });
    const live = useLive(kind, env, () => ({
      fakes: fakes!,
      proxies: { setu: proxies.setu?.url, cashfree: proxies.cashfree?.url },
    }));
    after(async () => {
      await fakes?.setu.stop();
      await fakes?.cashfree.stop();
    });
    return () => ({ ...live(), proxies });
  };
}

/** Waits until `check` holds. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The value of the sample named `line` (name and labels) in Prometheus text, or null when absent. */
export function metricValue(text: string, line: string): number | null {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? null : Number(found.slice(line.length + 1));
}

export const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
