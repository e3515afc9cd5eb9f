/**
 * Exceptions an operator resolves (CONTRACT §12, §13), on both databases: customers' money that no
 * pay-in may keep goes into suspense when it is seen, a payout paid after FAILED is a merchant's
 * debt in the receivable, and `refund`, `credit`, `debit` and `dismiss` move each once, however
 * often they are asked, with `ledger verify` clean after every step. The outcomes are reported the
 * way a channel reports them (`ChannelOutcomes`), on sandbox transactions, whose channel refunds.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { ExceptionRow } from '../../src/exceptions/exceptions.repository.ts';
import { findTransaction } from '../../src/transactions/transactions.repository.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';
import { until } from '../support/live.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
let n = 0;

async function payin(gw: Gateway, amount: number, status?: 'SUCCESS' | 'FAILED'): Promise<string> {
  const res = await gw.post('/payments/onsite/payin', {
    money: { amount },
    merchant_order_no: `ex-${process.pid}-${++n}`,
  });
  assert.equal(res.status, 200, res.text);
  const id = res.body.payment_id as string;
  if (status) {
    const done = await gw.post('/sandbox/payin/complete', { payment_id: id, status });
    assert.equal(done.status, 200, done.text);
  }
  return id;
}

async function txn(gw: Gateway, id: string) {
  const t = await findTransaction(gw.database.db, id);
  assert.ok(t);
  return t;
}

/** A payment of `paise` reported for a pay-in already FAILED: money in suspense. */
async function latePayment(gw: Gateway, paise = 12_345): Promise<ExceptionRow> {
  const id = await payin(gw, paise / 100, 'FAILED');
  await gw.paygate.services.outcomes.payin(
    await txn(gw, id),
    {
      status: 'SUCCESS',
      utr: `9${String(++n).padStart(11, '0')}`,
      channelTxnId: 'x',
      amount: paise,
      reference: `late-${id}`,
    },
    'test',
  );
  return exceptionOf(gw, id);
}

async function exceptionOf(gw: Gateway, paymentId: string): Promise<ExceptionRow> {
  const rows = await gw.database.db
    .selectFrom('channel_exceptions')
    .select('id')
    .where('payment_id', '=', paymentId)
    .execute();
  assert.equal(rows.length, 1, `one exception for ${paymentId}`);
  return (await gw.paygate.services.exceptions.get(Number(rows[0]!.id)))!;
}

async function available(gw: Gateway, merchantId = gw.merchant.merchant_id): Promise<number> {
  return (await gw.paygate.services.wallets.balance(merchantId, 'INR')).available;
}

async function ledgerOk(gw: Gateway): Promise<void> {
  const report = await gw.paygate.services.wallets.verify();
  assert.deepEqual(report.problems, []);
}

async function suspense(gw: Gateway): Promise<number> {
  const row = await gw.database.db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.sum<number>('amount').as('total'))
    .where('account', '=', 'external:suspense')
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

async function journals(gw: Gateway): Promise<number> {
  return (await gw.paygate.services.wallets.verify()).journals;
}

const resolve = (
  gw: Gateway,
  id: number,
  action: 'refund' | 'credit' | 'debit' | 'dismiss',
  o: { merchantId?: string; note?: string } = {},
) => gw.paygate.services.exceptions.resolve(id, { action, actor: 'test@example.com', ...o });

