/**
 * Refunds as a merchant sees them (contract §12): creation in the documented shape with the amount
 * held, replays byte for byte, every refusal in its error code with nothing recorded and nothing
 * held, the refundable amount across partial and failed refunds, the sandbox's settlement and the
 * ledger at each step. Ledger clean after each test, on both databases.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import fc from 'fast-check';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Reply } from '../support/harness.ts';
import {
  findTransaction,
  insertTransactions,
  type TransactionRow,
} from '../../src/transactions/transactions.repository.ts';
import { newPaymentId, REFUND_ID_PREFIX } from '../../src/ids.ts';
import { refundsOf } from '../../src/refunds/refunds.repository.ts';
import { countEntries, countRefunds, paidMerchant, refund, refundNo } from '../support/refunds.ts';
import { holdForRefunds } from '../../src/wallet/ledger.ts';

const REFUND = '/payments/refund';
const STATUS = '/payments/refund_status';
const COMPLETE = '/sandbox/refund/complete';

function assertShapeA(res: Reply, status: number, errorCode: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.status, false);
  assert.equal(res.body.error.code, status);
  assert.equal(res.body.error.error_code, errorCode);
  assert.equal(res.body.error.metadata.request_id, res.headers['x-request-id']);
}

function issues(res: Reply): string[] {
  assert.equal(res.status, 422, res.text);
  return res.body.detail.map((d: any) => `${d.loc.join('.')}:${d.type}`).sort();
}

for (const kind of DATABASES) {
  describe(`refunds on ${kind}`, { skip: await skipFor(kind) }, () => {
    // No worker: refunds stay PENDING with their amount held until a test settles them.
    const gw = useGateway(kind);

    afterEach(async () => {
      assert.deepEqual((await gw().paygate.services.wallets.verify()).problems, []);
    });

    it('creates a refund: PENDING in the documented shape, the amount moved from available to held', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(100, {
        user_details: { user_name: 'Asha Rao', phone_number: '9876543210', email: 'asha@example.com' },
        callback_url: 'https://shop.example/payins',
      });
      const body = refund(paymentId, 40.5, { reason: 'Returned item' });
      const res = await m.post(REFUND, body);
      assert.equal(res.status, 200, res.text);
      // The record takes from its pay-in what its channel and its callback need.
      const payin = (await findTransaction(gw().database.db, paymentId))!;
      const row = (await findTransaction(gw().database.db, res.body.refund_id))!;
      const copied = [
        'channel',
        'user_name',
        'user_phone',
        'user_email',
        'callback_url',
        'channel_payment_id',
        'channel_payment_txn_id',
      ] as const;
      assert.deepEqual(
        {
          ...Object.fromEntries(copied.map((c) => [c, row[c]])),
          refund_of: row.refund_of,
          reason: row.reason,
        },
        {
          ...Object.fromEntries(copied.map((c) => [c, payin[c]])),
          refund_of: paymentId,
          reason: 'Returned item',
        },
      );
      assert.equal(row.user_name, 'Asha Rao');
      assert.equal(row.callback_url, 'https://shop.example/payins');
      assert.deepEqual(Object.keys(res.body), [
        'success',
        'refund_id',
        'payment_id',
        'merchant_refund_no',
        'amount',
        'currency',
        'status',
        'message',
      ]);
      assert.match(res.body.refund_id, /^[A-Za-z0-9]{32}$/);
      assert.notEqual(res.body.refund_id, paymentId);
      // It sorts next to its pay-in: the refunds of a pay-in are a range of the primary key.
      assert.equal(res.body.refund_id.slice(0, REFUND_ID_PREFIX), paymentId.slice(0, REFUND_ID_PREFIX));
      assert.equal(res.body.success, true);
      assert.equal(res.body.payment_id, paymentId);
      assert.equal(res.body.merchant_refund_no, body.merchant_refund_no);
      assert.equal(res.body.amount, 40.5);
      assert.equal(res.body.currency, 'INR');
      assert.equal(res.body.status, 'PENDING');
      assert.equal(res.body.message, 'Refund initiated');
      assert.equal(res.headers['idempotent-replayed'], undefined);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 59.5, held: 40.5 });

      const status = await m.post(STATUS, { refund_id: res.body.refund_id });
      assert.equal(status.status, 200, status.text);
      assert.deepEqual(status.body, {
        refund_id: res.body.refund_id,
        payment_id: paymentId,
        merchant_refund_no: body.merchant_refund_no,
        status: 'PENDING',
        money: { amount: 40.5, currency: 'INR' },
        utr: '',
      });
      // A refund is not a pay-in or a payout, and the reverse.
      assertShapeA(
        await m.post('/payments/payin_status', { payment_id: res.body.refund_id }),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assertShapeA(
        await m.post('/payments/payout_status', { payment_id: res.body.refund_id }),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assertShapeA(await m.post(STATUS, { refund_id: paymentId }), 404, 'PAYMENT_NOT_FOUND');
    });

    it('replays a repeated merchant_refund_no byte for byte; another body is 409 DUPLICATE_REFUND_NO', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(100);
      const body = refund(paymentId, 10);
      const first = await m.post(REFUND, body);
      assert.equal(first.status, 200, first.text);
      const again = await m.post(REFUND, { ...body });
      assert.equal(again.status, 200, again.text);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.text, first.text);
      assert.equal(await countRefunds(gw(), m.merchant_id), 1);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 90, held: 10 });

      for (const other of [
        { ...body, money: { amount: 11, currency: 'INR' } },
        { ...body, reason: 'another' },
        { ...body, payment_id: await m.paidIn(50) },
      ]) {
        const res = await m.post(REFUND, other);
        assertShapeA(res, 409, 'DUPLICATE_REFUND_NO');
        assert.equal(res.body.error.metadata.refund_id, first.body.refund_id);
      }
      assert.equal(await countRefunds(gw(), m.merchant_id), 1);
      // Refund numbers are per merchant: another merchant may use the same one.
      const other = await paidMerchant(gw());
      const theirs = await other.post(REFUND, {
        ...body,
        payment_id: await other.paidIn(20),
        money: { amount: 5 },
      });
      assert.equal(theirs.status, 200, theirs.text);
    });

    it("refuses an unknown pay-in, another merchant's, a payout's id and a refund's id with 404 PAYMENT_NOT_FOUND, recording nothing", async () => {
      const m = await paidMerchant(gw(), 100_000);
      const other = await paidMerchant(gw());
      const theirs = await other.paidIn(100);
      const mine = await m.paidIn(100);
      const payout = await m.post('/payments/payout', {
        money: { amount: 1 },
        merchant_order_no: refundNo(),
        receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
      });
      assert.equal(payout.status, 200, payout.text);
      const aRefund = (await m.post(REFUND, refund(mine, 1))).body.refund_id;
      const before = await m.balance();
      const entries = await countEntries(gw(), m.merchant_id);
      for (const id of ['x'.repeat(32), theirs, payout.body.payment_id, aRefund, 'no such id']) {
        assertShapeA(await m.post(REFUND, refund(id, 1)), 404, 'PAYMENT_NOT_FOUND');
      }
      assert.deepEqual(await m.balance(), before);
      assert.equal(await countEntries(gw(), m.merchant_id), entries);
      assert.equal(await countRefunds(gw(), m.merchant_id), 1);
      assert.equal(await countRefunds(gw(), other.merchant_id), 0);
    });

    it('refuses a PENDING or FAILED pay-in with 409 PAYMENT_NOT_REFUNDABLE, recording nothing', async () => {
      const m = await paidMerchant(gw(), 100_000);
      const pending = await m.pendingPayin(10);
      const failed = await m.pendingPayin(10);
      assert.equal(
        (await m.post('/sandbox/payin/complete', { payment_id: failed, status: 'FAILED' })).status,
        200,
      );
      for (const [id, status] of [
        [pending, 'PENDING'],
        [failed, 'FAILED'],
      ] as const) {
        const res = await m.post(REFUND, refund(id, 1));
        assertShapeA(res, 409, 'PAYMENT_NOT_REFUNDABLE');
        assert.equal(res.body.error.metadata.status, status);
      }
      assert.equal(await countRefunds(gw(), m.merchant_id), 0);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 1000, held: 0 });
    });

    it('never lets the refunds of a pay-in pass its amount: 400 REFUND_EXCEEDS_PAYMENT with refundable; a FAILED refund gives its share back', async () => {
      const m = await paidMerchant(gw(), 100_000);
      const paymentId = await m.paidIn(100);
      const over = await m.post(REFUND, refund(paymentId, 100.01));
      assertShapeA(over, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(over.body.error.metadata.refundable, 100);
      const a = await m.post(REFUND, refund(paymentId, 60));
      assert.equal(a.status, 200, a.text);
      const b = await m.post(REFUND, refund(paymentId, 40.13));
      assertShapeA(b, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(b.body.error.metadata.refundable, 40);
      const c = await m.post(REFUND, refund(paymentId, 39.13));
      assert.equal(c.status, 200, c.text);
      const d = await m.post(REFUND, refund(paymentId, 1));
      assertShapeA(d, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(d.body.error.metadata.refundable, 0.87);
      assert.equal(await countRefunds(gw(), m.merchant_id), 2);

      // The 39.13 refund fails: its hold returns, and its amount is refundable again.
      const failed = await m.post(COMPLETE, { refund_id: c.body.refund_id, status: 'FAILED' });
      assert.equal(failed.status, 200, failed.text);
      assert.equal(failed.body.status, 'FAILED');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 1040, held: 60 });
      const e = await m.post(REFUND, refund(paymentId, 40));
      assert.equal(e.status, 200, e.text);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 1000, held: 100 });
      assertShapeA(await m.post(REFUND, refund(paymentId, 0.01)), 400, 'REFUND_EXCEEDS_PAYMENT');
    });

    /** A refund of `paise` of `paymentId` written as the batch writer writes one, with the id given. */
    async function writeRefund(
      m: { merchant_id: string },
      template: TransactionRow,
      id: string,
      paise: number,
    ) {
      await gw()
        .database.writeTransaction()
        .execute(async (tx) => {
          await insertTransactions(tx, [
            { ...template, payment_id: id, merchant_order_no: refundNo(), amount: paise },
          ]);
          await holdForRefunds(
            tx,
            [{ merchantId: m.merchant_id, currency: 'INR', amount: paise, paymentId: id }],
            Date.now(),
          );
        });
    }

    it("counts and lists the refunds made before refund ids began with their pay-in's", async () => {
      const m = await paidMerchant(gw(), 100_000);
      const paymentId = await m.paidIn(100);
      const first = await m.post(REFUND, refund(paymentId, 10));
      assert.equal(first.status, 200, first.text);
      // A refund of 30.00 as refunds were made before `0018_refund_ids`: a random id, found by
      // `refund_of` alone.
      const template = (await findTransaction(gw().database.db, first.body.refund_id))!;
      const earlierId = newPaymentId();
      await writeRefund(m, template, earlierId, 3000);
      const over = await m.post(REFUND, refund(paymentId, 60.01));
      assertShapeA(over, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(over.body.error.metadata.refundable, 60);
      const status = await m.post(STATUS, { refund_id: earlierId });
      assert.equal(status.status, 200, status.text);
      assert.equal(status.body.payment_id, paymentId);
      const rest = await m.post(REFUND, refund(paymentId, 60));
      assert.equal(rest.status, 200, rest.text);
      assert.deepEqual(
        (await refundsOf(gw().database.db, paymentId)).map((r) => [r.payment_id, r.amount]).sort(),
        [
          [first.body.refund_id, 1000],
          [earlierId, 3000],
          [rest.body.refund_id, 6000],
        ].sort(),
      );
      // A FAILED one gives its share back, as any refund's does.
      const failed = await m.post(COMPLETE, { refund_id: earlierId, status: 'FAILED' });
      assert.equal(failed.status, 200, failed.text);
      const again = await m.post(REFUND, refund(paymentId, 30.01));
      assertShapeA(again, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(again.body.error.metadata.refundable, 30);
    });

    it("counts the refunds at both ends of the pay-in's range of ids, and none of a neighbouring pay-in's", async () => {
      const m = await paidMerchant(gw(), 100_000);
      const paymentId = await m.paidIn(100);
      const other = await m.paidIn(100);
      const first = await m.post(REFUND, refund(paymentId, 1));
      assert.equal(first.status, 200, first.text);
      const template = (await findTransaction(gw().database.db, first.body.refund_id))!;
      const prefix = paymentId.slice(0, REFUND_ID_PREFIX);
      const rest = 32 - REFUND_ID_PREFIX;
      for (const [suffix, paise] of [
        ['0'.repeat(rest), 200],
        ['z'.repeat(rest), 300],
        ['Z'.repeat(rest), 400],
      ] as const)
        await writeRefund(m, template, prefix + suffix, paise);
      // Another pay-in's refund whose id begins with this pay-in's (as no real one can): not counted.
      await writeRefund(m, { ...template, refund_of: other }, prefix + 'y'.repeat(rest), 500);
      const over = await m.post(REFUND, refund(paymentId, 90.01));
      assertShapeA(over, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(over.body.error.metadata.refundable, 90);
      assert.equal((await refundsOf(gw().database.db, paymentId)).length, 4);
      const left = await m.post(REFUND, refund(other, 95.01));
      assertShapeA(left, 400, 'REFUND_EXCEEDS_PAYMENT');
      assert.equal(left.body.error.metadata.refundable, 95);
    });

    it('holds the refund from available: 400 INSUFFICIENT_BALANCE when it does not cover it, nothing recorded', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(100);
      const payout = await m.post('/payments/payout', {
        money: { amount: 95 },
        merchant_order_no: refundNo(),
        receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
      });
      assert.equal(payout.status, 200, payout.text);
      const body = refund(paymentId, 5.01);
      const res = await m.post(REFUND, body);
      assertShapeA(res, 400, 'INSUFFICIENT_BALANCE');
      assert.equal(res.body.error.metadata.available, 5);
      assert.equal(res.body.error.metadata.requested, 5.01);
      assert.equal(await countRefunds(gw(), m.merchant_id), 0);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 5, held: 95 });
      // The refund number stays free: once the balance covers it, the same request is accepted.
      await gw().paygate.services.wallets.topUp(m.merchant_id, 'INR', 1);
      const retry = await m.post(REFUND, body);
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 0, held: 100.01 });
    });

    it('validates every field in shape B and records nothing', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(100);
      const cases: [unknown, string[]][] = [
        [{}, ['body.merchant_refund_no:missing', 'body.money:missing', 'body.payment_id:missing']],
        [refund(paymentId, 1.001), ['body.money.amount:decimal_max_places']],
        [refund(paymentId, 0), ['body.money.amount:greater_than']],
        [refund(paymentId, -5), ['body.money.amount:greater_than']],
        [refund(paymentId, '5'), ['body.money.amount:float_type']],
        [
          refund(paymentId, 1, { merchant_refund_no: 'r'.repeat(37) }),
          ['body.merchant_refund_no:string_too_long'],
        ],
        [refund(paymentId, 1, { merchant_refund_no: '' }), ['body.merchant_refund_no:string_too_short']],
        [
          refund(paymentId, 1, { merchant_refund_no: 'rf\u0000x' }),
          ['body.merchant_refund_no:string_pattern_mismatch'],
        ],
        [
          refund(paymentId, 1, { merchant_refund_no: 'rf\u200bx' }),
          ['body.merchant_refund_no:string_pattern_mismatch'],
        ],
        [refund(paymentId, 1, { reason: 'r'.repeat(101) }), ['body.reason:string_too_long']],
        [refund(paymentId, 1, { callback_url: 'ftp://shop.example/cb' }), ['body.callback_url:url_scheme']],
        [{ ...refund(paymentId, 1), payment_id: 7 }, ['body.payment_id:string_type']],
      ];
      for (const [body, expected] of cases)
        assert.deepEqual(issues(await m.post(REFUND, body)), expected, JSON.stringify(body));
      assert.deepEqual(issues(await m.post(STATUS, {})), ['body.refund_id:missing']);
      // At the limits: 36 printable characters and a reason of 100 are taken.
      const ok = await m.post(
        REFUND,
        refund(paymentId, 1, { merchant_refund_no: 'r'.repeat(36), reason: 'x'.repeat(100) }),
      );
      assert.equal(ok.status, 200, ok.text);
      assert.equal(await countRefunds(gw(), m.merchant_id), 1);
      const currency = await m.post(REFUND, {
        ...refund(paymentId, 1),
        money: { amount: 1, currency: 'USD' },
      });
      assertShapeA(currency, 400, 'VALIDATION_INVALID_CURRENCY');
      assert.equal(await countRefunds(gw(), m.merchant_id), 1);
    });

    it('settles through the sandbox: SUCCESS pays the hold out to external:customer_refunds; final statuses never change', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(100);
      const created = await m.post(REFUND, refund(paymentId, 25));
      const refundId = created.body.refund_id;
      const done = await m.post(COMPLETE, { refund_id: refundId, status: 'SUCCESS' });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.status, 'SUCCESS');
      assert.match(done.body.utr, /^\d{12}$/);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 75, held: 0 });
      const status = await m.post(STATUS, { refund_id: refundId });
      assert.equal(status.body.status, 'SUCCESS');
      assert.equal(status.body.utr, done.body.utr);
      const journal = await gw()
        .database.db.selectFrom('ledger_entries')
        .select(['kind', 'account', 'amount'])
        .where('payment_id', '=', refundId)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        journal.map((e) => `${e.kind} ${e.account} ${Number(e.amount)}`),
        [
          'refund_hold available -2500',
          'refund_hold held 2500',
          'refund_success held -2500',
          'refund_success external:customer_refunds 2500',
        ],
      );
      for (const s of ['SUCCESS', 'FAILED'])
        assertShapeA(await m.post(COMPLETE, { refund_id: refundId, status: s }), 409, 'INVALID_STATE');
      assert.equal((await m.post(STATUS, { refund_id: refundId })).body.status, 'SUCCESS');
      // A SUCCESS refund still counts against the pay-in.
      assert.equal((await m.post(REFUND, refund(paymentId, 75.01))).body.error.metadata.refundable, 75);
      // The sandbox endpoint is for refunds of the merchant's own.
      const other = await paidMerchant(gw());
      const res = await gw().post(
        COMPLETE,
        { refund_id: refundId, status: 'FAILED' },
        { key: other.api_key },
      );
      assertShapeA(res, 404, 'PAYMENT_NOT_FOUND');
    });

    it('answers random refund numbers, reasons and amounts with 200, 400, 409 or 422, never a 5xx', async () => {
      const m = await paidMerchant(gw(), 1_000_000);
      const paymentId = await m.paidIn(1000);
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 })),
          fc.option(fc.string({ unit: 'binary', maxLength: 120 }), { nil: undefined }),
          fc.oneof(fc.double({ min: -10, max: 2000, noNaN: true }), fc.integer({ min: 1, max: 50 })),
          async (refundNo, reason, amount) => {
            const res = await m.post(REFUND, {
              payment_id: paymentId,
              money: { amount },
              merchant_refund_no: refundNo,
              ...(reason === undefined ? {} : { reason }),
            });
            assert.ok([200, 400, 409, 422].includes(res.status), `${res.status} ${res.text}`);
          },
        ),
        { numRuns: 150 },
      );
    });

    it('ledger verify sees a refund hold that does not match the wallet', async () => {
      const m = await paidMerchant(gw());
      const paymentId = await m.paidIn(10);
      assert.equal((await m.post(REFUND, refund(paymentId, 3))).status, 200);
      const db = gw().database.db;
      await db
        .updateTable('ledger_entries')
        .set({ amount: 299 })
        .where('merchant_id', '=', m.merchant_id)
        .where('kind', '=', 'refund_hold')
        .where('account', '=', 'held')
        .execute();
      const report = await gw().paygate.services.wallets.verify();
      assert.equal(report.ok, false);
      assert.ok(
        report.problems.some((p) => p.includes(m.merchant_id)),
        report.problems.join('\n'),
      );
      await db
        .updateTable('ledger_entries')
        .set({ amount: 300 })
        .where('merchant_id', '=', m.merchant_id)
        .where('kind', '=', 'refund_hold')
        .where('account', '=', 'held')
        .execute();
    });
  });
}
