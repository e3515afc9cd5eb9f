/**
 * Property tests (fast-check): whatever a client sends to whatever path, with whatever headers, the
 * answer is never a 5xx and is always a success body, shape A or shape B; and the money
 * helpers round-trip every amount exactly.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { API_PATHS } from '../../src/http/plumbing.ts';
import {
  decimalPlaces,
  feeFor,
  formatAmount,
  formatIndian,
  parseAmountText,
  toPaise,
  toRupees,
} from '../../src/money.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';
import { rawRequest } from '../support/raw-http.ts';

const PATHS = [
  ...API_PATHS,
  '/nowhere',
  '/payments',
  '/payments/payout/x',
  '/wallet/balance?currency=INR',
  '/payments/onsite/payin/',
];
const METHODS = ['POST', 'POST', 'POST', 'POST', 'GET', 'PUT', 'PATCH', 'DELETE'] as const;

/** Checks what a merchant would get back: never a 5xx, and a body in one of the documented shapes. */
function assertDocumentedShape(
  status: number,
  headers: Record<string, unknown>,
  text: string,
  what: string,
): void {
  assert.ok(status < 500, `${what} → ${status} ${text}`);
  const requestId = headers['x-request-id'];
  assert.ok(typeof requestId === 'string' && requestId.length > 0, `${what}: x-request-id`);
  const body = JSON.parse(text);
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `${what}: a JSON object`);
  if (status >= 200 && status < 300) return;
  if (status === 422) {
    assert.deepEqual(Object.keys(body), ['detail'], `${what}: shape B`);
    assert.ok(Array.isArray(body.detail) && body.detail.length > 0, `${what}: shape B detail`);
    for (const d of body.detail) {
      assert.deepEqual(Object.keys(d).sort(), ['loc', 'msg', 'type'], `${what}: shape B entry`);
      assert.ok(
        Array.isArray(d.loc) && d.loc.length > 0 && d.loc.every((p: unknown) => typeof p === 'string'),
        `${what}: loc`,
      );
      assert.ok(typeof d.msg === 'string' && typeof d.type === 'string', `${what}: msg and type`);
    }
    return;
  }
  assert.ok(status >= 400, `${what}: unexpected status ${status}`);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'status'], `${what}: shape A`);
  assert.equal(body.status, false);
  assert.equal(body.error.code, status, `${what}: error.code`);
  assert.match(body.error.error_code, /^[A-Z_]+$/);
  assert.ok(typeof body.error.message === 'string' && body.error.message.length > 0);
  assert.equal(body.error.metadata.request_id, requestId, `${what}: metadata.request_id`);
}

/** Strings that exercise the edges: any code unit (NUL, lone surrogates), and values close to valid ones. */
const edgy = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    '9',
    ' ',
    '-',
    '\u0000',
    '\u0007',
    '\uD800',
    '\uDC00',
    'é',
    '₹',
    '😀',
    '"',
    '\\',
  ),
  maxLength: 12,
});
const text = fc.oneof(
  fc.string(),
  edgy,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    'INR',
    'USD',
    'SUCCESS',
    'FAILED',
    'https://merchant.example.com/cb',
    'http://127.0.0.1/',
    'HDFC0001234',
    '123456789',
    'a@b.co',
    '\u0000',
    'x'.repeat(600),
  ),
);
const number = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(
    0,
    0.01,
    0.005,
    1.1,
    500,
    999.99,
    1e7,
    1e7 + 0.01,
    -1,
    1e21,
    5e-324,
    Number.MAX_SAFE_INTEGER,
  ),
);
const value = fc.oneof(
  text,
  number,
  fc.boolean(),
  fc.constant(null),
  fc.anything({ maxDepth: 2, stringUnit: 'binary' }),
);
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: value });

