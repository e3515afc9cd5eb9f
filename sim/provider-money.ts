/**
 * The providers' money against Paygate's books, once Paygate has had the chance to learn everything
 * (after a fault-free reconciliation, and at the end): every payment Setu collected is settled into
 * a pay-in or held on an exception; what Setu paid out for each refund, and what Cashfree paid (and
 * did not get back) for each payout, is what the ledger's external account holds for it (issue 56:
 * every provider movement is matched to a transaction or journaled on an exception, amounts included).
 */
import { istDate } from '../src/ist.ts';
import { EXTERNAL } from '../src/wallet/ledger.ts';
import { START_AT, type World } from './world.ts';

const DAY_MS = 24 * 3_600_000;

/** Reconciles every day of the history, both channels, as the nightly runs would. */
export async function reconcileAll(w: World): Promise<void> {
  const dates = new Set<string>();
  for (let t = START_AT; t < w.now() + DAY_MS; t += DAY_MS) dates.add(istDate(Math.min(t, w.now())));
  for (const date of dates)
    for (const channel of ['setu', 'cashfree'] as const) await w.reconcile.run(date, channel, 'cli');
}

/** What the providers paid out, net, by Paygate's payment_id: Setu's refunds and Cashfree's transfers. */
function providerPaid(w: World): Map<string, number> {
  const paid = new Map<string, number>();
  const add = (id: string, amount: number) => paid.set(id, (paid.get(id) ?? 0) + amount);
  for (const r of w.setu.refundList) add(r.referenceId, r.status === 'success' ? r.amount : 0);
  for (const t of w.cashfree.transfers.values())
    add(t.paymentId, t.paid && t.status !== 'REVERSED' ? t.paise : 0);
  return paid;
}

/**
 * `reconciled`: just after reconciliation, which cannot read a refund whose send's outcome Paygate
 * does not know (Setu has no id for it yet): the worker follows those, so they wait for the end.
 */
export async function providerMoney(w: World, reconciled = false): Promise<string | null> {
  const db = w.database.db;
  const [entries, live, exceptions] = await Promise.all([
    db
      .selectFrom('ledger_entries')
      .select(['payment_id', (e) => e.fn.sum<number>('amount').as('total')])
      .where('account', 'in', [EXTERNAL.refunds, EXTERNAL.payouts])
      .where('payment_id', 'is not', null)
      .groupBy('payment_id')
      .execute(),
    db
      .selectFrom('transactions')
      .select(['payment_id', 'kind', 'status', 'channel_txn_id', 'channel_payment_id'])
      .where('channel', '<>', 'sandbox')
      .execute(),
    db.selectFrom('channel_exceptions').select('reference').where('holds', 'is not', null).execute(),
  ]);
  const booked = new Map(entries.map((e) => [e.payment_id!, Number(e.total)]));
  const paid = providerPaid(w);
  for (const t of live) {
    if (t.kind === 'payin' || (reconciled && t.kind === 'refund' && t.channel_txn_id === '')) continue;
    const out = paid.get(t.payment_id) ?? 0;
    const books = booked.get(t.payment_id) ?? 0;
    if (out !== books)
      return `${t.kind} ${t.payment_id} (${t.status}): the provider paid out ${out}, the ledger books ${books}`;
  }
  const held = new Set(exceptions.map((e) => e.reference));
  const settled = new Set(live.flatMap((t) => (t.status === 'SUCCESS' ? [t.channel_payment_id] : [])));
  for (const qr of w.setu.qrs.values())
    for (const p of qr.payments)
      if (!settled.has(p.id) && !held.has(p.id))
        return `setu payment ${p.id} of ${p.amount} is neither a pay-in's nor on an exception`;
  return null;
}
