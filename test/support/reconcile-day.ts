/**
 * A day of live transactions for reconciliation, put straight into the database (batched inserts)
 * and into the fake providers, as if Paygate had settled them through the fakes: Setu pay-ins (a
 * paid QR each; one in ten FAILED, a QR nobody paid) and Cashfree payouts (a transfer each; one in
 * ten FAILED), and Setu refunds of its paid pay-ins when asked. With `differences`, nine things the
 * fakes hold that Paygate never heard of, and the exceptions they must open, as `kind provider
 * reference`: four move money and are booked through the outcomes, five are differences of record.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Database } from '../../src/db/database.ts';
import { insertTransactions, type TransactionRow } from '../../src/transactions/transactions.repository.ts';
import { newTransaction } from '../../src/transactions/new-transaction.ts';
import { istDayBounds } from '../../src/ist.ts';
import type { FakeCashfree, FakeTransfer } from './fake-cashfree.ts';
import type { FakePayment, FakeQr, FakeRefund, FakeSetu } from './fake-setu.ts';

export interface DaySpec {
  /** The IST day the transactions were created on. */
  date: string;
  payins: number;
  payouts: number;
  /** Setu refunds, each of a SUCCESS pay-in of the day, SUCCESS at Setu (none unless given). */
  refunds?: number;
  /** One pay-in in this many is FAILED, a QR nobody paid (10 unless given; 2: half). */
  failedEvery?: number;
  /** Put the nine differences into the fakes (needs at least ten of each). */
  differences?: boolean;
  /** Rows per INSERT. */
  batch?: number;
}