/** Objects shaped almost like a valid request of some endpoint, with any part swapped for junk. */
const almostValid = fc.record(
  {
    money: maybe(
      fc.record(
        { amount: maybe(fc.constantFrom(1, 2.5, 10)), currency: maybe(fc.constantFrom('INR', 'USD', null)) },
        { requiredKeys: ['amount'] },
      ),
    ),
    merchant_order_no: maybe(
      fc.oneof(
        edgy.map((s) => `${s}`),
        fc.string({ unit: 'binary', minLength: 0, maxLength: 40 }),
      ),
    ),
    receiver: maybe(
      fc.record(
        {
          name: maybe(fc.oneof(edgy, fc.constant('Asha Rao'))),
          account_no: maybe(fc.constantFrom('123456789', '123456780000', '12345678', '1234567890123456789')),
          ifsc_code: maybe(fc.constantFrom('HDFC0001234', 'hdfc0001234', 'HDFC1001234')),
        },
        { requiredKeys: [] },
      ),
    ),
    callback_url: maybe(
      fc.oneof(
        text,
        edgy.map((s) => `https://merchant.example.com/${s}`),
      ),
    ),
    redirect_url: maybe(
      fc.oneof(
        text,
        edgy.map((s) => `https://merchant.example.com/${s}`),
      ),
    ),
    phone: maybe(edgy),
    user_details: maybe(
      fc.record(
        {
          phone_number: maybe(edgy),
          user_name: maybe(edgy),
          email: maybe(
            fc.oneof(
              text,
              edgy.map((s) => `${s}@example.com`),
            ),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
    payment_id: maybe(fc.oneof(text, edgy, fc.stringMatching(/^[A-Za-z0-9]{32}$/))),
    status: maybe(fc.constantFrom('SUCCESS', 'FAILED')),
    currency: maybe(fc.constantFrom('INR', 'EUR', null)),
  },
  { requiredKeys: [] },
);

const body: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: almostValid.map((o) => JSON.stringify(o)) },
  { weight: 2, arbitrary: fc.json() },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 3, stringUnit: 'binary' }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      undefined,
      '',
      '{',
      'null',
      '[]',
      '{"money":}',
      '\u0000',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{}}}',
    ),
  },
);

for (const kind of DATABASES) {
  describe(`random requests on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);
    let liveKey = '';

    before(async () => {
      await gw().paygate.services.wallets.topUp(gw().merchant.merchant_id, 'INR', 100_000_000);
      liveKey = (await gw().newMerchant({ live: true })).api_key;
    });

    it('never answers 5xx and always answers a documented shape, on every route with any body and headers', async () => {
      const key = gw().merchant.api_key;
      const headers = fc.record(
        {
          'content-type': fc.constantFrom(
            'application/json',
            'application/json; charset=utf-8',
            'Application/JSON',
            'application/json;charset=latin1',
            'text/plain',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=x',
            'application/jsonx',
            '*/*',
            '',
          ),
          authorization: fc.oneof(
            fc.constantFrom(
              `Bearer ${key}`,
              `bearer  ${key}`,
              `Bearer ${liveKey}`,
              `Bearer ${key}x`,
              `Basic ${key}`,
              'Bearer',
              'Bearer sk_test_',
              '',
            ),
            fc.string().map((s) => `Bearer ${s}`),
          ),
          'x-request-id': fc.oneof(fc.string(), fc.stringMatching(/^[A-Za-z0-9-]{1,140}$/)),
          accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml'),
          'idempotency-key': fc.string(),
          'x-forwarded-for': fc.constantFrom('10.0.0.1', 'not-an-ip', '::1'),
        },
        { requiredKeys: ['authorization'] },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...PATHS),
          fc.constantFrom(...METHODS),
          body,
          headers,
          async (path, method, payload, hdrs) => {
            const clean: Record<string, string> = {};
            for (const [name, v] of Object.entries(hdrs)) if (v !== undefined && v !== '') clean[name] = v;
            const res = await gw().app.inject({
              method,
              url: path,
              headers: clean,
              payload: method === 'GET' ? undefined : payload,
            });
            assertDocumentedShape(
              res.statusCode,
              res.headers,
              res.body,
              `${method} ${path} ${JSON.stringify(clean)} ${JSON.stringify(payload)}`,
            );
          },
        ),
        { numRuns: 400 },
      );
    });

    it('answers almost-valid requests to the payment endpoints with 200, shape A or shape B, and never a 5xx', async () => {
      const paths = [
        '/payments/onsite/payin',
        '/payments/offsite/payin',
        '/payments/p2p/payin',
        '/payments/payout',
        '/payments/payin_status',
        '/payments/payout_status',
        '/sandbox/payin/complete',
        '/sandbox/payout/complete',
        '/wallet/balance',
        '/payments/refund',
        '/payments/refund_status',
        '/sandbox/refund/complete',
      ];
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...paths), almostValid, async (path, request) => {
          const res = await gw().post(path, request);
          assertDocumentedShape(res.status, res.headers, res.text, `${path} ${JSON.stringify(request)}`);
        }),
        { numRuns: 400 },
      );
      assert.deepEqual((await gw().paygate.services.wallets.verify()).problems, []);
    });

    it('answers valid requests with one text field set to unusual text with 200, 409 or 422, never a 5xx', async () => {
      const fields = [
        'merchant_order_no',
        'callback_url',
        'redirect_url',
        'phone',
        'user_details.user_name',
        'user_details.phone_number',
        'user_details.email',
        'receiver.name',
      ];
      const creations = [
        '/payments/onsite/payin',
        '/payments/offsite/payin',
        '/payments/p2p/payin',
        '/payments/payout',
      ];
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...creations),
          fc.constantFrom(...fields),
          edgy,
          async (path, field, unusual) => {
            const request: Record<string, any> = {
              money: { amount: 1 },
              merchant_order_no: `edgy-${++n}`,
              receiver: { name: 'Asha Rao', account_no: '123456789', ifsc_code: 'HDFC0001234' },
              user_details: {},
            };
            const [outer, inner] = field.split('.') as [string, string | undefined];
            const written = field.endsWith('url')
              ? `https://merchant.example.com/${unusual}`
              : field.endsWith('email')
                ? `${unusual}@example.com`
                : unusual;
            if (inner) request[outer][inner] = written;
            else request[outer] = written;
            const res = await gw().post(path, request);
            assertDocumentedShape(res.status, res.headers, res.text, `${path} ${JSON.stringify(request)}`);
            assert.ok(
              [200, 409, 422].includes(res.status),
              `${path} ${JSON.stringify(request)} → ${res.status} ${res.text}`,
            );
          },
        ),
        { numRuns: 300 },
      );
    });
  });
}

