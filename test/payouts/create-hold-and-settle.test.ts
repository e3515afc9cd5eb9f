/**
 * Payouts as a merchant sees them (docs/integration.md §3, §4, §6 and §8): validation of
 * every field, the balance check and hold, the PENDING → PROCESSING → SUCCESS | FAILED life with the
 * wallet at each step, sandbox completion, replays and status queries. Ledger clean after each.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Gateway, type Reply } from '../support/harness.ts';

const PAYOUT = '/payments/payout';
const STATUS = '/payments/payout_status';
const COMPLETE = '/sandbox/payout/complete';
const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

let seq = 0;
const orderNo = () => `po-${Date.now().toString(36)}-${++seq}`;
const payout = (amount: unknown = 10, extra: Record<string, unknown> = {}) => ({
  money: { amount, currency: 'INR' },
  merchant_order_no: orderNo(),
  receiver: { ...RECEIVER },
  ...extra,
});

function assertShapeA(res: Reply, status: number, errorCode: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.body.status, false);
  assert.equal(res.body.error.code, status);
  assert.equal(res.body.error.error_code, errorCode);
  assert.ok(res.body.error.message.length > 0);
  assert.equal(res.body.error.metadata.request_id, res.headers['x-request-id']);
}

function issues(res: Reply): string[] {
  assert.equal(res.status, 422, res.text);
  assert.deepEqual(Object.keys(res.body), ['detail']);
  for (const d of res.body.detail) assert.deepEqual(Object.keys(d).sort(), ['loc', 'msg', 'type']);
  return res.body.detail.map((d: any) => `${d.loc.join('.')}:${d.type}`).sort();
}

/** A fresh sandbox merchant funded with `paise`, and helpers bound to its key. */
async function fundedMerchant(g: Gateway, paise: number) {
  const m = await g.newMerchant();
  if (paise > 0) await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', paise);
  const post = (path: string, body: unknown) => g.post(path, body, { key: m.api_key });
  const balance = async () => {
    const res = await post('/wallet/balance', {});
    assert.equal(res.status, 200);
    return res.body as { currency: string; available: number; held: number };
  };
  return { ...m, post, balance };
}