export interface SeededDay {
  merchantId: string;
  /** The exceptions a run must open, as `kind provider reference`, sorted. */
  expected: string[];
  /** Transactions that differ, per channel. */
  mismatched: { setu: number; cashfree: number };
  /** Differences opened as reconcile_mismatch, per channel (what moved money is booked instead). */
  opened: { setu: number; cashfree: number };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ulid = () => Array.from(randomBytes(26), (b) => CROCKFORD[b % 32]).join('');
const rrn = (i: number) => String(300_000_000_000 + i);
const stamp = (at: number) => new Date(at).toISOString().slice(0, 19).replace('T', ' ');

export async function seedReconcileDay(
  database: Database,
  fakes: { setu: FakeSetu; cashfree: FakeCashfree },
  spec: DaySpec,
): Promise<SeededDay> {
  const { setu, cashfree } = fakes;
  const tag = randomBytes(3).toString('hex');
  const merchantId = `mrc_reconcile_${tag}`;
  await database.db
    .insertInto('merchants')
    .values({
      id: merchantId,
      name: 'Reconcile Shop',
      mode: 'live',
      status: 'active',
      callback_url: null,
      vpa: 'shop.reconcile@pineaxis',
      webhook_secret: `whsec_${tag}`,
      previous_webhook_secret: null,
      previous_secret_until: null,
      created_at: istDayBounds(spec.date).from,
    })
    .execute();
  const { from } = istDayBounds(spec.date);
  const refunds = spec.refunds ?? 0;
  const failedEvery = spec.failedEvery ?? 10;
  // Spread over the day, each kind's own evenly, interleaved, as a day's traffic is.
  const createdAt = (i: number, count: number, shift: number) =>
    from + Math.floor(((i + shift) * 86_000_000) / count);
  const paymentId = (kind: 'i' | 'o' | 'r', i: number) => `rc${kind}${tag}${String(i).padStart(23, '0')}`;
  const isFailed = (i: number) => i % failedEvery === failedEvery - 1;
  // The first paid pay-ins, by index: the refunds return them (`qrFor` would search every QR).
  const paid = new Map<number, FakePayment>();
  const expected: string[] = [];

  const payinRow = (i: number): TransactionRow => {
    const id = paymentId('i', i);
    const at = createdAt(i, spec.payins, 0);
    const amount = 10_000 + (i % 997) * 100;
    const qr: FakeQr = {
      id: ulid(),
      amount,
      merchantVpa: 'shop.reconcile@pineaxis',
      referenceId: id,
      refId: String(1_000_000_000_000_000_000n + BigInt(i)),
      expiryDate: new Date(at + 900_000).toISOString(),
      transactionNote: 'Paygate',
      status: 'closed',
      createdAt: new Date(at).toISOString(),
      attempts: [],
    };
    const failed = isFailed(i);
    if (!failed) {
      const payment = paymentOn(qr, amount, rrn(i), at + 5_000);
      qr.attempts.push(payment);
      qr.payment = payment;
      qr.status = 'paid';
      if (paid.size < refunds) paid.set(i, payment);
    }
    setu.qrs.set(qr.id, qr);
    return newTransaction({
      payment_id: id,
      merchant_id: merchantId,
      kind: 'payin',
      flow: 'onsite',
      merchant_order_no: `rc-in-${i}`,
      amount,
      currency: 'INR',
      status: failed ? 'FAILED' : 'SUCCESS',
      utr: failed ? '' : rrn(i),
      channel_txn_id: qr.id,
      channel: 'setu',
      request_hash: `h${tag}i${i}`,
      response_json: '{}',
      created_at: at,
      updated_at: at + 5_000,
      finalized_at: at + 5_000,
    });
  };

  const payoutRow = (i: number): TransactionRow => {
    const id = paymentId('o', i);
    const at = createdAt(i, spec.payouts, 0.5);
    const amount = 20_000 + (i % 991) * 100;
    const failed = i % 10 === 9;
    const t: FakeTransfer = {
      transfer_id: id,
      cf_transfer_id: String(50_000_000 + i),
      status: failed ? 'FAILED' : 'SUCCESS',
      status_code: failed ? 'FAILED' : 'COMPLETED',
      transfer_amount: amount / 100,
      transfer_mode: 'banktransfer',
      transfer_utr: failed ? '' : rrn(1_000_000_000 + i),
      beneficiary_name: 'Asha Rao',
      bank_account_number: '123456789012',
      bank_ifsc: 'HDFC0001234',
      added_on: stamp(at),
      updated_on: stamp(at + 3_000),
    };
    cashfree.transfers.set(id, t);
    return newTransaction({
      payment_id: id,
      merchant_id: merchantId,
      kind: 'payout',
      flow: 'payout',
      merchant_order_no: `rc-out-${i}`,
      amount,
      currency: 'INR',
      status: failed ? 'FAILED' : 'SUCCESS',
      utr: t.transfer_utr,
      channel_txn_id: t.cf_transfer_id,
      channel: 'cashfree',
      receiver_name: 'Asha Rao',
      receiver_account_no: '123456789012',
      receiver_ifsc: 'HDFC0001234',
      submit_attempts: 1,
      request_hash: `h${tag}o${i}`,
      response_json: '{}',
      created_at: at,
      updated_at: at + 3_000,
      finalized_at: at + 3_000,
    });
  };

  const size = spec.batch ?? 1000;
  const insert = async (count: number, make: (i: number) => TransactionRow) => {
    for (let lo = 0; lo < count; lo += size) {
      const rows = Array.from({ length: Math.min(size, count - lo) }, (_, j) => make(lo + j));
      // As the gateway writes its rows, in one JSON parameter: a thousand full rows have more
      // values than SQLite takes parameters in one statement.
      const inserted = await insertTransactions(database.db, rows);
      assert.equal(inserted.size, rows.length, 'a seeded transaction was there already');
    }
  };
  // The j-th refund returns the j-th paid pay-in, whole.
  const refundRow = (j: number): TransactionRow => {
    const of = Math.floor(j / (failedEvery - 1)) * failedEvery + (j % (failedEvery - 1));
    const payment = paid.get(of);
    if (!payment) throw new Error(`refund ${j}: pay-in ${of} was not paid`);
    const at = createdAt(j, refunds, 0.25);
    const crn = String(600_000_000_000 + j);
    const refund: FakeRefund = {
      id: ulid(),
      paymentId: payment.id,
      referenceId: paymentId('r', j),
      amount: payment.amount,
      ending: 'success',
      crn,
      createdAt: new Date(at).toISOString(),
      visibleAt: at,
      settleAt: at,
    };
    setu.refunds.set(refund.id, refund);
    return newTransaction({
      payment_id: refund.referenceId,
      merchant_id: merchantId,
      kind: 'refund',
      flow: 'refund',
      merchant_order_no: `rc-rf-${j}`,
      amount: payment.amount,
      currency: 'INR',
      status: 'SUCCESS',
      utr: crn,
      channel_txn_id: refund.id,
      channel: 'setu',
      refund_of: paymentId('i', of),
      channel_payment_id: payment.id,
      channel_payment_txn_id: payment.txnId,
      request_hash: `h${tag}r${j}`,
      response_json: '{}',
      created_at: at,
      updated_at: at + 4_000,
      finalized_at: at + 4_000,
    });
  };

  await insert(spec.payins, payinRow);
  await insert(spec.payouts, payoutRow);
  await insert(refunds, refundRow);

  if (spec.differences) {
    if (spec.payins < 10 || spec.payouts < 10) throw new Error('differences need ten of each');
    const qrOf = (i: number) => setu.qrFor(paymentId('i', i))!;
    const own = qrOf(0).payment!;
    own.amount += 1;
    expected.push(`reconcile_mismatch setu ${own.id} amount=${own.amount}`);
    const other = qrOf(1).payment!;
    other.rrn = '777000000001';
    expected.push(`reconcile_mismatch setu ${other.id} utr=${other.rrn}`);
    const twice = qrOf(2);
    const second = paymentOn(twice, twice.amount, '777000000002', Date.parse(twice.createdAt) + 60_000);
    twice.attempts.push(second);
    expected.push(`payment_after_final setu ${second.id}`);
    const unpaid = qrOf(9);
    const late = paymentOn(unpaid, unpaid.amount, '777000000009', Date.parse(unpaid.createdAt) + 60_000);
    unpaid.attempts.push(late);
    expected.push(`payment_after_final setu ${late.id}`);

    const transfer = (i: number) => cashfree.transfers.get(paymentId('o', i))!;
    transfer(0).status = 'REVERSED';
    expected.push(`reversal cashfree ${paymentId('o', 0)}`);
    transfer(1).transfer_amount += 0.01;
    expected.push(
      `reconcile_mismatch cashfree ${transfer(1).cf_transfer_id} amount=${Math.round(transfer(1).transfer_amount * 100)}`,
    );
    transfer(2).transfer_utr = '888000000002';
    expected.push(`reconcile_mismatch cashfree ${transfer(2).cf_transfer_id} utr=888000000002`);
    cashfree.transfers.delete(paymentId('o', 3));
    expected.push(`reconcile_mismatch cashfree ${paymentId('o', 3)} status=NOT_FOUND`);
    transfer(9).status = 'SUCCESS';
    transfer(9).transfer_utr = '888000000009';
    expected.push(`payout_after_failed cashfree ${paymentId('o', 9)}`);
  }
  return {
    merchantId,
    expected: expected.sort(),
    mismatched: spec.differences ? { setu: 4, cashfree: 5 } : { setu: 0, cashfree: 0 },
    opened: spec.differences ? { setu: 2, cashfree: 3 } : { setu: 0, cashfree: 0 },
  };
}

function paymentOn(qr: FakeQr, amount: number, utr: string, at: number): FakePayment {
  return {
    id: ulid(),
    qrId: qr.id,
    amount,
    status: 'success',
    rrn: utr,
    txnId: `SET${randomBytes(12).toString('hex')}`,
    customerVpa: 'customer@okaxis',
    txnTs: new Date(at).toISOString(),
  };
}

/** The exceptions open, as `kind provider reference`, sorted. */
export async function reconcileExceptions(database: Database): Promise<string[]> {
  const rows = await database.db
    .selectFrom('channel_exceptions')
    .select(['kind', 'provider', 'reference'])
    .execute();
  return rows.map((r) => `${r.kind} ${r.provider} ${r.reference}`).sort();
}

/** Asserts that the day `date` has one reconciliation lease per channel (Setu, Cashfree), each done. */
export async function assertLeasesDone(database: Database, date: string): Promise<void> {
  const leases = await database.db
    .selectFrom('reconcile_leases')
    .select(['channel', 'done_at'])
    .where('date', '=', date)
    .execute();
  assert.equal(leases.length, 2);
  assert.ok(leases.every((x) => x.done_at !== null));
}