describe('money properties', () => {
  const paise = fc.integer({ min: 0, max: 99_999_999_999_999 });

  it('formats every paise amount with two decimals that parse back to the same paise', () => {
    fc.assert(
      fc.property(paise, (p) => {
        const text = formatAmount(p);
        assert.match(text, /^\d+\.\d{2}$/);
        assert.equal(parseAmountText(text), p);
        assert.equal(toPaise(Number(text)), p);
      }),
    );
  });

  it('turns every amount in rupees with at most 2 decimals into exact paise and back', () => {
    fc.assert(
      fc.property(paise, (p) => {
        const rupees = toRupees(p);
        assert.ok(decimalPlaces(rupees) <= 2, `${rupees}`);
        assert.equal(toPaise(rupees), p);
        assert.equal(toRupees(toPaise(rupees)), rupees);
        // The number a JSON body carries reads back as the same amount.
        assert.equal(toPaise(JSON.parse(JSON.stringify(rupees))), p);
      }),
    );
  });

  it('counts the decimal places of the text a JSON number was written as', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 999_999_999 }),
        fc.stringMatching(/^[0-9]{0,6}$/),
        (whole, fraction) => {
          const written = fraction ? `${whole}.${fraction}` : `${whole}`;
          const significant = fraction.replace(/0+$/, '').length;
          assert.equal(decimalPlaces(Number(written)), significant, written);
        },
      ),
    );
  });

  it('parses operator amounts only when they are plain decimals with at most 2 places', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (s) => {
        const parsed = parseAmountText(s);
        if (/^\s*\d{1,13}(\.\d{1,2})?\s*$/.test(s)) assert.equal(parsed, Math.round(Number(s.trim()) * 100));
        else assert.equal(parsed, null, JSON.stringify(s));
      }),
    );
  });

  it('groups digits the Indian way without changing the amount, and never over-charges a fee', () => {
    fc.assert(
      fc.property(paise, fc.integer({ min: 0, max: 10_000 }), (p, bps) => {
        const indian = formatIndian(p);
        assert.match(indian, /^₹(\d{1,2},)*(\d{1,2},)?\d{1,3}\.\d{2}$/);
        assert.equal(indian.slice(1).replace(/,/g, ''), formatAmount(p));
        const fee = feeFor(p, bps);
        assert.ok(Number.isInteger(fee) && fee >= 0 && fee <= p);
        const exact = BigInt(p) * BigInt(bps);
        assert.ok(BigInt(fee) * 10_000n <= exact && BigInt(fee + 1) * 10_000n > exact);
      }),
    );
  });
});

/** A path as a client might mangle it: `%` escapes good and bad, NUL, long segments, page paths. */
const rawPath = fc
  .tuple(
    fc.constantFrom(...API_PATHS, '/pay/', '/p2p/', '/cashier/', '/pay/abc/simulate', '/nowhere', '/healthz'),
    fc.constantFrom(
      '',
      '%zz',
      '%',
      '%00',
      '%2F',
      '%E2%82%AC',
      '%C0%AF',
      'x'.repeat(120),
      '?a=%zz',
      '?%',
      '/',
    ),
  )
  .map(([p, tail]) => `${p}${tail}`);

/** Header values from any byte but CR and LF (those end a header line; the framing cases send them on purpose). */
const headerBytes = fc
  .uint8Array({ maxLength: 24 })
  .map((bytes) => Buffer.from(bytes.filter((b) => b !== 13 && b !== 10)).toString('latin1'));