async function count(
  g: Gateway,
  table: 'transactions' | 'ledger_entries' | 'transaction_events',
  column: 'merchant_id' | 'payment_id',
  value: string,
) {
  const row = await g.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where(column, '=', value)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const kind of DATABASES) {
  describe(`payouts on ${kind}`, { skip: await skipFor(kind) }, () => {
    // No worker here: payouts stay PENDING with their amount held until a test settles them.
    const gw = useGateway(kind);

    afterEach(async () => {
      assert.deepEqual((await gw().paygate.services.wallets.verify()).problems, []);
    });

    it('creates a payout: PENDING in the documented creation shape, the amount moved from available to held', async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const res = await m.post(PAYOUT, payout(250.5));
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'amount',
        'currency',
        'message',
        'payment_id',
        'status',
        'success',
      ]);
      assert.equal(res.body.success, true);
      assert.match(res.body.payment_id, /^[A-Za-z0-9]{32}$/);
      assert.equal(res.body.amount, 250.5);
      assert.equal(res.body.currency, 'INR');
      assert.equal(res.body.status, 'PENDING');
      assert.ok(res.body.message.length > 0);
      assert.equal(res.headers['idempotent-replayed'], undefined);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 749.5, held: 250.5 });
      const status = await m.post(STATUS, { payment_id: res.body.payment_id });
      assert.deepEqual(status.body, {
        status: 'PENDING',
        money: { amount: 250.5, currency: 'INR' },
        channel_txn_id: '',
        utr: '',
      });
      assert.deepEqual(Object.keys(status.body), ['status', 'money', 'channel_txn_id', 'utr']);
    });

    it('refuses a payout above the available balance with 400 INSUFFICIENT_BALANCE and records nothing', async () => {
      const m = await fundedMerchant(gw(), 10_000);
      const body = payout(100.01);
      const journalsBefore = (await gw().paygate.services.wallets.verify()).journals;
      const res = await m.post(PAYOUT, body);
      assertShapeA(res, 400, 'INSUFFICIENT_BALANCE');
      assert.equal(res.body.error.metadata.available, 100);
      assert.equal(res.body.error.metadata.requested, 100.01);
      assert.equal(await count(gw(), 'transactions', 'merchant_id', m.merchant_id), 0);
      assert.equal((await gw().paygate.services.wallets.verify()).journals, journalsBefore);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 100, held: 0 });

      // The order number stays free: fund the missing paisa and retry it.
      await gw().paygate.services.wallets.topUp(m.merchant_id, 'INR', 1);
      const retry = await m.post(PAYOUT, body);
      assert.equal(retry.status, 200, retry.text);
      assert.equal(retry.headers['idempotent-replayed'], undefined);
      assert.equal(retry.body.status, 'PENDING');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 0, held: 100.01 });
      // With nothing left available, a repeat of the accepted request is still a replay, not a refusal.
      const repeat = await m.post(PAYOUT, body);
      assert.equal(repeat.status, 200);
      assert.equal(repeat.headers['idempotent-replayed'], 'true');
      assert.equal(repeat.text, retry.text);

      // A merchant that never had a wallet has 0 available.
      const empty = await fundedMerchant(gw(), 0);
      const none = await empty.post(PAYOUT, payout(0.01));
      assertShapeA(none, 400, 'INSUFFICIENT_BALANCE');
      assert.equal(none.body.error.metadata.available, 0);
      assert.equal(none.body.error.metadata.requested, 0.01);
    });

    it('keeps amounts exact to the paisa: 0.01, 999.99 and 1000.10 from 2000.10', async () => {
      const m = await fundedMerchant(gw(), 200_010);
      const ids: string[] = [];
      for (const amount of [0.01, 999.99, 1000.1]) {
        const res = await m.post(PAYOUT, payout(amount));
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.amount, amount);
        ids.push(res.body.payment_id);
        assert.equal((await m.post(STATUS, { payment_id: res.body.payment_id })).body.money.amount, amount);
      }
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 0, held: 2000.1 });
      assertShapeA(await m.post(PAYOUT, payout(0.01)), 400, 'INSUFFICIENT_BALANCE');
      for (const payment_id of ids)
        assert.equal((await m.post(COMPLETE, { payment_id, status: 'SUCCESS' })).status, 200);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 0, held: 0 });
    });

    it('validates the receiver: name 1–100, account_no 9–18 digits, ifsc_code ^[A-Z]{4}0[A-Z0-9]{6}$', async () => {
      const m = await fundedMerchant(gw(), 1_000_000);
      const withReceiver = (receiver: Record<string, unknown>) =>
        m.post(PAYOUT, { ...payout(1), receiver: { ...RECEIVER, ...receiver } });
      for (const ok of [
        { name: 'A' },
        { name: 'n'.repeat(100) },
        { account_no: '123456789' },
        { account_no: '123456789012345678' },
        { ifsc_code: 'SBIN0ABC123' },
        { ifsc_code: 'ABCD0000000' },
      ]) {
        const res = await withReceiver(ok);
        assert.equal(res.status, 200, `${JSON.stringify(ok)}: ${res.text}`);
      }
      const cases: [Record<string, unknown>, string][] = [
        [{ name: '' }, 'body.receiver.name:string_too_short'],
        [{ name: 'n'.repeat(101) }, 'body.receiver.name:string_too_long'],
        [{ name: 7 }, 'body.receiver.name:string_type'],
        [{ account_no: '12345678' }, 'body.receiver.account_no:string_pattern_mismatch'],
        [{ account_no: '1234567890123456789' }, 'body.receiver.account_no:string_pattern_mismatch'],
        [{ account_no: '12345678a' }, 'body.receiver.account_no:string_pattern_mismatch'],
        [{ account_no: ' 123456789' }, 'body.receiver.account_no:string_pattern_mismatch'],
        [{ account_no: 123456789 }, 'body.receiver.account_no:string_type'],
        [{ ifsc_code: 'hdfc0001234' }, 'body.receiver.ifsc_code:string_pattern_mismatch'],
        [{ ifsc_code: 'HDFC1001234' }, 'body.receiver.ifsc_code:string_pattern_mismatch'],
        [{ ifsc_code: 'HDFC000123' }, 'body.receiver.ifsc_code:string_pattern_mismatch'],
        [{ ifsc_code: 'HDFC00012345' }, 'body.receiver.ifsc_code:string_pattern_mismatch'],
        [{ ifsc_code: 'HDF00001234' }, 'body.receiver.ifsc_code:string_pattern_mismatch'],
        [{ ifsc_code: 'HDFC000123a' }, 'body.receiver.ifsc_code:string_pattern_mismatch'],
      ];
      for (const [receiver, expected] of cases) {
        assert.deepEqual(issues(await withReceiver(receiver)), [expected], JSON.stringify(receiver));
      }
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), receiver: undefined })), [
        'body.receiver:missing',
      ]);
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), receiver: 'Asha' })), [
        'body.receiver:model_type',
      ]);
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), receiver: {} })), [
        'body.receiver.account_no:missing',
        'body.receiver.ifsc_code:missing',
        'body.receiver.name:missing',
      ]);
    });

    it('validates the order number (1–32), the amount, the currency, callback_url and user_details', async () => {
      const m = await fundedMerchant(gw(), 1_000_000);
      const stem = orderNo();
      assert.equal(
        (await m.post(PAYOUT, { ...payout(1), merchant_order_no: stem + 'x'.repeat(32 - stem.length) }))
          .status,
        200,
      );
      assert.equal((await m.post(PAYOUT, { ...payout(1), merchant_order_no: '1' })).status, 200);
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), merchant_order_no: 'x'.repeat(33) })), [
        'body.merchant_order_no:string_too_long',
      ]);
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), merchant_order_no: '' })), [
        'body.merchant_order_no:string_too_short',
      ]);
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), merchant_order_no: undefined })), [
        'body.merchant_order_no:missing',
      ]);
      for (const [amount, type] of [
        [0, 'greater_than'],
        [-1, 'greater_than'],
        [10000000.01, 'less_than_equal'],
        [1.234, 'decimal_max_places'],
        ['10', 'float_type'],
        [null, 'float_type'],
      ] as const) {
        assert.deepEqual(
          issues(await m.post(PAYOUT, payout(amount))),
          [`body.money.amount:${type}`],
          String(amount),
        );
      }
      assert.deepEqual(issues(await m.post(PAYOUT, { ...payout(1), money: undefined })), [
        'body.money:missing',
      ]);
      const usd = await m.post(PAYOUT, { ...payout(1), money: { amount: 1, currency: 'USD' } });
      assertShapeA(usd, 400, 'VALIDATION_INVALID_CURRENCY');
      assert.deepEqual(usd.body.error.metadata.supported_currencies, ['INR']);
      const noCurrency = await m.post(PAYOUT, { ...payout(1), money: { amount: 1 } });
      assert.equal(noCurrency.body.currency, 'INR');
      assert.deepEqual(
        issues(await m.post(PAYOUT, payout(1, { callback_url: 'http://merchant.example.com/cb' }))),
        ['body.callback_url:url_scheme'],
      );
      assert.deepEqual(
        issues(await m.post(PAYOUT, payout(1, { callback_url: `https://m.example.com/${'c'.repeat(500)}` }))),
        ['body.callback_url:string_too_long'],
      );
      assert.equal(
        (await m.post(PAYOUT, payout(1, { callback_url: 'https://merchant.example.com/cb' }))).status,
        200,
      );
      assert.deepEqual(
        issues(
          await m.post(PAYOUT, payout(1, { user_details: { email: 'nope', phone_number: '1'.repeat(21) } })),
        ),
        ['body.user_details.email:value_error', 'body.user_details.phone_number:string_too_long'],
      );
      assert.equal(
        (
          await m.post(
            PAYOUT,
            payout(1, { user_details: { email: 'a@example.com', user_name: 'Asha' }, extra: [1] }),
          )
        ).status,
        200,
      );
      // Every violation at once.
      assert.deepEqual(
        issues(
          await m.post(PAYOUT, {
            money: { amount: 0 },
            merchant_order_no: '',
            receiver: { name: '', account_no: '1', ifsc_code: 'x' },
          }),
        ),
        [
          'body.merchant_order_no:string_too_short',
          'body.money.amount:greater_than',
          'body.receiver.account_no:string_pattern_mismatch',
          'body.receiver.ifsc_code:string_pattern_mismatch',
          'body.receiver.name:string_too_short',
        ],
      );
    });

    it('replays a repeated order number with the same body and refuses it with another body', async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const body = payout(10);
      const first = await m.post(PAYOUT, body);
      assert.equal(first.status, 200);
      const again = await m.post(PAYOUT, body);
      assert.equal(again.status, 200);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.text, first.text);
      for (const changed of [
        { ...body, money: { amount: 11, currency: 'INR' } },
        { ...body, receiver: { ...RECEIVER, account_no: '999999999' } },
        { ...body, receiver: { ...RECEIVER, name: 'Someone Else' } },
        { ...body, callback_url: 'https://merchant.example.com/cb' },
      ]) {
        assertShapeA(await m.post(PAYOUT, changed), 409, 'DUPLICATE_ORDER_NO');
      }
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 990, held: 10 });
      // Still the creation response after the payout is final.
      assert.equal(
        (await m.post(COMPLETE, { payment_id: first.body.payment_id, status: 'SUCCESS' })).status,
        200,
      );
      const late = await m.post(PAYOUT, body);
      assert.equal(late.text, first.text);
      assert.equal(late.body.status, 'PENDING');
      // Payouts and pay-ins have separate order numbers.
      const payin = await m.post('/payments/onsite/payin', {
        money: { amount: 10 },
        merchant_order_no: body.merchant_order_no,
      });
      assert.equal(payin.status, 200, payin.text);
      assert.equal(await count(gw(), 'transactions', 'merchant_id', m.merchant_id), 2);
    });

    it('creates one payout and one hold for sixteen concurrent repeats of one order number', async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const body = payout(25);
      const replies = await Promise.all(Array.from({ length: 16 }, () => m.post(PAYOUT, body)));
      assert.deepEqual(
        replies.map((r) => r.status),
        Array(16).fill(200),
      );
      assert.equal(new Set(replies.map((r) => r.body.payment_id)).size, 1);
      assert.equal(replies.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 15);
      assert.equal(await count(gw(), 'transactions', 'merchant_id', m.merchant_id), 1);
      const holds = await gw()
        .database.db.selectFrom('ledger_entries')
        .select('journal_id')
        .where('payment_id', '=', replies[0]?.body.payment_id)
        .where('kind', '=', 'payout_hold')
        .execute();
      assert.equal(new Set(holds.map((h) => h.journal_id)).size, 1);
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 975, held: 25 });
    });

    it('takes concurrent payouts of two wallets together: each holds only what it covers', async () => {
      const a = await fundedMerchant(gw(), 2_500);
      const b = await fundedMerchant(gw(), 500);
      const c = await fundedMerchant(gw(), 10_000);
      // Sent at once, these are written in one database transaction (the payout write batch).
      const repeated = payout(10);
      const original = payout(10);
      const [a1, a2, a3, b1, b2, c1, c2] = await Promise.all([
        a.post(PAYOUT, payout(10)),
        a.post(PAYOUT, payout(10)),
        a.post(PAYOUT, payout(10)),
        b.post(PAYOUT, repeated),
        b.post(PAYOUT, repeated),
        c.post(PAYOUT, original),
        c.post(PAYOUT, { ...original, money: { amount: 11, currency: 'INR' } }),
      ]);
      const forA = [a1, a2, a3] as Reply[];
      assert.deepEqual(forA.map((r) => r.status).sort(), [200, 200, 400]);
      const refused = forA.find((r) => r.status === 400) as Reply;
      assertShapeA(refused, 400, 'INSUFFICIENT_BALANCE');
      // What was left after the two payouts accepted before it.
      assert.equal(refused.body.error.metadata.available, 5);
      assert.equal(refused.body.error.metadata.requested, 10);
      assert.deepEqual(await a.balance(), { currency: 'INR', available: 5, held: 20 });
      assert.equal(await count(gw(), 'transactions', 'merchant_id', a.merchant_id), 2);

      // Both copies of a refused request are refused: the repeat is not taken for a replay of it.
      for (const r of [b1, b2] as Reply[]) {
        assertShapeA(r, 400, 'INSUFFICIENT_BALANCE');
        assert.equal(r.body.error.metadata.available, 5);
      }
      assert.equal(await count(gw(), 'transactions', 'merchant_id', b.merchant_id), 0);
      assert.deepEqual(await b.balance(), { currency: 'INR', available: 5, held: 0 });

      // Another body under the same order number, in the same batch: one is created, the other is a conflict.
      const forC = [c1, c2] as Reply[];
      assert.deepEqual(forC.map((r) => r.status).sort(), [200, 409]);
      const created = forC.find((r) => r.status === 200) as Reply;
      const conflict = forC.find((r) => r.status === 409) as Reply;
      assertShapeA(conflict, 409, 'DUPLICATE_ORDER_NO');
      assert.equal(conflict.body.error.metadata.payment_id, created.body.payment_id);
      assert.equal(await count(gw(), 'transactions', 'merchant_id', c.merchant_id), 1);
    });

    it('settles a payout at once through /sandbox/payout/complete, and answers 409 after', async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const ok = await m.post(PAYOUT, payout(300));
      const bad = await m.post(PAYOUT, payout(200));
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 500, held: 500 });

      const success = await m.post(COMPLETE, { payment_id: ok.body.payment_id, status: 'SUCCESS' });
      assert.equal(success.status, 200, success.text);
      assert.equal(success.body.payment_id, ok.body.payment_id);
      assert.equal(success.body.status, 'SUCCESS');
      assert.match(success.body.utr, /^\d{12}$/);
      assert.ok(success.body.channel_txn_id.length > 0);
      assert.deepEqual(success.body.money, { amount: 300, currency: 'INR' });
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 500, held: 200 });

      const failure = await m.post(COMPLETE, { payment_id: bad.body.payment_id, status: 'FAILED' });
      assert.equal(failure.body.status, 'FAILED');
      assert.equal(failure.body.utr, '');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 700, held: 0 });

      for (const [id, status] of [
        [ok.body.payment_id, 'FAILED'],
        [ok.body.payment_id, 'SUCCESS'],
        [bad.body.payment_id, 'SUCCESS'],
      ]) {
        assertShapeA(await m.post(COMPLETE, { payment_id: id, status }), 409, 'INVALID_STATE');
      }
      const final = await m.post(STATUS, { payment_id: ok.body.payment_id });
      assert.deepEqual(final.body, {
        status: 'SUCCESS',
        money: { amount: 300, currency: 'INR' },
        channel_txn_id: success.body.channel_txn_id,
        utr: success.body.utr,
      });
      assert.equal((await m.post(STATUS, { payment_id: bad.body.payment_id })).body.status, 'FAILED');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 700, held: 0 });
      assert.equal(await count(gw(), 'transaction_events', 'payment_id', ok.body.payment_id), 1);
      assert.equal(await count(gw(), 'transaction_events', 'payment_id', bad.body.payment_id), 1);
    });

    it("answers payout_status 404 for an unknown id, another merchant's payout and a pay-in's id", async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const other = await fundedMerchant(gw(), 100_000);
      const theirs = await other.post(PAYOUT, payout(5));
      const payin = await m.post('/payments/offsite/payin', {
        money: { amount: 5 },
        merchant_order_no: orderNo(),
      });
      for (const payment_id of ['Z'.repeat(32), theirs.body.payment_id, payin.body.payment_id, '', 'short']) {
        const res = await m.post(STATUS, { payment_id });
        if (payment_id === '') assert.deepEqual(issues(res), ['body.payment_id:string_too_short']);
        else assertShapeA(res, 404, 'PAYMENT_NOT_FOUND');
      }
      assertShapeA(
        await m.post(COMPLETE, { payment_id: theirs.body.payment_id, status: 'SUCCESS' }),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assertShapeA(
        await m.post(COMPLETE, { payment_id: payin.body.payment_id, status: 'SUCCESS' }),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assert.deepEqual(issues(await m.post(STATUS, {})), ['body.payment_id:missing']);
      assert.equal((await other.post(STATUS, { payment_id: theirs.body.payment_id })).body.status, 'PENDING');
      assert.deepEqual(await other.balance(), { currency: 'INR', available: 995, held: 5 });
    });

    it('answers a live merchant 403 LIVE_CHANNEL_NOT_CONFIGURED and 403 SANDBOX_ONLY, and holds nothing', async () => {
      const live = await gw().newMerchant({ live: true });
      await gw().paygate.services.wallets.topUp(live.merchant_id, 'INR', 100_000);
      assertShapeA(
        await gw().post(PAYOUT, payout(10), { key: live.api_key }),
        403,
        'LIVE_CHANNEL_NOT_CONFIGURED',
      );
      assertShapeA(
        await gw().post(COMPLETE, { payment_id: 'Q'.repeat(32), status: 'SUCCESS' }, { key: live.api_key }),
        403,
        'SANDBOX_ONLY',
      );
      const b = await gw().post('/wallet/balance', {}, { key: live.api_key });
      assert.deepEqual(b.body, { currency: 'INR', available: 1000, held: 0 });
    });
  });

  describe(`payout settlement by the worker on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, {
      worker: true,
      env: { SANDBOX_PAYOUT_SETTLE_MS: '800', WORKER_POLL_MS: '100' },
    });

    afterEach(async () => {
      assert.deepEqual((await gw().paygate.services.wallets.verify()).problems, []);
    });

    /** Polls the status until it is final, returning every status seen in order (repeats collapsed). */
    async function follow(
      post: (path: string, body: unknown) => Promise<Reply>,
      paymentId: string,
    ): Promise<{ seen: string[]; last: any }> {
      const seen: string[] = [];
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await post(STATUS, { payment_id: paymentId });
        assert.equal(res.status, 200);
        if (seen.at(-1) !== res.body.status) seen.push(res.body.status);
        if (res.body.status === 'SUCCESS' || res.body.status === 'FAILED' || Date.now() > deadline)
          return { seen, last: res.body };
        await new Promise((r) => setTimeout(r, 25));
      }
    }

    const ORDER = ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'];
    const inOrder = (seen: string[]) =>
      seen.every((s, i) => i === 0 || ORDER.indexOf(s) > ORDER.indexOf(seen[i - 1] ?? ''));

    it('moves a payout PENDING → PROCESSING → SUCCESS, sets the utr and pays the held amount out', async () => {
      const m = await fundedMerchant(gw(), 500_000);
      const created = await m.post(PAYOUT, payout(1234.56));
      assert.equal(created.body.status, 'PENDING');
      const { seen, last } = await follow(m.post, created.body.payment_id);
      assert.ok(inOrder(seen), seen.join(' → '));
      assert.ok(seen.includes('PROCESSING'), seen.join(' → '));
      assert.equal(last.status, 'SUCCESS');
      assert.match(last.utr, /^\d{12}$/);
      assert.ok(last.channel_txn_id.length > 0);
      assert.deepEqual(last.money, { amount: 1234.56, currency: 'INR' });
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 3765.44, held: 0 });
      assertShapeA(
        await m.post(COMPLETE, { payment_id: created.body.payment_id, status: 'FAILED' }),
        409,
        'INVALID_STATE',
      );
      const events = await gw()
        .database.db.selectFrom('transaction_events')
        .select(['status', 'source'])
        .where('payment_id', '=', created.body.payment_id)
        .execute();
      assert.deepEqual(events, [{ status: 'SUCCESS', source: 'channel:sandbox' }]);
    });

    it('fails a payout to an account ending in 0000 and returns the held amount to available', async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const created = await m.post(
        PAYOUT,
        payout(400, { receiver: { ...RECEIVER, account_no: '5555550000' } }),
      );
      assert.equal(created.body.status, 'PENDING');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 600, held: 400 });
      const { seen, last } = await follow(m.post, created.body.payment_id);
      assert.ok(inOrder(seen), seen.join(' → '));
      assert.ok(seen.includes('PROCESSING'), seen.join(' → '));
      assert.equal(last.status, 'FAILED');
      assert.equal(last.utr, '');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 1000, held: 0 });
      // Final is final: nothing changes while the worker keeps polling.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await m.post(STATUS, { payment_id: created.body.payment_id })).body.status, 'FAILED');
      assert.equal(await count(gw(), 'transaction_events', 'payment_id', created.body.payment_id), 1);
    });

    it('lets /sandbox/payout/complete win over the worker, once', async () => {
      const m = await fundedMerchant(gw(), 100_000);
      const created = await m.post(PAYOUT, payout(50));
      const done = await m.post(COMPLETE, { payment_id: created.body.payment_id, status: 'FAILED' });
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.status, 'FAILED');
      // Longer than SANDBOX_PAYOUT_SETTLE_MS: the worker must not settle it a second time.
      await new Promise((r) => setTimeout(r, 1200));
      assert.equal((await m.post(STATUS, { payment_id: created.body.payment_id })).body.status, 'FAILED');
      assert.deepEqual(await m.balance(), { currency: 'INR', available: 1000, held: 0 });
      assert.equal(await count(gw(), 'transaction_events', 'payment_id', created.body.payment_id), 1);
    });

    it('settles many payouts, each exactly once, with the balances adding up', async () => {
      const m = await fundedMerchant(gw(), 1_000_000);
      const created = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          m.post(
            PAYOUT,
            payout(10 + i, {
              receiver: { ...RECEIVER, account_no: i % 4 === 0 ? '1110000' + '0000' : RECEIVER.account_no },
            }),
          ),
        ),
      );
      assert.ok(created.every((r) => r.status === 200));
      const finals = await Promise.all(created.map((r) => follow(m.post, r.body.payment_id)));
      let paid = 0;
      finals.forEach(({ last }, i) => {
        assert.equal(last.status, i % 4 === 0 ? 'FAILED' : 'SUCCESS');
        if (last.status === 'SUCCESS') paid += 10 + i;
      });
      const b = await m.balance();
      assert.equal(b.held, 0);
      assert.equal(Math.round(b.available * 100), 1_000_000 - paid * 100);
      for (const r of created)
        assert.equal(await count(gw(), 'transaction_events', 'payment_id', r.body.payment_id), 1);
    });
  });
}
