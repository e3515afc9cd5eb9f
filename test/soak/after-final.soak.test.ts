/**
 * Soak: what providers do after Paygate decided (CONTRACT §13), over simulated days. 500 live
 * payouts and 500 live pay-ins (refunds of some) go final; then, day by day, the fakes change
 * final transactions at random (payouts reversed 1–7 days later, late payments on FAILED pay-ins,
 * refunds that flip to SUCCESS or FAILED), their webhooks dropped at random, the clock moves a day
 * (every transaction's times move a day into the past) and the day's reconciliation runs. After
 * every day, on each database: `ledger verify` clean; §13's conservation for the merchant
 * (available + held = credited − paid out + reversed + open receivable); every change booked
 * exactly once. At the end the fakes' totals equal the ledger's external accounts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DATABASES } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { RECEIVER, until, useLive, type LiveGateway } from '../support/live.ts';
import { istYesterday } from '../../src/ist.ts';
import { ReconcileService } from '../../src/reconcile/reconcile.service.ts';

const PAYOUTS = 500;
const PAYINS = 500;
const DAYS = 8;
const DAY_MS = 86_400_000;

const chance = (p: number) => Math.random() < p;
const rupees = () => (10_000 + Math.floor(Math.random() * 90_000)) / 100;

/** A change a fake makes to a final transaction, on a day, its webhook sent or dropped. */
interface Change {
  day: number;
  kind: 'reversal' | 'late_payment' | 'refund_success' | 'refund_failed';
  paymentId: string;
  notify: boolean;
}

async function shiftDay(l: LiveGateway): Promise<void> {
  const ms = DAY_MS;
  await l.gw.database.db
    .updateTable('transactions')
    .set({
      created_at: sql`created_at - ${ms}`,
      updated_at: sql`updated_at - ${ms}`,
      finalized_at: sql`case when finalized_at is null then null else finalized_at - ${ms} end`,
      reversed_at: sql`case when reversed_at is null then null else reversed_at - ${ms} end`,
    })
    .execute();
}

/** Sums of the ledger's lines, by account and journal kind, for the merchant and for the outside accounts. */
async function sums(l: LiveGateway) {
  const rows = await l.gw.database.db
    .selectFrom('ledger_entries')
    .select(['account', 'kind', 'merchant_id', sql<string>`cast(sum(amount) as text)`.as('total')])
    .groupBy(['account', 'kind', 'merchant_id'])
    .execute();
  const of = (account: string, kinds?: string[], merchantId?: string) =>
    rows
      .filter(
        (r) =>
          r.account === account &&
          (!kinds || kinds.includes(r.kind)) &&
          (!merchantId || r.merchant_id === merchantId),
      )
      .reduce((s, r) => s + Number(r.total), 0);
  return of;
}

/** §13's conservation for the merchant, from what the providers completed (the fakes) and the open receivable. */
async function conservation(l: LiveGateway, everSucceeded: Set<string>): Promise<void> {
  const db = l.gw.database.db;
  const m = l.merchant.merchant_id;
  const of = await sums(l);
  const balance = await l.balance();
  const credited =
    of('available', ['payin'], m) + of('available', ['topup'], m) + of('available', ['suspense_credit'], m);
  const payouts = await db
    .selectFrom('transactions')
    .select(['payment_id', 'amount'])
    .where('merchant_id', '=', m)
    .where('kind', '=', 'payout')
    .execute();
  let paidOut = 0;
  let reversed = 0;
  for (const p of payouts) {
    const t = l.cashfree.transfers.get(p.payment_id);
    if (!t || !everSucceeded.has(p.payment_id)) continue;
    paidOut += Number(p.amount);
    if (t.status === 'REVERSED') reversed += Number(p.amount);
  }
  const refunds = await db
    .selectFrom('transactions')
    .select(['payment_id', 'amount'])
    .where('merchant_id', '=', m)
    .where('kind', '=', 'refund')
    .where('refund_of', 'is not', null)
    .execute();
  for (const r of refunds) {
    const atSetu = l.setu.refundsFor(r.payment_id);
    if (atSetu.some((x) => l.setu.refundStatus(x) === 'success')) paidOut += Number(r.amount);
  }
  const owed = await db
    .selectFrom('channel_exceptions')
    .select(sql<string>`cast(coalesce(sum(outstanding), 0) as text)`.as('total'))
    .where('merchant_id', '=', m)
    .where('holds', '=', 'receivable')
    .where('resolved_at', 'is', null)
    .executeTakeFirstOrThrow();
  assert.equal(
    balance.available + balance.held,
    credited - paidOut + reversed + Number(owed.total),
    `available ${balance.available} + held ${balance.held}; credited ${credited}, paid out ${paidOut}, reversed ${reversed}, owed ${owed.total}`,
  );
}

