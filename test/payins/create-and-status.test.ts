/**
 * Pay-ins as a merchant sees them (docs/integration.md §2, §4, §6 and §8): the three creation
 * flows with every field, limit and error, order-number replays, status queries, sandbox
 * settlement with the fee, and expiry. Every scenario ends with a clean ledger.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Gateway, type Reply } from '../support/harness.ts';
import { readQrPng } from '../support/qr-reader.ts';

const PUBLIC_URL = 'https://pay.example.test';
const FLOWS = [
  { flow: 'onsite', path: '/payments/onsite/payin', maxOrderNo: 32 },
  { flow: 'offsite', path: '/payments/offsite/payin', maxOrderNo: 36 },
  { flow: 'p2p', path: '/payments/p2p/payin', maxOrderNo: 36 },
] as const;
const ONSITE = '/payments/onsite/payin';
const OFFSITE = '/payments/offsite/payin';
const P2P = '/payments/p2p/payin';

let seq = 0;
/** A fresh order number per request, so tests never collide on the unique order number. */
const orderNo = (prefix = 'ord') => `${prefix}-${Date.now().toString(36)}-${++seq}`;
const valid = (extra: Record<string, unknown> = {}) => ({
  money: { amount: 500, currency: 'INR' },
  merchant_order_no: orderNo(),
  ...extra,
});

function assertShapeA(res: Reply, status: number, errorCode: string): void {
  assert.equal(res.status, status, res.text);
  assert.deepEqual(Object.keys(res.body).sort(), ['error', 'status']);
  assert.equal(res.body.status, false);
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'error_code', 'message', 'metadata']);
  assert.equal(res.body.error.code, status);
  assert.equal(res.body.error.error_code, errorCode);
  assert.ok(typeof res.body.error.message === 'string' && res.body.error.message.length > 0);
  assert.equal(res.body.error.metadata.request_id, res.headers['x-request-id']);
}

/** The shape-B entries of a 422 as `loc:type` strings, sorted; checks every entry's shape on the way. */
function issues(res: Reply): string[] {
  assert.equal(res.status, 422, res.text);
  assert.deepEqual(Object.keys(res.body), ['detail']);
  assert.ok(Array.isArray(res.body.detail) && res.body.detail.length > 0);
  for (const d of res.body.detail) {
    assert.deepEqual(Object.keys(d).sort(), ['loc', 'msg', 'type']);
    assert.ok(d.loc.every((p: unknown) => typeof p === 'string'));
    assert.ok(typeof d.msg === 'string' && d.msg.length > 0);
  }
  return res.body.detail.map((d: any) => `${d.loc.join('.')}:${d.type}`).sort();
}

async function balance(g: Gateway, key: string): Promise<{ available: number; held: number }> {
  const res = await g.post('/wallet/balance', {}, { key });
  assert.equal(res.status, 200);
  return res.body;
}

