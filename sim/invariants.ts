/**
 * The invariants checked after every command and at the end of a history (issue 56): the ledger
 * balances (`ledger verify`), no balance is negative, §13's conservation holds per merchant, a
 * final status never changes (a reversal aside, §4), each provider payment is applied at most once,
 * at most one transfer or refund is paid per payout or refund, each final status has exactly one
 * callback event, a notification taken again is a duplicate, a pay-in settles only at the amount
 * its payment paid, and, at the end, every payment Paygate was told of is matched or on an exception.
 * Each answers the broken invariant's words, or null.
 */
import { feeFor } from '../src/money.ts';
import { short, type Made } from './execute.ts';
import type { World } from './world.ts';

type Row = {
  payment_id: string;
  merchant_id: string;
  kind: string;
  status: string;
  amount: number;
  reversed_at: number | null;
  channel_payment_id: string | null;
  refund_of: string | null;
};

/** What the invariants read of the database, all at once (in parallel on PostgreSQL). */
async function read(w: World) {
  const db = w.database.db;
  const [rows, [last], wallets, exceptions, deliveries] = await Promise.all([
    db
      .selectFrom('transactions')
      .select([
        'payment_id',
        'merchant_id',
        'kind',
        'status',
        'amount',
        'reversed_at',
        'channel_payment_id',
        'refund_of',
      ])
      .orderBy('created_at')
      .orderBy('payment_id')
      .execute() as Promise<Row[]>,
    db
      .selectFrom('ledger_entries')
      .select((e) => e.fn.max('id').as('id'))
      .execute(),
    db.selectFrom('wallets').select(['merchant_id', 'available', 'held']).orderBy('merchant_id').execute(),
    db
      .selectFrom('channel_exceptions')
      .select(['id', 'kind', 'outstanding', 'resolved_at', 'holds', 'reference'])
      .orderBy('id')
      .execute(),
    db.selectFrom('callback_deliveries').select(['id', 'payment_id', 'body']).execute(),
  ]);
  return { rows, lastEntry: last?.id ?? null, wallets, exceptions, deliveries };
}

type Seen = Awaited<ReturnType<typeof read>>;

export class Invariants {
  private readonly finals = new Map<string, string>();
  /** What `ledger verify` last passed on. */
  private verified = '';
  /** The status each callback delivery's body carries, by delivery id. */
  private readonly statusOf = new Map<string, string>();

  /** The transactions' statuses as the last check read them, as the history prints their changes. */
  statuses = new Map<string, string>();

  async check(w: World, made: Made, end: boolean): Promise<string | null> {
    const seen = await read(w);
    this.statuses = new Map(
      seen.rows.map((r) => [`${r.kind} ${short(r.payment_id)}`, `${r.status}${r.reversed_at ? '+R' : ''}`]),
    );
    const broken = await this.ledger(w, seen);
    if (broken) return broken;
    // Refunds of money that no pay-in kept (of no pay-in) come out of suspense, not out of a merchant's balance.
    const merchants = seen.rows.filter((r) => r.kind !== 'refund' || r.refund_of);
    return (
      this.finalsKept(seen.rows) ??
      this.balances(w, seen, merchants) ??
      this.providerOnce(w, seen.rows) ??
      made.reapplied ??
      this.appliedOnce(w, made, seen, end) ??
      this.callbacks(seen.deliveries, merchants, end)
    );
  }

  /**
   * `ledger verify`, whenever anything it reads may have changed since it last passed: the journals,
   * the wallets, the exceptions, which transactions are final or reversed (unchanged, it would say the same).
   */
  private async ledger(w: World, seen: Seen): Promise<string | null> {
    const fingerprint = JSON.stringify([
      seen.lastEntry,
      seen.wallets,
      seen.exceptions,
      seen.rows.map(
        (r) => (r.status === 'SUCCESS' || r.status === 'FAILED' ? r.status : '') + (r.reversed_at ?? ''),
      ),
    ]);
    if (fingerprint === this.verified) return null;
    const report = await w.services.wallets.verify();
    if (!report.ok) return `ledger verify: ${report.problems.join('; ')}`;
    this.verified = fingerprint;
    return null;
  }

  /** A final status never changes. */
  private finalsKept(rows: Row[]): string | null {
    for (const r of rows) {
      const before = this.finals.get(r.payment_id);
      if (before && before !== r.status)
        return `final status changed: ${r.kind} ${r.payment_id} ${before} → ${r.status}`;
      if (r.status === 'SUCCESS' || r.status === 'FAILED') this.finals.set(r.payment_id, r.status);
    }
    return null;
  }

  /**
   * No balance negative; available + held is what §13's conservation says, for every merchant:
   * credited − paid out + reversed + open receivable. A payout paid after FAILED counts as paid out
   * and as receivable until an operator's `debit` takes it from available (or a write-off from
   * Paygate); a reversal of it gives back what was debited.
   */
  private balances(w: World, seen: Seen, rows: Row[]): string | null {
    const returned = returnedByReversal(w, seen.exceptions);
    const debited = debitedBy(w);
    for (const wallet of seen.wallets) {
      if (wallet.available < 0 || wallet.held < 0)
        return `negative balance: ${wallet.merchant_id} available ${wallet.available} held ${wallet.held}`;
      const m = w.merchants.find((x) => x.id === wallet.merchant_id);
      if (!m) continue;
      let expected = m.topUps + w.credited.get(m.id)! - (debited.get(m.id) ?? 0) + (returned.get(m.id) ?? 0);
      for (const r of rows) {
        if (r.merchant_id !== m.id || r.status !== 'SUCCESS') continue;
        if (r.kind === 'payin') expected += r.amount - feeFor(r.amount, w.config.payinFeeBps);
        else expected -= r.amount;
        if (r.kind === 'payout' && r.reversed_at !== null) expected += r.amount;
      }
      const actual = wallet.available + wallet.held;
      if (actual !== expected)
        return `conservation: merchant ${m.live ? 'live' : 'sandbox'} has ${actual}, its records say ${expected}`;
    }
    return null;
  }