/** The fakes' totals against the ledger's accounts of the outside world. */
async function providersMatchLedger(l: LiveGateway): Promise<void> {
  const of = await sums(l);
  const transfers = [...l.cashfree.transfers.values()].filter((t) => t.status === 'SUCCESS');
  const paidByCashfree = transfers.reduce((s, t) => s + Math.round(t.transfer_amount * 100), 0);
  assert.equal(of('external:bank_payouts'), paidByCashfree, 'what Cashfree paid out and kept paid');
  const payments = l.setu.payments().filter((p) => p.status === 'success');
  assert.equal(
    -of('external:customer_payins'),
    payments.reduce((s, p) => s + p.amount, 0),
    'what customers paid at Setu',
  );
  const refunded = [...l.setu.refunds.values()].filter((r) => l.setu.refundStatus(r) === 'success');
  assert.equal(
    of('external:customer_refunds'),
    refunded.reduce((s, r) => s + r.amount, 0),
    'what Setu refunded',
  );
}

for (const kind of DATABASES) {
  describe(`soak: after Paygate decided, on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, {
      PAYIN_EXPIRY_S: '4',
      CHANNEL_POLL_MS: '500',
      SETU_MAX_RPS: '400',
      CASHFREE_MAX_RPS: '400',
    });

    it(
      `books every change the providers make over ${DAYS} days exactly once`,
      { timeout: 1_500_000 },
      async (t) => {
        const l = live();
        const db = l.gw.database.db;
        l.cashfree.webhooks = false;
        // Payouts: most succeed, some fail; their webhooks dropped, the worker's polls find them.
        const payouts: string[] = [];
        for (let i = 0; i < PAYOUTS; i++) {
          l.cashfree.ending = chance(0.1) ? 'FAILED' : 'SUCCESS';
          const res = await l.post('/payments/payout', {
            money: { amount: rupees() },
            merchant_order_no: `po-${kind}-${i}`,
            receiver: RECEIVER,
          });
          assert.equal(res.status, 200, res.text);
          payouts.push(res.body.payment_id);
        }
        l.cashfree.ending = 'SUCCESS';
        // Pay-ins: most paid (notified or polled), the rest left to expire.
        const payins: string[] = [];
        for (let i = 0; i < PAYINS; i++) {
          const res = await l.post('/payments/onsite/payin', {
            money: { amount: rupees() },
            merchant_order_no: `in-${kind}-${i}`,
          });
          assert.equal(res.status, 200, res.text);
          payins.push(res.body.payment_id);
          if (chance(0.7)) {
            const p = await l.setu.pay(res.body.payment_id, { notify: chance(0.5) });
            if (chance(0.15)) l.setu.refundDisabled.add(p.id);
          }
        }
        await until(
          async () => {
            const open = await db
              .selectFrom('transactions')
              .select(sql<number>`count(*)`.as('n'))
              .where('status', 'in', ['PENDING', 'PROCESSING'])
              .executeTakeFirstOrThrow();
            return Number(open.n) === 0;
          },
          'every payout and pay-in final',
          300_000,
        );
        // Refunds of some paid pay-ins (those whose bank takes no online refund end FAILED).
        const paid = await db
          .selectFrom('transactions')
          .select(['payment_id', 'amount'])
          .where('kind', '=', 'payin')
          .where('status', '=', 'SUCCESS')
          .execute();
        for (const [i, p] of paid.entries()) {
          if (!chance(0.4)) continue;
          const res = await l.post('/payments/refund', {
            payment_id: p.payment_id,
            money: { amount: Math.max(1, Math.floor(Number(p.amount) / 200)) },
            merchant_refund_no: `rf-${kind}-${i}`,
          });
          assert.equal(res.status, 200, res.text);
        }
        await until(
          async () => {
            const open = await db
              .selectFrom('transactions')
              .select(sql<number>`count(*)`.as('n'))
              .where('status', 'in', ['PENDING', 'PROCESSING'])
              .executeTakeFirstOrThrow();
            return Number(open.n) === 0;
          },
          'every refund final',
          300_000,
        );
        await l.ledgerOk();

        // What the providers will do after Paygate decided, and when.
        const finals = await db
          .selectFrom('transactions')
          .select(['payment_id', 'kind', 'status', 'refund_of'])
          .execute();
        const changes: Change[] = [];
        const day = () => 1 + Math.floor(Math.random() * 7);
        for (const t of finals) {
          const at = { day: day(), paymentId: t.payment_id, notify: chance(0.3) };
          if (t.kind === 'payout' && t.status === 'SUCCESS' && chance(0.1))
            changes.push({ ...at, kind: 'reversal' });
          if (t.kind === 'payin' && t.status === 'FAILED' && chance(0.3))
            changes.push({ ...at, kind: 'late_payment' });
          if (t.kind === 'refund' && t.refund_of !== null) {
            if (t.status === 'FAILED' && chance(0.5)) changes.push({ ...at, kind: 'refund_success' });
            if (t.status === 'SUCCESS' && chance(0.1)) changes.push({ ...at, kind: 'refund_failed' });
          }
        }
        const everSucceeded = new Set(
          finals.filter((t) => t.kind === 'payout' && t.status === 'SUCCESS').map((t) => t.payment_id),
        );
        const services = l.gw.paygate.services;
        const reconcile = (now: number) =>
          new ReconcileService(db, { setu: services.setu, cashfree: services.cashfree }, services.outcomes, {
            now: () => now,
            lookbackDays: 7,
          });

        for (let d = 1; d <= DAYS; d++) {
          for (const c of changes.filter((x) => x.day === d)) await apply(l, c);
          await shiftDay(l);
          const service = reconcile(Date.now());
          const date = istYesterday(Date.now());
          for (const channel of ['setu', 'cashfree'] as const) {
            const run = await service.run(date, channel, 'cli');
            assert.equal(run.unreadable, 0, JSON.stringify(run));
          }
          // Refunds of money booked into suspense go out at once; they settle before the day closes.
          await until(
            async () => {
              const open = await db
                .selectFrom('transactions')
                .select(sql<number>`count(*)`.as('n'))
                .where('status', 'in', ['PENDING', 'PROCESSING'])
                .executeTakeFirstOrThrow();
              return Number(open.n) === 0;
            },
            `day ${d}'s refunds from suspense final`,
            120_000,
          );
          await l.ledgerOk();
          await conservation(l, everSucceeded);
        }
        // Each change booked once; and there were changes of each kind to book.
        const made = (['reversal', 'late_payment', 'refund_success', 'refund_failed'] as const).map(
          (k) => `${k} ${changes.filter((c) => c.kind === k).length}`,
        );
        t.diagnostic(`changes: ${made.join(', ')}; finals ${finals.length}`);
        for (const k of ['reversal', 'late_payment', 'refund_success', 'refund_failed'] as const)
          assert.ok(
            changes.some((c) => c.kind === k),
            `some ${k}`,
          );
        const kept = await db.selectFrom('channel_exceptions').select(['kind', 'payment_id']).execute();
        const count = (k: string, ids: string[]) =>
          kept.filter((e) => e.kind === k && ids.includes(e.payment_id ?? '')).length;
        const ids = (k: Change['kind']) => changes.filter((c) => c.kind === k).map((c) => c.paymentId);
        assert.equal(count('reversal', ids('reversal')), ids('reversal').length, 'reversals');
        assert.equal(
          count('payment_after_final', ids('late_payment')),
          ids('late_payment').length,
          'late payments',
        );
        assert.equal(
          count('refund_after_failed', ids('refund_success')),
          ids('refund_success').length,
          'late refunds',
        );
        assert.equal(
          count('reversal', ids('refund_failed')),
          ids('refund_failed').length,
          'refunds failed late',
        );
        for (const id of ids('reversal')) {
          const reversedCallbacks = l.receiver.forPayment(id).filter((c) => c.body.status === 'REVERSED');
          assert.ok(reversedCallbacks.length >= 1, `a REVERSED callback for ${id}`);
          const deliveries = await db
            .selectFrom('callback_deliveries')
            .select('id')
            .where('payment_id', '=', id)
            .execute();
          assert.equal(deliveries.length, 2, `one SUCCESS and one REVERSED event for ${id}`);
        }
        await providersMatchLedger(l);
      },
    );
  });
}

/** Makes one change at the fake, with its webhook or without. */
async function apply(l: LiveGateway, c: Change): Promise<void> {
  if (c.kind === 'reversal') {
    if (c.notify) await l.cashfree.events(c.paymentId, ['TRANSFER_REVERSED']);
    else l.cashfree.transfers.get(c.paymentId)!.status = 'REVERSED';
    return;
  }
  if (c.kind === 'late_payment') {
    await l.setu.pay(c.paymentId, { notify: c.notify });
    return;
  }
  const refund = l.setu.refundsFor(c.paymentId)[0];
  if (!refund) return;
  refund.ending = c.kind === 'refund_success' ? 'success' : 'failed';
  refund.settleAt = 0;
  if (c.notify) await l.setu.notifyRefund(refund);
}
