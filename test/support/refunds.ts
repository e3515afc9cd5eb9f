/** Helpers for refund tests: a sandbox merchant with a SUCCESS pay-in, and calls bound to its key. */
import assert from 'node:assert/strict';
import type { Gateway } from './harness.ts';

let seq = 0;
export const refundNo = () => `rf-${Date.now().toString(36)}-${++seq}`;

export interface PaidMerchant {
  merchant_id: string;
  api_key: string;
  webhook_secret: string;
  post(path: string, body: unknown): ReturnType<Gateway['post']>;
  balance(): Promise<{ currency: string; available: number; held: number }>;
  /** A pay-in of `amount` rupees, made SUCCESS through the sandbox (its amount becomes available). */
  paidIn(amount: number, extra?: Record<string, unknown>): Promise<string>;
  /** A pay-in of `amount` rupees left PENDING. */
  pendingPayin(amount: number): Promise<string>;
}

/** A fresh sandbox merchant; `topUpPaise` credited besides what its pay-ins bring. */
export async function paidMerchant(
  g: Gateway,
  topUpPaise = 0,
  opts: { callbackUrl?: string } = {},
): Promise<PaidMerchant> {
  const m = await g.newMerchant(opts);
  if (topUpPaise > 0) await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', topUpPaise);
  const post = (path: string, body: unknown) => g.post(path, body, { key: m.api_key });
  const pendingPayin = async (amount: number, extra: Record<string, unknown> = {}) => {
    const res = await post('/payments/onsite/payin', {
      money: { amount, currency: 'INR' },
      merchant_order_no: `po-${refundNo()}`,
      ...extra,
    });
    assert.equal(res.status, 200, res.text);
    return res.body.payment_id as string;
  };
  return {
    merchant_id: m.merchant_id,
    api_key: m.api_key,
    webhook_secret: m.webhook_secret,
    post,
    async balance() {
      const res = await post('/wallet/balance', {});
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
    pendingPayin,
    async paidIn(amount, extra = {}) {
      const id = await pendingPayin(amount, extra);
      const done = await post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' });
      assert.equal(done.status, 200, done.text);
      return id;
    },
  };
}

export const refund = (paymentId: string, amount: unknown, extra: Record<string, unknown> = {}) => ({
  payment_id: paymentId,
  money: { amount, currency: 'INR' },
  merchant_refund_no: refundNo(),
  ...extra,
});

/** The refunds recorded for a merchant. */
export async function countRefunds(g: Gateway, merchantId: string): Promise<number> {
  const row = await g.database.db
    .selectFrom('transactions')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('merchant_id', '=', merchantId)
    .where('kind', '=', 'refund')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The ledger entries of a merchant. */
export async function countEntries(g: Gateway, merchantId: string): Promise<number> {
  const row = await g.database.db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
