/** Helpers for the live payout suites: create a payout, the fake's calls for it, its ledger lines. */
import assert from 'node:assert/strict';
import type { CashfreeRequest, FakeCashfree } from './fake-cashfree.ts';
import { RECEIVER, type LiveGateway } from './live.ts';

let n = 0;

/** Creates a live payout of `amount` rupees; answers its payment_id. */
export async function payout(live: LiveGateway, amount: number): Promise<string> {
  const res = await live.post('/payments/payout', {
    money: { amount },
    merchant_order_no: `lp-${process.pid}-${++n}`,
    receiver: RECEIVER,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id as string;
}

/** Every POST /transfers the fake received for a payout (whatever it answered). */
export function posts(fake: FakeCashfree, id: string): CashfreeRequest[] {
  return fake.requests.filter((r) => r.method === 'POST' && r.body?.transfer_id === id);
}

/** Every read of a payout's transfer the fake received. */
export function reads(fake: FakeCashfree, id: string): CashfreeRequest[] {
  return fake.requests.filter((r) => r.method === 'GET' && r.query.get('transfer_id') === id);
}

/** The sums of a payout's ledger entries on the accounts outside the wallet other than its hold's. */
export async function ledgerOf(live: LiveGateway, paymentId: string): Promise<Record<string, number>> {
  const rows = await live.gw.database.db
    .selectFrom('ledger_entries')
    .select(['account', 'amount'])
    .where('payment_id', '=', paymentId)
    .where('account', 'in', ['external:bank_payouts', 'external:receivable'])
    .execute();
  const sums: Record<string, number> = {};
  for (const r of rows) sums[r.account] = (sums[r.account] ?? 0) + Number(r.amount);
  return sums;
}