for (const kind of DATABASES) {
  describe(`exceptions on ${kind}`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(kind, {
        worker: true,
        env: { AUTO_REFUND_UNMATCHED: 'false', SANDBOX_PAYOUT_SETTLE_MS: '50', WORKER_POLL_MS: '50' },
      });
      await gw.paygate.services.wallets.topUp(gw.merchant.merchant_id, 'INR', 1_000_00);
    });
    after(async () => gw?.close());
    afterEach(async () => ledgerOk(gw));

    it('journals a payment after FAILED into suspense, and credits it to a chosen merchant once', async () => {
      const before = await suspense(gw);
      const e = await latePayment(gw, 12_345);
      assert.deepEqual(
        [e.kind, e.holds, e.outstanding, e.resolved_at],
        ['payment_after_final', 'suspense', 12_345, null],
      );
      assert.equal((await suspense(gw)) - before, 12_345);
      await ledgerOk(gw);
      const other = await gw.newMerchant();
      const [first, second] = await Promise.all([
        resolve(gw, e.id, 'credit', { merchantId: other.merchant_id }),
        resolve(gw, e.id, 'credit', { merchantId: other.merchant_id }),
      ]);
      assert.deepEqual(
        [first.changed, second.changed].sort(),
        [false, true],
        'a double submission credits once',
      );
      assert.equal(await available(gw, other.merchant_id), 12_345);
      const again = await resolve(gw, e.id, 'credit', { merchantId: other.merchant_id });
      assert.equal(again.changed, false);
      assert.equal(await available(gw, other.merchant_id), 12_345);
      assert.equal(await suspense(gw), before);
      const closed = (await gw.paygate.services.exceptions.get(e.id))!;
      assert.deepEqual(
        [closed.resolution, closed.resolved_by, closed.outstanding, closed.merchant_id],
        ['credit', 'test@example.com', 0, other.merchant_id],
      );
      assert.ok(closed.resolved_at !== null);
      await assert.rejects(resolve(gw, e.id, 'refund'), (err: any) => err.errorCode === 'INVALID_STATE');
      const audit = await gw.database.db
        .selectFrom('audit_actions')
        .selectAll()
        .where('action', '=', 'exception_credit')
        .execute();
      assert.equal(audit.filter((a) => a.detail.includes(`exception ${e.id} `)).length, 1);
    });

    it('refunds an amount mismatch from suspense: no merchant money, no callback, closed when the refund succeeds', async () => {
      const id = await payin(gw, 200);
      await gw.paygate.services.outcomes.payin(
        await txn(gw, id),
        { status: 'SUCCESS', utr: '555555555555', channelTxnId: 'x', amount: 15_000, reference: `mm-${id}` },
        'test',
      );
      const e = await exceptionOf(gw, id);
      assert.deepEqual([e.kind, e.holds, e.outstanding], ['amount_mismatch', 'suspense', 15_000]);
      assert.equal((await txn(gw, id)).status, 'PENDING', 'the pay-in keeps its status');
      const wallet = await available(gw);
      const [a, b] = await Promise.all([resolve(gw, e.id, 'refund'), resolve(gw, e.id, 'refund')]);
      assert.deepEqual([a.changed, b.changed].sort(), [false, true]);
      const refundId = (await gw.paygate.services.exceptions.get(e.id))!.refund_id!;
      assert.ok(refundId);
      const refund = await txn(gw, refundId);
      assert.deepEqual(
        [refund.kind, refund.refund_of, refund.callback_url, refund.amount],
        ['refund', null, null, 15_000],
      );
      await assert.rejects(resolve(gw, e.id, 'credit'), (err: any) => err.errorCode === 'INVALID_STATE');
      await assert.rejects(
        resolve(gw, e.id, 'dismiss', { note: 'x' }),
        (err: any) => err.errorCode === 'INVALID_STATE',
      );
      await until(
        async () => (await gw.paygate.services.exceptions.get(e.id))!.resolved_at !== null,
        'the refund to succeed',
      );
      assert.equal((await txn(gw, refundId)).status, 'SUCCESS');
      const closed = (await gw.paygate.services.exceptions.get(e.id))!;
      assert.deepEqual(
        [closed.resolution, closed.outstanding, closed.resolved_by],
        ['refund', 0, 'test@example.com'],
      );
      assert.equal(await available(gw), wallet, "the merchant's balance did not move");
      const calls = await gw.database.db
        .selectFrom('callback_deliveries')
        .select('id')
        .where('payment_id', '=', refundId)
        .execute();
      assert.equal(calls.length, 0, 'no merchant callback');
      // The pay-in can still be paid, and refunded in full: the refund from suspense is not counted against it.
      await gw.post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' });
      const full = await gw.post('/payments/refund', {
        payment_id: id,
        money: { amount: 200 },
        merchant_refund_no: `full-${++n}`,
      });
      assert.equal(full.status, 200, full.text);
    });

    it('leaves a refused refund open with its money in suspense; dismissing it needs a note and writes it off', async () => {
      const e = await latePayment(gw, 10_013); // paise 13: the sandbox refuses the refund
      const before = await suspense(gw);
      await resolve(gw, e.id, 'refund');
      const refundId = (await gw.paygate.services.exceptions.get(e.id))!.refund_id!;
      await until(async () => (await txn(gw, refundId)).status === 'FAILED', 'the refund to fail');
      await until(
        async () => (await gw.paygate.services.exceptions.get(e.id))!.refund_id === null,
        'the exception to be free',
      );
      const open = (await gw.paygate.services.exceptions.get(e.id))!;
      assert.deepEqual([open.resolved_at, open.outstanding], [null, 10_013]);
      assert.equal(await suspense(gw), before);
      await ledgerOk(gw);
      const count = await journals(gw);
      await assert.rejects(
        resolve(gw, e.id, 'dismiss'),
        (err: any) => err.errorCode === 'BAD_REQUEST' && /note/.test(err.message),
      );
      await assert.rejects(
        resolve(gw, e.id, 'dismiss', { note: '   ' }),
        (err: any) => err.errorCode === 'BAD_REQUEST',
      );
      assert.equal(await journals(gw), count, 'nothing changed');
      const done = await resolve(gw, e.id, 'dismiss', { note: 'customer account closed' });
      assert.ok(done.changed);
      assert.match(done.message, /written off/);
      assert.equal(await suspense(gw), before - 10_013);
      assert.equal((await gw.paygate.services.exceptions.get(e.id))!.note, 'customer account closed');
    });

    it('debits a payout paid after FAILED from the merchant as far as available allows; the rest stays open', async () => {
      const merchant = await gw.newMerchant();
      await gw.paygate.services.wallets.topUp(merchant.merchant_id, 'INR', 30_000);
      const res = await gw.post(
        '/payments/payout',
        {
          money: { amount: 300 },
          merchant_order_no: `po-${++n}`,
          receiver: { ...RECEIVER, account_no: '123456780000' },
        },
        { key: merchant.api_key },
      );
      assert.equal(res.status, 200, res.text);
      const id = res.body.payment_id as string;
      await until(async () => (await txn(gw, id)).status === 'FAILED', 'the payout to fail');
      await gw.paygate.services.outcomes.payout(
        await txn(gw, id),
        {
          channelTxnId: 'x',
          outcome: { status: 'SUCCESS', utr: '777777777777', channelTxnId: 'x' },
          reversed: false,
        },
        'test',
      );
      const e = await exceptionOf(gw, id);
      assert.deepEqual(
        [e.kind, e.holds, e.outstanding, e.merchant_id],
        ['payout_after_failed', 'receivable', 30_000, merchant.merchant_id],
      );
      await ledgerOk(gw);
      // The merchant spends part of its balance first.
      const spend = await gw.post(
        '/payments/payout',
        { money: { amount: 200 }, merchant_order_no: `po-${++n}`, receiver: RECEIVER },
        { key: merchant.api_key },
      );
      assert.equal(spend.status, 200, spend.text);
      assert.equal(await available(gw, merchant.merchant_id), 10_000);
      await assert.rejects(
        resolve(gw, e.id, 'credit', { merchantId: merchant.merchant_id }),
        (err: any) => err.errorCode === 'BAD_REQUEST',
      );
      const [a, b] = await Promise.all([resolve(gw, e.id, 'debit'), resolve(gw, e.id, 'debit')]);
      assert.deepEqual([a.changed, b.changed].sort(), [false, true]);
      assert.equal(await available(gw, merchant.merchant_id), 0);
      const partial = (await gw.paygate.services.exceptions.get(e.id))!;
      assert.deepEqual([partial.outstanding, partial.resolved_at], [20_000, null]);
      await ledgerOk(gw);
      await gw.paygate.services.wallets.topUp(merchant.merchant_id, 'INR', 50_000);
      const rest = await resolve(gw, e.id, 'debit');
      assert.ok(rest.changed);
      assert.equal(await available(gw, merchant.merchant_id), 30_000);
      const closed = (await gw.paygate.services.exceptions.get(e.id))!;
      assert.deepEqual([closed.outstanding, closed.resolution], [0, 'debit']);
      assert.equal((await resolve(gw, e.id, 'debit')).changed, false);
      assert.equal(await available(gw, merchant.merchant_id), 30_000);
    });

    it('holds a refund paid after FAILED as owed by the merchant, once, and debits it', async () => {
      const id = await payin(gw, 100, 'SUCCESS');
      const res = await gw.post('/payments/refund', {
        payment_id: id,
        money: { amount: 10.13 },
        merchant_refund_no: `rf-${process.pid}-${++n}`,
      });
      assert.equal(res.status, 200, res.text);
      const refundId = res.body.refund_id as string;
      await until(async () => (await txn(gw, refundId)).status === 'FAILED', 'the refund to fail');
      const before = await available(gw);
      const paid = {
        channelTxnId: 'x',
        outcome: { status: 'SUCCESS' as const, utr: '666666666666', channelTxnId: 'x' },
      };
      await gw.paygate.services.outcomes.refund(await txn(gw, refundId), paid, 'test');
      const e = await exceptionOf(gw, refundId);
      assert.deepEqual(
        [e.kind, e.holds, e.outstanding, e.merchant_id],
        ['refund_after_failed', 'receivable', 1013, gw.merchant.merchant_id],
      );
      assert.equal((await txn(gw, refundId)).status, 'FAILED', 'a final status never changes');
      assert.equal(await available(gw), before, 'no wallet moves until the operator debits');
      await ledgerOk(gw);
      // The same report again journals nothing more.
      const journaled = await journals(gw);
      await gw.paygate.services.outcomes.refund(await txn(gw, refundId), paid, 'test');
      assert.equal(await journals(gw), journaled);
      await exceptionOf(gw, refundId);
      const debited = await resolve(gw, e.id, 'debit');
      assert.ok(debited.changed);
      assert.equal(await available(gw), before - 1013);
      assert.deepEqual(
        [
          (await gw.paygate.services.exceptions.get(e.id))!.outstanding,
          (await gw.paygate.services.exceptions.get(e.id))!.resolution,
        ],
        [0, 'debit'],
      );
      await ledgerOk(gw);
    });

    it('returns what was debited when the bank sends a payout paid after FAILED back', async () => {
      const merchant = await gw.newMerchant();
      await gw.paygate.services.wallets.topUp(merchant.merchant_id, 'INR', 10_000);
      const res = await gw.post(
        '/payments/payout',
        {
          money: { amount: 100 },
          merchant_order_no: `po-${++n}`,
          receiver: { ...RECEIVER, account_no: '123456780000' },
        },
        { key: merchant.api_key },
      );
      const id = res.body.payment_id as string;
      await until(async () => (await txn(gw, id)).status === 'FAILED', 'the payout to fail');
      const state = {
        channelTxnId: 'x',
        outcome: { status: 'SUCCESS' as const, utr: '888888888888', channelTxnId: 'x' },
        reversed: false,
      };
      await gw.paygate.services.outcomes.payout(await txn(gw, id), state, 'test');
      const e = await exceptionOf(gw, id);
      await resolve(gw, e.id, 'debit');
      assert.equal(await available(gw, merchant.merchant_id), 0);
      await gw.paygate.services.outcomes.payout(
        await txn(gw, id),
        { ...state, outcome: { ...state.outcome, status: 'FAILED' }, reversed: true },
        'test',
      );
      assert.equal(await available(gw, merchant.merchant_id), 10_000, 'the debit came back');
    });

    it('dismisses exceptions that hold no money with a note, and refuses money actions on them', async () => {
      const id = await payin(gw, 50);
      await gw.paygate.services.outcomes.stuck(await txn(gw, id), 90_000);
      const e = await exceptionOf(gw, id);
      assert.deepEqual([e.kind, e.holds], ['stuck', null]);
      await gw.paygate.services.outcomes.within((s) =>
        gw.paygate.services.outcomes.untied(s, {
          kind: 'low_balance',
          provider: 'cashfree',
          reference: `lb-${id}`,
          amount: 100,
          detail: 'low',
        }),
      );
      const low = await gw.database.db
        .selectFrom('channel_exceptions')
        .select(['id', 'holds'])
        .where('reference', '=', `lb-${id}`)
        .executeTakeFirstOrThrow();
      assert.equal(low.holds, null);
      const count = await journals(gw);
      for (const action of ['credit', 'refund', 'debit'] as const)
        await assert.rejects(
          resolve(gw, e.id, action, { merchantId: gw.merchant.merchant_id }),
          (err: any) => err.errorCode === 'BAD_REQUEST' && /holds no/.test(err.message),
        );
      await assert.rejects(
        resolve(gw, 999_999_999, 'dismiss', { note: 'x' }),
        (err: any) => err.errorCode === 'BAD_REQUEST',
      );
      assert.equal(await journals(gw), count);
      assert.equal((await gw.paygate.services.exceptions.get(e.id))!.resolved_at, null);
      assert.ok((await resolve(gw, e.id, 'dismiss', { note: 'paid by cash' })).changed);
      assert.ok((await resolve(gw, Number(low.id), 'dismiss', { note: 'topped up' })).changed);
      assert.equal(await journals(gw), count, 'dismissing moved no money');
      const listed = await gw.paygate.services.exceptions.get(e.id);
      assert.equal(listed!.resolution, 'dismiss');
    });

    it('journals an unknown reference paid to a merchant’s UPI id into suspense, kept with that merchant', async () => {
      const m = await gw.database.db
        .selectFrom('merchants')
        .select('vpa')
        .where('id', '=', gw.merchant.merchant_id)
        .executeTakeFirstOrThrow();
      const reference = `unk-${++n}`;
      await gw.paygate.services.outcomes.within((s) =>
        gw.paygate.services.outcomes.untied(s, {
          kind: 'unknown_reference',
          provider: 'sandbox',
          reference,
          amount: 4_200,
          detail: 'unknown',
          payment: true,
          vpa: m.vpa.toUpperCase(),
        }),
      );
      const row = await gw.database.db
        .selectFrom('channel_exceptions')
        .select('id')
        .where('reference', '=', reference)
        .executeTakeFirstOrThrow();
      const e = (await gw.paygate.services.exceptions.get(Number(row.id)))!;
      assert.deepEqual([e.holds, e.outstanding, e.merchant_id], ['suspense', 4_200, gw.merchant.merchant_id]);
      const before = await available(gw);
      await resolve(gw, e.id, 'credit');
      assert.equal(await available(gw), before + 4_200);
    });

    it('exceptions resolve on the command line: exit 2 for bad input, exit 1 with a code for a refusal, a repeat does nothing twice', async () => {
      const e = await latePayment(gw, 2_500);
      const env = { DATABASE_URL: gw.testDb.url };
      const run = (...args: string[]) => cliAsync([...args, '--json'], env);
      const unknown = await run('exceptions', 'resolve', '987654321', '--action', 'dismiss', '--note', 'x');
      assert.equal(unknown.status, 1, unknown.stdout);
      assert.equal(unknown.json.error.code, 'NOT_FOUND');
      assert.match(unknown.json.error.message, /no exception 987654321/);
      const noNote = await run('exceptions', 'resolve', String(e.id), '--action', 'dismiss');
      assert.equal(noNote.status, 2);
      assert.match(noNote.json.error.message, /note is required/);
      const badAction = await run('exceptions', 'resolve', String(e.id), '--action', 'debit');
      assert.equal(badAction.status, 1);
      assert.equal(badAction.json.error.code, 'INVALID_STATE');
      assert.match(badAction.json.error.message, /holds no merchant's debt/);
      assert.equal((await gw.paygate.services.exceptions.get(e.id))!.resolved_at, null);
      const before = await available(gw);
      const credit = await run(
        'exceptions',
        'resolve',
        String(e.id),
        '--action',
        'credit',
        '--merchant',
        gw.merchant.merchant_id,
      );
      assert.equal(credit.status, 0, credit.stderr + credit.stdout);
      assert.equal(credit.json.changed, true);
      assert.equal(credit.json.exception.status, 'resolved');
      const repeat = await run(
        'exceptions',
        'resolve',
        String(e.id),
        '--action',
        'credit',
        '--merchant',
        gw.merchant.merchant_id,
      );
      assert.equal(repeat.status, 0);
      assert.equal(repeat.json.changed, false);
      assert.equal(await available(gw), before + 2_500);
      const open = await run('channels', 'exceptions', '--open');
      assert.equal(open.status, 0);
      assert.ok(open.json.exceptions.every((x: any) => x.status === 'open'));
      assert.ok(!open.json.exceptions.some((x: any) => x.id === e.id));
      const all = await run('channels', 'exceptions');
      const statuses = all.json.exceptions.map((x: any) => x.status);
      assert.ok(statuses.indexOf('resolved') > statuses.lastIndexOf('open'), 'open ones first');
    });
  });

  describe(`automatic refunds of unmatched money on ${kind}`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    before(async () => {
      gw = await startGateway(kind, {
        worker: true,
        env: { SANDBOX_PAYOUT_SETTLE_MS: '50', WORKER_POLL_MS: '50' },
      });
    });
    after(async () => gw?.close());

    it('refunds a late payment in full from suspense at once and closes its exception', async () => {
      const e = await latePayment(gw, 7_700);
      assert.ok(e.refund_id, 'the refund was recorded with the exception');
      await until(
        async () => (await gw.paygate.services.exceptions.get(e.id))!.resolved_at !== null,
        'the refund',
      );
      const closed = (await gw.paygate.services.exceptions.get(e.id))!;
      assert.deepEqual([closed.resolution, closed.resolved_by, closed.outstanding], ['refund', 'auto', 0]);
      const refunds = await gw.database.db
        .selectFrom('transactions')
        .select(['amount', 'status'])
        .where('kind', '=', 'refund')
        .where('refund_of', 'is', null)
        .execute();
      assert.deepEqual(
        refunds.map((r) => [Number(r.amount), r.status]),
        [[7_700, 'SUCCESS']],
      );
      assert.equal(await suspense(gw), 0);
      assert.equal(await available(gw), 0, 'no merchant money moved');
      await ledgerOk(gw);
    });
  });
}