for (const kind of DATABASES) {
  describe(`pay-ins on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, { env: { PUBLIC_URL: `${PUBLIC_URL}/`, PAYIN_FEE_BPS: '250' } });

    afterEach(async () => {
      const report = await gw().paygate.services.wallets.verify();
      assert.deepEqual(report.problems, []);
    });

    for (const { flow, path } of FLOWS.filter((f) => f.flow !== 'offsite')) {
      it(`answers the ${flow} creation with exactly the documented fields and a payment_url under PUBLIC_URL`, async () => {
        const res = await gw().post(path, valid());
        assert.equal(res.status, 200, res.text);
        assert.match(String(res.headers['content-type']), /^application\/json/);
        assert.equal(res.headers['idempotent-replayed'], undefined);
        assert.equal(res.headers.deprecation, undefined);
        assert.deepEqual(Object.keys(res.body).sort(), [
          'amount',
          'currency',
          'message',
          'payment_id',
          'payment_url',
          'success',
        ]);
        assert.equal(res.body.success, true);
        assert.match(res.body.payment_id, /^[A-Za-z0-9]{32}$/);
        assert.equal(
          res.body.payment_url,
          `${PUBLIC_URL}/${flow === 'onsite' ? 'pay' : 'p2p'}/${res.body.payment_id}`,
        );
        assert.equal(res.body.amount, 500);
        assert.equal(res.body.currency, 'INR');
        assert.ok(typeof res.body.message === 'string' && res.body.message.length > 0);
      });
    }

    it('answers the offsite creation with a UPI cashier string, its QR code, the cashier URL and four deep links', async () => {
      const order = `ord/${seq} & more=yes`;
      const res = await gw().post(OFFSITE, {
        money: { amount: 500, currency: 'INR' },
        merchant_order_no: order,
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'amount',
        'currency',
        'data',
        'message',
        'payment_id',
        'success',
      ]);
      assert.deepEqual(Object.keys(res.body.data).sort(), [
        'cashier_string',
        'cashier_url',
        'deep_links',
        'qrCode',
      ]);
      const id = res.body.payment_id;
      assert.match(id, /^[A-Za-z0-9]{32}$/);
      assert.equal(res.body.success, true);
      assert.equal(res.body.amount, 500);
      assert.equal(res.body.currency, 'INR');
      assert.ok(res.body.message.length > 0);

      const merchant = await gw().paygate.services.merchants.get(gw().merchant.merchant_id);
      const e = encodeURIComponent;
      const query = `pa=${e(merchant.vpa)}&pn=${e('Test Shop')}&am=500.00&cu=INR&tr=${id}&tn=${e(order)}`;
      assert.equal(res.body.data.cashier_string, `upi://pay?${query}`);
      assert.equal(new URL(res.body.data.cashier_string).searchParams.get('tn'), order);
      assert.equal(res.body.data.cashier_url, `${PUBLIC_URL}/cashier/${id}`);
      assert.deepEqual(res.body.data.deep_links, {
        upi: `upi://pay?${query}`,
        gpay: `tez://upi/pay?${query}`,
        phonepe: `phonepe://pay?${query}`,
        paytm: `paytmmp://pay?${query}`,
      });

      const [prefix, base64] = res.body.data.qrCode.split(',');
      assert.equal(prefix, 'data:image/png;base64');
      const image = readQrPng(Buffer.from(base64, 'base64'));
      assert.equal(image.width, image.height);
      assert.equal(image.text, res.body.data.cashier_string, 'the QR code reads as the cashier string');
    });

    it('writes amounts to the paisa in the UPI string and answers them as plain JSON numbers', async () => {
      for (const [amount, am] of [
        [0.01, '0.01'],
        [500.5, '500.50'],
        [999.99, '999.99'],
        [1000.1, '1000.10'],
        [10000000, '10000000.00'],
      ] as const) {
        const res = await gw().post(OFFSITE, { money: { amount }, merchant_order_no: orderNo() });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.amount, amount);
        assert.equal(new URL(res.body.data.cashier_string).searchParams.get('am'), am);
        const status = await gw().post('/payments/payin_status', { payment_id: res.body.payment_id });
        assert.equal(status.body.money.amount, amount);
        assert.equal(status.text.includes(`"amount":${amount}`), true, status.text);
      }
    });

    for (const { flow, path, maxOrderNo } of FLOWS) {
      it(`validates the ${flow} amount: > 0, ≤ MAX_AMOUNT, ≤ 2 decimals, a JSON number`, async () => {
        const cases: [unknown, string][] = [
          [0, 'greater_than'],
          [-5, 'greater_than'],
          [10000000.01, 'less_than_equal'],
          [1e12, 'less_than_equal'],
          [1.001, 'decimal_max_places'],
          [0.005, 'decimal_max_places'],
          ['500', 'float_type'],
          [null, 'float_type'],
          [true, 'float_type'],
          [[500], 'float_type'],
        ];
        for (const [amount, type] of cases) {
          const res = await gw().post(path, {
            money: { amount, currency: 'INR' },
            merchant_order_no: orderNo(),
          });
          assert.deepEqual(issues(res), [`body.money.amount:${type}`], `amount ${JSON.stringify(amount)}`);
        }
        assert.deepEqual(issues(await gw().post(path, { money: {}, merchant_order_no: orderNo() })), [
          'body.money.amount:missing',
        ]);
        assert.deepEqual(issues(await gw().post(path, { merchant_order_no: orderNo() })), [
          'body.money:missing',
        ]);
        assert.deepEqual(issues(await gw().post(path, { money: 500, merchant_order_no: orderNo() })), [
          'body.money:model_type',
        ]);
        for (const amount of [0.01, 10000000, 12.3]) {
          assert.equal(
            (await gw().post(path, { money: { amount }, merchant_order_no: orderNo() })).status,
            200,
            `amount ${amount}`,
          );
        }
      });

      it(`defaults the ${flow} currency to INR and refuses others with 400 VALIDATION_INVALID_CURRENCY`, async () => {
        const omitted = await gw().post(path, { money: { amount: 10 }, merchant_order_no: orderNo() });
        assert.equal(omitted.status, 200);
        assert.equal(omitted.body.currency, 'INR');
        const nulled = await gw().post(path, {
          money: { amount: 10, currency: null },
          merchant_order_no: orderNo(),
        });
        assert.equal(nulled.body.currency, 'INR');
        for (const currency of ['USD', 'inr', '']) {
          const res = await gw().post(path, {
            money: { amount: 10, currency },
            merchant_order_no: orderNo(),
          });
          assertShapeA(res, 400, 'VALIDATION_INVALID_CURRENCY');
          assert.deepEqual(res.body.error.metadata.supported_currencies, ['INR']);
        }
        assert.deepEqual(
          issues(
            await gw().post(path, { money: { amount: 10, currency: 356 }, merchant_order_no: orderNo() }),
          ),
          ['body.money.currency:string_type'],
        );
      });

      it(`accepts a ${flow} merchant_order_no of 1 to ${maxOrderNo} characters`, async () => {
        const stem = orderNo('b');
        const longest = stem + 'x'.repeat(maxOrderNo - stem.length);
        assert.equal(
          (await gw().post(path, { money: { amount: 1 }, merchant_order_no: longest })).status,
          200,
        );
        const single = String(FLOWS.findIndex((f) => f.flow === flow) + 1);
        assert.equal(
          (await gw().post(path, { money: { amount: 1 }, merchant_order_no: single })).status,
          200,
        );
        assert.deepEqual(
          issues(await gw().post(path, { money: { amount: 1 }, merchant_order_no: `${longest}y` })),
          ['body.merchant_order_no:string_too_long'],
        );
        assert.deepEqual(issues(await gw().post(path, { money: { amount: 1 }, merchant_order_no: '' })), [
          'body.merchant_order_no:string_too_short',
        ]);
        assert.deepEqual(issues(await gw().post(path, { money: { amount: 1 } })), [
          'body.merchant_order_no:missing',
        ]);
        assert.deepEqual(issues(await gw().post(path, { money: { amount: 1 }, merchant_order_no: 12345 })), [
          'body.merchant_order_no:string_type',
        ]);
      });

      it(`validates the ${flow} callback_url: https only, at most 512 characters, a real URL`, async () => {
        const base = 'https://merchant.example.com/cb/';
        const longest = base + 'a'.repeat(512 - base.length);
        assert.equal((await gw().post(path, valid({ callback_url: longest }))).status, 200);
        assert.equal((await gw().post(path, valid({ callback_url: null }))).status, 200);
        assert.deepEqual(issues(await gw().post(path, valid({ callback_url: `${longest}a` }))), [
          'body.callback_url:string_too_long',
        ]);
        assert.deepEqual(
          issues(await gw().post(path, valid({ callback_url: 'http://merchant.example.com/cb' }))),
          ['body.callback_url:url_scheme'],
        );
        assert.deepEqual(
          issues(await gw().post(path, valid({ callback_url: 'ftp://merchant.example.com/cb' }))),
          ['body.callback_url:url_scheme'],
        );
        for (const bad of ['not a url', 'https://', 'merchant.example.com/cb']) {
          assert.deepEqual(
            issues(await gw().post(path, valid({ callback_url: bad }))),
            ['body.callback_url:value_error'],
            bad,
          );
        }
        assert.deepEqual(issues(await gw().post(path, valid({ callback_url: 42 }))), [
          'body.callback_url:string_type',
        ]);
      });

      it(`validates the ${flow} user_details: phone_number ≤ 20, user_name ≤ 100, email ≤ 254 and valid`, async () => {
        const local = 'a'.repeat(64);
        const email254 = `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
        assert.equal(email254.length, 254);
        const ok = await gw().post(
          path,
          valid({
            user_details: { phone_number: '9'.repeat(20), user_name: 'n'.repeat(100), email: email254 },
          }),
        );
        assert.equal(ok.status, 200, ok.text);
        assert.equal((await gw().post(path, valid({ user_details: null }))).status, 200);
        assert.equal((await gw().post(path, valid({ user_details: {} }))).status, 200);
        const tooLong = await gw().post(
          path,
          valid({
            user_details: {
              phone_number: '9'.repeat(21),
              user_name: 'n'.repeat(101),
              email: `${local}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`,
            },
          }),
        );
        const found = issues(tooLong);
        assert.ok(found.includes('body.user_details.phone_number:string_too_long'));
        assert.ok(found.includes('body.user_details.user_name:string_too_long'));
        assert.ok(found.includes('body.user_details.email:string_too_long'));
        for (const email of ['not-an-email', 'a@b', '@example.com', 'a b@example.com']) {
          assert.deepEqual(
            issues(await gw().post(path, valid({ user_details: { email } }))),
            ['body.user_details.email:value_error'],
            email,
          );
        }
        assert.deepEqual(issues(await gw().post(path, valid({ user_details: 'x' }))), [
          'body.user_details:model_type',
        ]);
        assert.deepEqual(issues(await gw().post(path, valid({ user_details: { phone_number: 98765 } }))), [
          'body.user_details.phone_number:string_type',
        ]);
      });

      it(`accepts the deprecated ${flow} phone field with a Deprecation header and files it as the phone number`, async () => {
        const res = await gw().post(path, valid({ phone: '+919876543210' }));
        assert.equal(res.status, 200, res.text);
        assert.equal(res.headers.deprecation, 'true');
        const row = await gw()
          .database.db.selectFrom('transactions')
          .select('user_phone')
          .where('payment_id', '=', res.body.payment_id)
          .executeTakeFirstOrThrow();
        assert.equal(row.user_phone, '+919876543210');

        const both = await gw().post(
          path,
          valid({ phone: '+911111111111', user_details: { phone_number: '+912222222222' } }),
        );
        assert.equal(both.headers.deprecation, 'true');
        const bothRow = await gw()
          .database.db.selectFrom('transactions')
          .select('user_phone')
          .where('payment_id', '=', both.body.payment_id)
          .executeTakeFirstOrThrow();
        assert.equal(bothRow.user_phone, '+912222222222');

        const modern = await gw().post(path, valid({ user_details: { phone_number: '+913333333333' } }));
        assert.equal(modern.headers.deprecation, undefined);
      });

      it(`refuses ${flow} text that cannot be stored or encoded (NUL, unpaired surrogates) with 422`, async () => {
        const res = await gw().post(path, {
          money: { amount: 1 },
          merchant_order_no: 'a\u0000b',
          callback_url: 'https://merchant.example.com/\u0000',
          phone: '1\u0000',
          user_details: { phone_number: '\u0000', user_name: 'n\u0000', email: 'a\u0000@example.com' },
        });
        assert.deepEqual(issues(res), [
          'body.callback_url:value_error',
          'body.merchant_order_no:string_pattern_mismatch',
          'body.phone:value_error',
          'body.user_details.email:value_error',
          'body.user_details.phone_number:value_error',
          'body.user_details.user_name:value_error',
        ]);
        // An unpaired surrogate cannot be stored or URL-encoded either.
        const lone = await gw().post(path, {
          money: { amount: 1 },
          merchant_order_no: 'a\uD800',
          user_details: { user_name: '\uDC00x' },
        });
        assert.deepEqual(issues(lone), [
          'body.merchant_order_no:string_pattern_mismatch',
          'body.user_details.user_name:value_error',
        ]);
        // Other unusual text is kept as sent.
        const order = `é₹😀-${seq++}`;
        const ok = await gw().post(path, {
          money: { amount: 1 },
          merchant_order_no: order,
          user_details: { user_name: 'Ásha Ráo ₹' },
        });
        assert.equal(ok.status, 200, ok.text);
        assert.equal(
          (
            await gw().post(path, {
              money: { amount: 1 },
              merchant_order_no: order,
              user_details: { user_name: 'Ásha Ráo ₹' },
            })
          ).headers['idempotent-replayed'],
          'true',
        );
      });

      it(`ignores unknown ${flow} fields at every level`, async () => {
        const res = await gw().post(path, {
          money: { amount: 20, currency: 'INR', precision: 2 },
          merchant_order_no: orderNo(),
          user_details: { phone_number: '123', nickname: 'z' },
          shipping: { city: 'Pune' },
          metadata: null,
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.amount, 20);
      });
    }

    it('accepts a P2P redirect_url under the same rules as callback_url, and ignores it on the other flows', async () => {
      assert.equal(
        (await gw().post(P2P, valid({ redirect_url: 'https://shop.example.com/return' }))).status,
        200,
      );
      assert.equal((await gw().post(P2P, valid({ redirect_url: null }))).status, 200);
      assert.deepEqual(
        issues(await gw().post(P2P, valid({ redirect_url: 'http://shop.example.com/return' }))),
        ['body.redirect_url:url_scheme'],
      );
      assert.deepEqual(
        issues(await gw().post(P2P, valid({ redirect_url: `https://s.example.com/${'r'.repeat(512)}` }))),
        ['body.redirect_url:string_too_long'],
      );
      assert.deepEqual(issues(await gw().post(P2P, valid({ redirect_url: 'nope' }))), [
        'body.redirect_url:value_error',
      ]);
      assert.equal((await gw().post(ONSITE, valid({ redirect_url: 'ftp://ignored' }))).status, 200);
    });

    it('reports every violation at once, in shape B with pydantic type words', async () => {
      const countRows = async () =>
        Number(
          (
            await gw()
              .database.db.selectFrom('transactions')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await countRows();
      const res = await gw().post(ONSITE, {
        money: { amount: 1.234, currency: 7 },
        merchant_order_no: 'x'.repeat(33),
        callback_url: 'http://merchant.example.com/cb',
        phone: 5,
        user_details: { phone_number: '1'.repeat(21), user_name: 'n'.repeat(101), email: 'nope' },
      });
      assert.deepEqual(issues(res), [
        'body.callback_url:url_scheme',
        'body.merchant_order_no:string_too_long',
        'body.money.amount:decimal_max_places',
        'body.money.currency:string_type',
        'body.phone:string_type',
        'body.user_details.email:value_error',
        'body.user_details.phone_number:string_too_long',
        'body.user_details.user_name:string_too_long',
      ]);
      const none = await gw().post(ONSITE, {});
      assert.deepEqual(issues(none), ['body.merchant_order_no:missing', 'body.money:missing']);
      assert.deepEqual(issues(await gw().post(ONSITE, [1, 2])), ['body:model_type']);
      const status = await gw().post('/payments/payin_status', {});
      assert.deepEqual(issues(status), ['body.payment_id:missing']);
      assert.equal(await countRows(), before, 'the refused requests created nothing');
    });

    it('replays a repeated order number with the same body: 200, Idempotent-Replayed, the same bytes, nothing new', async () => {
      const body = valid({
        callback_url: 'https://merchant.example.com/cb',
        user_details: { email: 'a@example.com' },
      });
      for (const path of [ONSITE, OFFSITE, P2P]) {
        const own = { ...body, merchant_order_no: orderNo() };
        const first = await gw().post(path, own);
        assert.equal(first.status, 200);
        const again = await gw().post(path, { ...own, unknown_field: 1 });
        assert.equal(again.status, 200);
        assert.equal(again.headers['idempotent-replayed'], 'true');
        assert.equal(again.text, first.text);
        assert.match(String(again.headers['content-type']), /^application\/json/);
        // The same request written differently (default currency, null for absent) is the same request.
        const same = await gw().post(path, {
          ...own,
          money: { amount: 500 },
          phone: null,
          ...(path === P2P ? { redirect_url: null } : {}),
        });
        assert.equal(same.headers['idempotent-replayed'], 'true', same.text);
        assert.equal(same.text, first.text);
        const rows = await gw()
          .database.db.selectFrom('transactions')
          .select('payment_id')
          .where('merchant_order_no', '=', own.merchant_order_no)
          .execute();
        assert.deepEqual(
          rows.map((r) => r.payment_id),
          [first.body.payment_id],
        );
      }
    });

    it('stores an offsite creation without its QR code and draws it again for a replay; older rows replay as stored', async () => {
      const body = valid();
      const first = await gw().post(OFFSITE, body);
      assert.equal(first.status, 200, first.text);
      const id: string = first.body.payment_id;
      const { response_json } = await gw()
        .database.db.selectFrom('transactions')
        .select('response_json')
        .where('payment_id', '=', id)
        .executeTakeFirstOrThrow();
      const stored = JSON.parse(response_json);
      assert.equal(stored.data.qrCode, undefined);
      assert.doesNotMatch(response_json, /qrCode|data:image/);
      assert.deepEqual({ ...stored, data: { qrCode: first.body.data.qrCode, ...stored.data } }, first.body);
      const again = await gw().post(OFFSITE, body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.text, first.text);

      // A row stored with its QR code (as all were before it was left out) replays byte for byte.
      const legacy = JSON.stringify({
        ...first.body,
        data: { ...first.body.data, qrCode: 'data:image/png;base64,iVBORw0KGgo=' },
      });
      await gw()
        .database.db.updateTable('transactions')
        .set({ response_json: legacy })
        .where('payment_id', '=', id)
        .execute();
      const old = await gw().post(OFFSITE, body);
      assert.equal(old.headers['idempotent-replayed'], 'true');
      assert.equal(old.text, legacy);
    });

    it('answers 409 DUPLICATE_ORDER_NO to a repeated order number with another body or in another flow', async () => {
      const body = valid();
      assert.equal((await gw().post(ONSITE, body)).status, 200);
      for (const [path, changed] of [
        [ONSITE, { ...body, money: { amount: 501, currency: 'INR' } }],
        [ONSITE, { ...body, callback_url: 'https://merchant.example.com/other' }],
        [ONSITE, { ...body, user_details: { user_name: 'Someone' } }],
        [OFFSITE, body],
        [P2P, body],
      ] as const) {
        assertShapeA(await gw().post(path, changed), 409, 'DUPLICATE_ORDER_NO');
      }
      const rows = await gw()
        .database.db.selectFrom('transactions')
        .select('payment_id')
        .where('merchant_order_no', '=', body.merchant_order_no)
        .execute();
      assert.equal(rows.length, 1);
      // Order numbers are per merchant: another merchant may use the same one.
      const other = await gw().newMerchant();
      assert.equal((await gw().post(ONSITE, body, { key: other.api_key })).status, 200);
    });

    it('creates exactly one pay-in for sixteen concurrent repeats of one order number', async () => {
      const body = valid();
      const replies = await Promise.all(Array.from({ length: 16 }, () => gw().post(OFFSITE, body)));
      assert.deepEqual(
        replies.map((r) => r.status),
        Array(16).fill(200),
      );
      const ids = new Set(replies.map((r) => r.body.payment_id));
      assert.equal(ids.size, 1);
      assert.equal(replies.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 15);
      assert.equal(new Set(replies.map((r) => r.text)).size, 1);
      const { n } = await gw()
        .database.db.selectFrom('transactions')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('merchant_order_no', '=', body.merchant_order_no)
        .executeTakeFirstOrThrow();
      assert.equal(Number(n), 1);
    });

    it('answers payin_status in the documented shape: PENDING with empty utr and channel_txn_id', async () => {
      const created = await gw().post(P2P, valid({ money: { amount: 123.45 } }));
      const res = await gw().post('/payments/payin_status', { payment_id: created.body.payment_id });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        status: 'PENDING',
        money: { amount: 123.45, currency: 'INR' },
        channel_txn_id: '',
        utr: '',
      });
      assert.deepEqual(Object.keys(res.body), ['status', 'money', 'channel_txn_id', 'utr']);
    });

    it('answers status queries asked together each for its own merchant and kind', async () => {
      // Asked at once, these are read together (one query on PostgreSQL, one read transaction on
      // SQLite); each must still answer only for the asking merchant and the endpoint's kind.
      const other = await gw().newMerchant();
      const mine = await gw().post(ONSITE, valid({ money: { amount: 11.11 } }));
      const theirs = await gw().post(ONSITE, valid({ money: { amount: 22.22 } }), { key: other.api_key });
      const ask = (payment_id: string, key?: string, path = '/payments/payin_status') =>
        gw().post(path, { payment_id }, key ? { key } : {});
      const answers = await Promise.all([
        ask(mine.body.payment_id),
        ask(theirs.body.payment_id),
        ask(theirs.body.payment_id, other.api_key),
        ask(mine.body.payment_id, other.api_key),
        ask(mine.body.payment_id, undefined, '/payments/payout_status'),
        ask(mine.body.payment_id),
      ]);
      assert.deepEqual(
        answers.map((a) => (a.status === 200 ? a.body.money.amount : a.body.error.error_code)),
        [11.11, 'PAYMENT_NOT_FOUND', 22.22, 'PAYMENT_NOT_FOUND', 'PAYMENT_NOT_FOUND', 11.11],
      );
    });

    it("answers 404 PAYMENT_NOT_FOUND for an unknown id, another merchant's pay-in and a payout's id", async () => {
      const other = await gw().newMerchant();
      const theirs = await gw().post(ONSITE, valid(), { key: other.api_key });
      assertShapeA(
        await gw().post('/payments/payin_status', { payment_id: theirs.body.payment_id }),
        404,
        'PAYMENT_NOT_FOUND',
      );
      for (const payment_id of [
        'A'.repeat(32),
        'x',
        theirs.body.payment_id.toLowerCase(),
        `${theirs.body.payment_id}\u0000`,
        '\u0000',
      ]) {
        assertShapeA(await gw().post('/payments/payin_status', { payment_id }), 404, 'PAYMENT_NOT_FOUND');
        assertShapeA(
          await gw().post('/sandbox/payin/complete', { payment_id, status: 'SUCCESS' }),
          404,
          'PAYMENT_NOT_FOUND',
        );
      }
      await gw().paygate.services.wallets.topUp(other.merchant_id, 'INR', 10_000);
      const payout = await gw().post(
        '/payments/payout',
        {
          money: { amount: 10 },
          merchant_order_no: orderNo(),
          receiver: { name: 'R', account_no: '123456789', ifsc_code: 'HDFC0001234' },
        },
        { key: other.api_key },
      );
      assert.equal(payout.status, 200, payout.text);
      assertShapeA(
        await gw().post(
          '/payments/payin_status',
          { payment_id: payout.body.payment_id },
          { key: other.api_key },
        ),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assertShapeA(
        await gw().post(
          '/sandbox/payin/complete',
          { payment_id: payout.body.payment_id, status: 'SUCCESS' },
          { key: other.api_key },
        ),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assertShapeA(
        await gw().post('/sandbox/payin/complete', { payment_id: theirs.body.payment_id, status: 'SUCCESS' }),
        404,
        'PAYMENT_NOT_FOUND',
      );
      assert.equal(
        (
          await gw().post(
            '/payments/payin_status',
            { payment_id: theirs.body.payment_id },
            { key: other.api_key },
          )
        ).body.status,
        'PENDING',
      );
      await gw().post(
        '/sandbox/payout/complete',
        { payment_id: payout.body.payment_id, status: 'FAILED' },
        { key: other.api_key },
      );
    });

    it('answers a live merchant 403 LIVE_CHANNEL_NOT_CONFIGURED on creation and 403 SANDBOX_ONLY on sandbox completion', async () => {
      const live = await gw().newMerchant({ live: true });
      assert.match(live.api_key, /^sk_live_/);
      for (const path of [ONSITE, OFFSITE, P2P]) {
        assertShapeA(
          await gw().post(path, valid(), { key: live.api_key }),
          403,
          'LIVE_CHANNEL_NOT_CONFIGURED',
        );
      }
      const mine = await gw().post(ONSITE, valid());
      assertShapeA(
        await gw().post(
          '/sandbox/payin/complete',
          { payment_id: mine.body.payment_id, status: 'SUCCESS' },
          { key: live.api_key },
        ),
        403,
        'SANDBOX_ONLY',
      );
      assertShapeA(
        await gw().post(
          '/sandbox/payin/complete',
          { payment_id: 'B'.repeat(32), status: 'SUCCESS' },
          { key: live.api_key },
        ),
        403,
        'SANDBOX_ONLY',
      );
      const rows = await gw()
        .database.db.selectFrom('transactions')
        .select('payment_id')
        .where('merchant_id', '=', live.merchant_id)
        .execute();
      assert.equal(rows.length, 0);
    });

    it('settles a pay-in through /sandbox/payin/complete: a 12-digit utr, the channel reference, the wallet credited less the fee', async () => {
      const m = await gw().newMerchant();
      const created = await gw().post(ONSITE, valid({ money: { amount: 1000 } }), { key: m.api_key });
      const done = await gw().post(
        '/sandbox/payin/complete',
        { payment_id: created.body.payment_id, status: 'SUCCESS' },
        { key: m.api_key },
      );
      assert.equal(done.status, 200, done.text);
      assert.equal(done.body.payment_id, created.body.payment_id);
      assert.equal(done.body.status, 'SUCCESS');
      assert.match(done.body.utr, /^\d{12}$/);
      assert.ok(done.body.channel_txn_id.length > 0);
      const status = await gw().post(
        '/payments/payin_status',
        { payment_id: created.body.payment_id },
        { key: m.api_key },
      );
      assert.deepEqual(status.body, {
        status: 'SUCCESS',
        money: { amount: 1000, currency: 'INR' },
        channel_txn_id: done.body.channel_txn_id,
        utr: done.body.utr,
      });
      // PAYIN_FEE_BPS=250: 2.5 % of 1000.00 is 25.00.
      assert.deepEqual(await balance(gw(), m.api_key), { currency: 'INR', available: 975, held: 0 });

      for (const again of ['SUCCESS', 'FAILED']) {
        const res = await gw().post(
          '/sandbox/payin/complete',
          { payment_id: created.body.payment_id, status: again },
          { key: m.api_key },
        );
        assertShapeA(res, 409, 'INVALID_STATE');
      }
      const after = await gw().post(
        '/payments/payin_status',
        { payment_id: created.body.payment_id },
        { key: m.api_key },
      );
      assert.deepEqual(after.body, status.body);
      assert.deepEqual(await balance(gw(), m.api_key), { currency: 'INR', available: 975, held: 0 });

      // The fee is rounded down to the paisa: 2.5 % of 333.33 is 8.33325, so 8.33; of 0.01 it is nothing.
      for (const [amount, expected] of [
        [333.33, 975 + 325],
        [0.01, 975 + 325 + 0.01],
      ] as const) {
        const p = await gw().post(OFFSITE, valid({ money: { amount } }), { key: m.api_key });
        assert.equal(
          (
            await gw().post(
              '/sandbox/payin/complete',
              { payment_id: p.body.payment_id, status: 'SUCCESS' },
              { key: m.api_key },
            )
          ).status,
          200,
        );
        assert.equal((await balance(gw(), m.api_key)).available, expected);
      }
      const events = await gw()
        .database.db.selectFrom('transaction_events')
        .selectAll()
        .where('payment_id', '=', created.body.payment_id)
        .execute();
      assert.deepEqual(
        events.map((e) => e.status),
        ['SUCCESS'],
      );
    });

    it('fails a pay-in through /sandbox/payin/complete without touching the wallet, and keeps it failed', async () => {
      const m = await gw().newMerchant();
      const created = await gw().post(P2P, valid(), { key: m.api_key });
      const done = await gw().post(
        '/sandbox/payin/complete',
        { payment_id: created.body.payment_id, status: 'FAILED' },
        { key: m.api_key },
      );
      assert.equal(done.status, 200);
      assert.equal(done.body.status, 'FAILED');
      assert.equal(done.body.utr, '');
      assertShapeA(
        await gw().post(
          '/sandbox/payin/complete',
          { payment_id: created.body.payment_id, status: 'SUCCESS' },
          { key: m.api_key },
        ),
        409,
        'INVALID_STATE',
      );
      const status = await gw().post(
        '/payments/payin_status',
        { payment_id: created.body.payment_id },
        { key: m.api_key },
      );
      assert.equal(status.body.status, 'FAILED');
      assert.equal(status.body.utr, '');
      assert.deepEqual(await balance(gw(), m.api_key), { currency: 'INR', available: 0, held: 0 });
      const paid = await gw().post(
        '/sandbox/payin/complete',
        { payment_id: created.body.payment_id, status: 'PAID' },
        { key: m.api_key },
      );
      assert.deepEqual(issues(paid), ['body.status:value_error']);
      assert.equal(paid.body.detail[0].msg, "Input should be 'SUCCESS' or 'FAILED'");
    });

    it('settles concurrent completions of one pay-in exactly once', async () => {
      const m = await gw().newMerchant();
      const created = await gw().post(ONSITE, valid({ money: { amount: 40 } }), { key: m.api_key });
      const replies = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          gw().post(
            '/sandbox/payin/complete',
            { payment_id: created.body.payment_id, status: i % 2 ? 'FAILED' : 'SUCCESS' },
            { key: m.api_key },
          ),
        ),
      );
      assert.equal(replies.filter((r) => r.status === 200).length, 1);
      assert.equal(replies.filter((r) => r.status === 409).length, 7);
      const winner = replies.find((r) => r.status === 200)?.body.status;
      assert.deepEqual(await balance(gw(), m.api_key), {
        currency: 'INR',
        available: winner === 'SUCCESS' ? 39 : 0,
        held: 0,
      });
      const events = await gw()
        .database.db.selectFrom('transaction_events')
        .select('status')
        .where('payment_id', '=', created.body.payment_id)
        .execute();
      assert.equal(events.length, 1);
    });
  });

  describe(`pay-in URLs with ALLOW_PRIVATE_CALLBACK_URLS on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, { env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true' } });

    it('accepts http callback and redirect URLs, still refuses other schemes, and keeps the 512 limit', async () => {
      assert.equal((await gw().post(ONSITE, valid({ callback_url: 'http://127.0.0.1:9/cb' }))).status, 200);
      assert.equal(
        (
          await gw().post(
            P2P,
            valid({ callback_url: 'http://localhost/cb', redirect_url: 'http://localhost/back' }),
          )
        ).status,
        200,
      );
      assert.deepEqual(issues(await gw().post(OFFSITE, valid({ callback_url: 'ftp://127.0.0.1/cb' }))), [
        'body.callback_url:url_scheme',
      ]);
      assert.deepEqual(
        issues(await gw().post(ONSITE, valid({ callback_url: `http://h/${'a'.repeat(504)}` }))),
        ['body.callback_url:string_too_long'],
      );
      assert.equal(
        (await gw().post(ONSITE, valid({ callback_url: `http://h/${'a'.repeat(503)}` }))).status,
        200,
      );
    });

    it('still answers payment URLs under the default PUBLIC_URL', async () => {
      const res = await gw().post(ONSITE, valid());
      assert.equal(res.body.payment_url, `http://localhost:0/pay/${res.body.payment_id}`);
    });
  });

  describe(`pay-in expiry on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, { worker: true, env: { PAYIN_EXPIRY_S: '1', WORKER_POLL_MS: '100' } });

    afterEach(async () => {
      assert.deepEqual((await gw().paygate.services.wallets.verify()).problems, []);
    });

    async function waitForStatus(
      paymentId: string,
      wanted: string,
    ): Promise<{ status: string; utr: string }> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const res = await gw().post('/payments/payin_status', { payment_id: paymentId });
        if (res.body.status === wanted || Date.now() > deadline) return res.body;
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    it('fails an unpaid pay-in after PAYIN_EXPIRY_S, once, and never flips it afterwards', async () => {
      const started = Date.now();
      const created = await gw().post(ONSITE, valid());
      const id = created.body.payment_id;
      const paid = await gw().post(OFFSITE, valid());
      assert.equal(
        (await gw().post('/sandbox/payin/complete', { payment_id: paid.body.payment_id, status: 'SUCCESS' }))
          .status,
        200,
      );

      const expired = await waitForStatus(id, 'FAILED');
      assert.equal(expired.status, 'FAILED');
      assert.equal(expired.utr, '');
      assert.ok(Date.now() - started >= 1000, 'not before PAYIN_EXPIRY_S');

      assertShapeA(
        await gw().post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' }),
        409,
        'INVALID_STATE',
      );
      // Several more worker polls pass; neither transaction changes.
      await new Promise((r) => setTimeout(r, 600));
      assert.equal((await gw().post('/payments/payin_status', { payment_id: id })).body.status, 'FAILED');
      assert.equal(
        (await gw().post('/payments/payin_status', { payment_id: paid.body.payment_id })).body.status,
        'SUCCESS',
      );
      const events = await gw()
        .database.db.selectFrom('transaction_events')
        .select(['payment_id', 'status', 'source'])
        .where('payment_id', 'in', [id, paid.body.payment_id])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        events.map((e) => `${e.payment_id === id ? 'expired' : 'paid'}:${e.status}:${e.source}`),
        ['paid:SUCCESS:sandbox_api', 'expired:FAILED:expiry'],
      );
      assert.deepEqual(await balance(gw(), gw().merchant.api_key), {
        currency: 'INR',
        available: 500,
        held: 0,
      });
    });
  });
}