  /**
   * At most one transfer paid per payout, one refund paid per refund, and no more refunded than a
   * payment (a refund Setu paid after Paygate recorded it FAILED aside).
   */
  private providerOnce(w: World, rows: Row[]): string | null {
    const failedRefunds = new Set(
      rows.filter((r) => r.kind === 'refund' && r.status === 'FAILED').map((r) => r.payment_id),
    );
    const paid = new Map<string, number>();
    for (const t of w.cashfree.transfers.values())
      if (t.paid) paid.set(t.paymentId, (paid.get(t.paymentId) ?? 0) + 1);
    for (const [id, n] of paid) if (n > 1) return `payout ${id} paid ${n} times by the provider`;
    const refunded = new Map<string, number>();
    const byPayment = new Map<string, number>();
    for (const r of w.setu.refundList) {
      if (r.status !== 'success') continue;
      refunded.set(r.referenceId, (refunded.get(r.referenceId) ?? 0) + 1);
      // A refund Setu paid after reporting it failed, once Paygate recorded it FAILED, is Setu's doing:
      // Paygate let the money be refunded again, and owes it back from the merchant (checked by the
      // providers' money). One Paygate never saw FAILED counts.
      if (!(w.setu.paidAfterFailed.has(r.id) && failedRefunds.has(r.referenceId)))
        byPayment.set(r.paymentId, (byPayment.get(r.paymentId) ?? 0) + r.amount);
    }
    for (const [id, n] of refunded) if (n > 1) return `refund ${id} paid ${n} times by the provider`;
    for (const qr of w.setu.qrs.values())
      for (const p of qr.payments)
        if ((byPayment.get(p.id) ?? 0) > p.amount)
          return `payment ${p.id} of ${p.amount} refunded ${byPayment.get(p.id)} in all`;
    return null;
  }

  /**
   * Each provider payment is applied at most once: one SUCCESS pay-in, or one exception that holds
   * its money. At the end, every payment whose notification Paygate accepted is one of the two.
   */
  private appliedOnce(w: World, made: Made, seen: Seen, end: boolean): string | null {
    const uses = new Map<string, number>();
    const settled = new Map<string, number>();
    for (const r of seen.rows)
      if (r.kind === 'payin' && r.status === 'SUCCESS' && r.channel_payment_id) {
        uses.set(r.channel_payment_id, (uses.get(r.channel_payment_id) ?? 0) + 1);
        settled.set(r.channel_payment_id, r.amount);
      }
    for (const e of seen.exceptions)
      if (e.holds !== null) uses.set(e.reference, (uses.get(e.reference) ?? 0) + 1);
    for (const qr of w.setu.qrs.values())
      for (const p of qr.payments) {
        const credited = settled.get(p.id);
        if (credited !== undefined && credited !== p.amount)
          return `setu payment ${p.id} of ${p.amount} settled a pay-in of ${credited}`;
        const n = uses.get(p.id) ?? 0;
        if (n > 1) return `setu payment ${p.id} applied ${n} times`;
        if (end && n === 0 && made.notified.has(p.id))
          return `setu payment ${p.id} notified but not accounted for`;
      }
    return null;
  }

  /** One callback event per final status (and one per reversal); at the end, every final one has its event. */
  private callbacks(deliveries: Seen['deliveries'], rows: Row[], end: boolean): string | null {
    const events = new Map<string, number>();
    for (const d of deliveries) {
      let status = this.statusOf.get(d.id);
      if (status === undefined) {
        status = String((JSON.parse(d.body) as Record<string, unknown>).status);
        this.statusOf.set(d.id, status);
      }
      const key = `${d.payment_id} ${status}`;
      events.set(key, (events.get(key) ?? 0) + 1);
    }
    for (const [key, n] of events) if (n > 1) return `${n} callback events for ${key}`;
    if (!end) return null;
    for (const r of rows) {
      if (r.status !== 'SUCCESS' && r.status !== 'FAILED') continue;
      if (!events.has(`${r.payment_id} ${r.status}`))
        return `no callback event for ${r.kind} ${r.payment_id} ${r.status}`;
      if (r.reversed_at !== null && !events.has(`${r.payment_id} REVERSED`))
        return `no REVERSED callback event for ${r.payment_id}`;
    }
    return null;
  }
}

/** By merchant: what operators' `debit`s took from it. */
function debitedBy(w: World): Map<string, number> {
  const debited = new Map<string, number>();
  for (const d of w.debitedOn.values())
    debited.set(d.merchantId, (debited.get(d.merchantId) ?? 0) + d.amount);
  return debited;
}

/** By merchant: what `debit`s took for payouts paid after FAILED that the provider then reversed. */
function returnedByReversal(w: World, exceptions: Seen['exceptions']): Map<string, number> {
  const reversed = new Set(
    exceptions.filter((e) => e.kind === 'reversal_after_failed').map((e) => e.reference),
  );
  const returned = new Map<string, number>();
  for (const e of exceptions) {
    const debit = w.debitedOn.get(e.id);
    if (e.kind !== 'payout_after_failed' || !debit || !reversed.has(e.reference)) continue;
    returned.set(debit.merchantId, (returned.get(debit.merchantId) ?? 0) + debit.amount);
  }
  return returned;
}