type Framing = 'length' | 'short-length' | 'chunked' | 'bad-chunk' | 'both' | 'none' | 'bare-cr';

const rawRequestArb = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'OPTIONS', 'P@ST'),
  path: rawPath,
  key: fc.constantFrom<'good' | 'junk' | 'none'>('good', 'good', 'junk', 'none'),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/x-www-form-urlencoded',
    'text/plain',
    '',
  ),
  encoding: fc.constantFrom('', '', '', 'gzip', 'identity', 'br, gzip', 'x\u0000'),
  extra: fc.option(headerBytes, { nil: undefined }),
  body: fc.oneof(
    fc.constant(''),
    fc.constant('{"payment_id":"x"}'),
    fc.constant('status=SUCCESS'),
    fc.string({ unit: 'binary', maxLength: 60 }),
    almostValid.map((o) => JSON.stringify(o)),
  ),
  framing: fc.constantFrom<Framing>(
    'length',
    'length',
    'length',
    'chunked',
    'chunked',
    'bad-chunk',
    'both',
    'none',
    'bare-cr',
    'short-length',
  ),
  chunkSize: fc.integer({ min: 1, max: 16 }),
});

type RawSpec = typeof rawRequestArb extends fc.Arbitrary<infer T> ? T : never;

function rawBytes(r: RawSpec, key: string): Buffer {
  const body = Buffer.from(r.body, 'utf8');
  const lines = [`${r.method} ${r.path} HTTP/1.1`, 'Host: paygate.test', 'Connection: close'];
  if (r.key === 'good') lines.push(`Authorization: Bearer ${key}`);
  if (r.key === 'junk') lines.push(`Authorization: Bearer sk_test_${'J'.repeat(30)}`);
  if (r.contentType) lines.push(`Content-Type: ${r.contentType}`);
  if (r.encoding) lines.push(`Content-Encoding: ${r.encoding}`);
  if (r.extra !== undefined) lines.push(`X-Extra: ${r.extra}`);
  let payload: Buffer = body;
  switch (r.framing) {
    case 'length':
      lines.push(`Content-Length: ${body.length}`);
      break;
    case 'short-length':
      // Promises more than it sends: answered 408 once REQUEST_TIMEOUT_MS has passed.
      lines.push(`Content-Length: ${body.length + 5}`);
      break;
    case 'both':
      lines.push(`Content-Length: ${body.length}`, 'Transfer-Encoding: chunked');
      break;
    case 'bare-cr':
      lines.push('X-Bare: a\rb', `Content-Length: ${body.length}`);
      break;
    case 'chunked':
    case 'bad-chunk': {
      lines.push('Transfer-Encoding: chunked');
      const parts: Buffer[] = [];
      for (let at = 0; at < body.length; at += r.chunkSize) {
        const piece = body.subarray(at, at + r.chunkSize);
        const size = r.framing === 'bad-chunk' && at === 0 ? 'zz' : piece.length.toString(16);
        parts.push(Buffer.from(`${size}\r\n`), piece, Buffer.from('\r\n'));
      }
      parts.push(Buffer.from(r.framing === 'bad-chunk' && body.length === 0 ? 'q\r\n\r\n' : '0\r\n\r\n'));
      payload = Buffer.concat(parts);
      break;
    }
    case 'none':
      payload = Buffer.alloc(0);
      break;
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

describe('random raw requests over a socket', () => {
  const gw = useGateway('sqlite', { listen: true, env: { REQUEST_TIMEOUT_MS: '1000' } });

  it('never yield a 5xx, a hang, or an answer outside the documented shapes', async () => {
    await fc.assert(
      fc.asyncProperty(rawRequestArb, async (r) => {
        const what = `${r.method} ${JSON.stringify(r.path)} ${r.framing}`;
        const answer = await rawRequest(gw().baseUrl, [rawBytes(r, gw().merchant.api_key)], { waitMs: 5000 });
        assert.ok(answer.status !== null, `${what}: no answer within 5 s: ${JSON.stringify(answer.text)}`);
        assert.ok(answer.closedAfterMs !== null, `${what}: the connection stayed open`);
        const type = answer.headers['content-type'] ?? '';
        if (type.startsWith('text/html')) {
          assert.ok(/^\/(pay|p2p|cashier)\//.test(r.path), `${what}: an HTML answer off the pages`);
          assert.ok(answer.status! < 500, `${what} → ${answer.status}`);
          assert.match(answer.headers['x-request-id'] ?? '', /\S/, `${what}: x-request-id`);
          return;
        }
        if (answer.status === 303) return; // a sandbox button's redirect back to its page
        assertDocumentedShape(answer.status!, answer.headers, answer.body, what);
      }),
      { numRuns: 250 },
    );
  });
});
