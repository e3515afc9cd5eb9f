/**
 * What an outside review of the running gateway found, each as a regression test: merchant URLs
 * that could not be sent back as a Location, requests that never finish arriving, unlimited key
 * guessing and resends, the HTTP layer's own answers outside the documented shapes, lenient input,
 * balances past what a JSON number carries. Most of it goes over a real socket, where Node's own
 * HTTP rules apply (inject() skips them).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { AuthFailureLimit } from '../../src/http/auth.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, useGateway, type Gateway } from '../support/harness.ts';
import { cli } from '../support/process.ts';
import { rawRequest } from '../support/raw-http.ts';
import { BALANCE_LIMIT } from '../../src/wallet/ledger.ts';

let seq = 0;
const orderNo = () => `hd-${++seq}`;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function assertShapeA(body: unknown, code: number, errorCode: string): void {
  const b = body as {
    status: boolean;
    error: { code: number; error_code: string; metadata: { request_id: string } };
  };
  assert.equal(b.status, false);
  assert.equal(b.error.code, code);
  assert.equal(b.error.error_code, errorCode);
  assert.match(b.error.metadata.request_id, /\S/);
}

async function p2p(gw: Gateway, redirectUrl: string) {
  const res = await gw.post('/payments/p2p/payin', {
    money: { amount: 10 },
    merchant_order_no: orderNo(),
    redirect_url: redirectUrl,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id as string;
}

describe('HTTP layer over a socket', () => {
  const gw = useGateway('sqlite', { listen: true, env: { REQUEST_TIMEOUT_MS: '500' } });

  it("answers a request whose body stops arriving 408 in shape A with the caller's request id, and closes it", async () => {
    const { baseUrl, merchant } = gw();
    const answer = await rawRequest(
      baseUrl,
      [
        `POST /payments/onsite/payin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${merchant.api_key}\r\n` +
          'X-Request-Id: caller-408\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"m',
      ],
      { waitMs: 5000 },
    );
    assert.equal(answer.status, 408, answer.text);
    const body = JSON.parse(answer.body);
    assertShapeA(body, 408, 'REQUEST_TIMEOUT');
    assert.equal(answer.headers['x-request-id'], 'caller-408');
    assert.equal(body.error.metadata.request_id, 'caller-408');
    assert.ok(
      answer.closedAfterMs !== null && answer.closedAfterMs < 4000,
      `closed after ${answer.closedAfterMs} ms`,
    );
  });

  const malformed: [string, string][] = [
    [
      'Content-Length with Transfer-Encoding',
      'POST /payments/payin_status HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ],
    [
      'a bad chunk size',
      'POST /payments/payin_status HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n',
    ],
    ['NUL in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n'],
    [
      'two Content-Length headers',
      'POST /payments/payin_status HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ],
  ];
  for (const [what, bytes] of malformed) {
    it(`answers ${what} 400 BAD_REQUEST in shape A with a request id`, async () => {
      // With a valid key, so that the refusal is the parser's and not the key check's.
      const withKey = bytes.replace(
        'Host: x\r\n',
        `Host: x\r\nAuthorization: Bearer ${gw().merchant.api_key}\r\n`,
      );
      const answer = await rawRequest(gw().baseUrl, [Buffer.from(withKey, 'latin1')]);
      assert.equal(answer.status, 400, answer.text);
      assertShapeA(JSON.parse(answer.body), 400, 'BAD_REQUEST');
      assert.match(answer.headers['x-request-id'] ?? '', /\S/);
    });
  }

  it('answers an undecodable URL 400 BAD_REQUEST, and an over-long page id with the 400 page, both with a request id', async () => {
    const { baseUrl } = gw();
    const bad = await fetch(`${baseUrl}/payments/%zz`, { method: 'POST' });
    assert.equal(bad.status, 400);
    assertShapeA(await bad.json(), 400, 'BAD_REQUEST');
    assert.match(bad.headers.get('x-request-id') ?? '', /\S/);

    const long = await fetch(`${baseUrl}/pay/${'a'.repeat(101)}`);
    assert.equal(long.status, 400);
    assert.match(long.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await long.text(), /Something is wrong with this request/);
    assert.match(long.headers.get('x-request-id') ?? '', /\S/);
    assert.match(long.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  });

  it('refuses an encoded body 415, and gives API answers nosniff and no-store', async () => {
    const { baseUrl, merchant } = gw();
    const res = await fetch(`${baseUrl}/payments/payin_status`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${merchant.api_key}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: '{"payment_id":"x"}',
    });
    assert.equal(res.status, 415);
    assertShapeA(await res.json(), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const ok = await fetch(`${baseUrl}/wallet/balance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(ok.headers.get('cache-control'), 'no-store');
  });

  it('sends a P2P customer back to the normalised redirect_url, for any URL it accepted', async () => {
    const { baseUrl } = gw();
    const cases: [string, string][] = [
      ['https://пример.рф/return', 'https://xn--e1afmkfd.xn--p1ai/return'],
      ['https://shop.example/€/ret urn', 'https://shop.example/%E2%82%AC/ret%20urn'],
      ['https:\\\\evil.example\\ret', 'https://evil.example/ret'],
    ];
    for (const [given, normal] of cases) {
      const id = await p2p(gw(), given);
      const sim = await fetch(`${baseUrl}/p2p/${id}/simulate`, {
        method: 'POST',
        headers: FORM,
        body: 'status=SUCCESS',
        redirect: 'manual',
      });
      assert.equal(sim.status, 303, given);
      assert.ok(
        sim.headers.get('location')?.startsWith(`${normal}?payment_id=${id}&`),
        sim.headers.get('location') ?? '',
      );
      const page = await fetch(`${baseUrl}/p2p/${id}`, { redirect: 'manual' });
      assert.equal(page.status, 303, given);
      assert.ok(page.headers.get('location')?.startsWith(`${normal}?`));
    }
  });
});

describe('failed authentication per client address', () => {
  /** Set to hold the gateway's clock still (the key cache's 2 s must not run out during a long loop). */
  let frozen: number | null = null;
  const gw = useGateway('sqlite', {
    listen: true,
    env: { TRUST_PROXY: '127.0.0.1' },
    now: () => frozen ?? Date.now(),
  });
  const status = (key: string, from: string) =>
    fetch(`${gw().baseUrl}/wallet/balance`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'x-forwarded-for': from,
      },
      body: '{}',
    });

  it('answers 429 with Retry-After after 60 failures a minute; other addresses and known keys go on', async () => {
    const good = gw().merchant.api_key;
    assert.equal((await status(good, '203.0.113.7')).status, 200);
    for (let i = 0; i < 60; i++) {
      const res = await status(`sk_test_${'x'.repeat(20)}${String(i).padStart(4, '0')}`, '203.0.113.7');
      assert.equal(res.status, 401, `failure ${i + 1}`);
    }
    const limited = await status(`sk_test_${'y'.repeat(24)}`, '203.0.113.7');
    assert.equal(limited.status, 429);
    assertShapeA(await limited.json(), 429, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal((await status('not-even-a-key', '203.0.113.7')).status, 429);
    // The merchant's own key, verified from this address before, still works.
    assert.equal((await status(good, '203.0.113.7')).status, 200);
    // Another client (a different forwarded address through the trusted proxy) is not affected.
    assert.equal((await status(`sk_test_${'z'.repeat(24)}`, '198.51.100.9')).status, 401);
  });

  it('counts lookups sent all at once: of 100 concurrent unknown keys from one address at most 60 are looked up', async () => {
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        status(`sk_test_${'c'.repeat(20)}${String(i).padStart(4, '0')}`, '192.0.2.55'),
      ),
    );
    const codes = replies.map((r) => r.status);
    assert.ok(codes.filter((c) => c === 401).length <= 60, codes.join(','));
    assert.ok(codes.filter((c) => c === 429).length >= 40, codes.join(','));
  });

  it('lets 100 concurrent requests with a good key that is not cached yet through, from one address', async () => {
    const fresh = await gw().newMerchant();
    const replies = await Promise.all(Array.from({ length: 100 }, () => status(fresh.api_key, '192.0.2.77')));
    assert.deepEqual([...new Set(replies.map((r) => r.status))], [200]);
    assert.equal(
      (await status(`sk_test_${'n'.repeat(24)}`, '192.0.2.77')).status,
      401,
      'nothing was counted against it',
    );
  });

  it('counts an IPv6 client by its /64', () => {
    const limit = new AuthFailureLimit(() => 1_000);
    for (let i = 0; i < 60; i++) limit.fail(`2001:db8:1:2::${(i + 1).toString(16)}`);
    assert.ok(limit.blockedFor('2001:db8:1:2:ffff::1') > 0, 'another address in the same /64');
    assert.equal(limit.blockedFor('2001:db8:1:3::1'), 0, 'the next /64');
    limit.fail('::ffff:198.51.100.1');
    assert.equal(limit.blockedFor('198.51.100.1'), 0);
  });

  it('keeps a known key cached while thousands of unknown keys are tried', async () => {
    const { paygate, merchant } = gw();
    const merchants = paygate.services.merchants;
    frozen = Date.now();
    try {
      assert.ok(await merchants.authenticate(merchant.api_key));
      for (let i = 0; i < 12_000; i++)
        await merchants.authenticate(`sk_test_${'q'.repeat(16)}${String(i).padStart(6, '0')}`);
      assert.equal(merchants.isKnownKey(merchant.api_key), true);
      const again = merchants.authenticate(merchant.api_key);
      assert.ok(again && !(again instanceof Promise), 'answered from the cache, without a lookup');
    } finally {
      frozen = null;
    }
  });
});

describe('/metrics with METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789';
  const gw = useGateway('sqlite', { env: { METRICS_TOKEN: token } });

  it('answers only with the token as a bearer token', async () => {
    const get = (authorization?: string) =>
      gw().app.inject({ url: '/metrics', headers: authorization ? { authorization } : {} });
    const none = await get();
    assert.equal(none.statusCode, 401);
    assertShapeA(JSON.parse(none.body), 401, 'AUTH_MISSING');
    const wrong = await get(`Bearer ${token}x`);
    assert.equal(wrong.statusCode, 401);
    assertShapeA(JSON.parse(wrong.body), 401, 'AUTH_INVALID_API_KEY');
    assert.ok(!wrong.body.includes(token), 'the token is not echoed');
    const right = await get(`Bearer ${token}`);
    assert.equal(right.statusCode, 200);
    assert.match(right.body, /^# HELP /m);
  });
});

for (const kind of DATABASES) {
  describe(`hardening on ${kind}`, { skip: await skipFor(kind) }, () => {
    let clock = Date.now();
    const gw = useGateway(kind, { now: () => clock });

    it('redirects a settled P2P customer for 30 minutes, then shows the result with a link', async () => {
      const id = await p2p(gw(), 'https://shop.example/back');
      const sim = await gw().app.inject({
        method: 'POST',
        url: `/p2p/${id}/simulate`,
        headers: FORM,
        payload: 'status=SUCCESS',
      });
      assert.equal(sim.statusCode, 303);
      clock += 29 * 60_000;
      assert.equal((await gw().app.inject({ url: `/p2p/${id}` })).statusCode, 303);
      clock += 2 * 60_000;
      const later = await gw().app.inject({ url: `/p2p/${id}` });
      assert.equal(later.statusCode, 200);
      assert.equal(later.headers.location, undefined);
      assert.match(later.body, /Payment successful/);
      assert.match(later.body, /<a class="back" href="https:\/\/shop\.example\/back\?payment_id=/);
    });

    it("refuses a sandbox button's post from another origin, a null one, or another site", async () => {
      const { config } = gw();
      const origin = new URL(config.publicUrl).origin;
      const tries: [Record<string, string>, number][] = [
        [{ origin: 'https://evil.example' }, 403],
        [{ origin: 'null' }, 403],
        [{ 'sec-fetch-site': 'same-site' }, 403],
        [{ 'sec-fetch-site': 'cross-site', origin }, 403],
        // Refused before the body is read: not 415 for a type no page sends.
        [{ 'sec-fetch-site': 'cross-site', 'content-type': 'text/plain' }, 403],
        [{ 'sec-fetch-site': 'same-origin', origin: 'null' }, 303],
        [{ origin }, 303],
        [{}, 303],
      ];
      for (const [headers, expected] of tries) {
        const res = await gw().post('/payments/onsite/payin', {
          money: { amount: 5 },
          merchant_order_no: orderNo(),
        });
        const id = res.body.payment_id as string;
        const sim = await gw().app.inject({
          method: 'POST',
          url: `/pay/${id}/simulate`,
          headers: { ...FORM, ...headers },
          payload: 'status=SUCCESS',
        });
        assert.equal(sim.statusCode, expected, JSON.stringify(headers));
        const st = await gw().post('/payments/payin_status', { payment_id: id });
        assert.equal(st.body.status, expected === 303 ? 'SUCCESS' : 'PENDING');
      }
    });

    it('refuses control and format characters and blank order numbers (422 string_pattern_mismatch), and creates nothing', async () => {
      for (const bad of ['ORD\u202E1', 'ORD\t1', 'ORD\u200B1', '   ', 'a\u2028b', 'x\u0085y']) {
        const res = await gw().post('/payments/onsite/payin', {
          money: { amount: 5 },
          merchant_order_no: bad,
        });
        assert.equal(res.status, 422, JSON.stringify(bad));
        assert.equal(res.body.detail[0].type, 'string_pattern_mismatch');
        assert.deepEqual(res.body.detail[0].loc, ['body', 'merchant_order_no']);
      }
      const rows = await gw()
        .database.db.selectFrom('transactions')
        .select('merchant_order_no')
        .where('merchant_order_no', 'in', ['ORD\u202E1', 'ORD\t1', 'ORD\u200B1', '   '])
        .execute();
      assert.deepEqual(rows, []);
      const ok = await gw().post('/payments/onsite/payin', {
        money: { amount: 5 },
        merchant_order_no: ' ऑर्डर-12 ',
      });
      assert.equal(ok.status, 200, ok.text);
    });

    it('allows 5 resends of a transaction an hour through the API, then 429 with Retry-After; the operator is not limited', async () => {
      const m = await gw().newMerchant({ callbackUrl: 'https://shop.example/cb' });
      const res = await gw().post(
        '/payments/onsite/payin',
        { money: { amount: 5 }, merchant_order_no: orderNo() },
        { key: m.api_key },
      );
      const id = res.body.payment_id as string;
      assert.equal(
        (
          await gw().post(
            '/sandbox/payin/complete',
            { payment_id: id, status: 'SUCCESS' },
            { key: m.api_key },
          )
        ).status,
        200,
      );
      for (let i = 0; i < 5; i++) {
        const r = await gw().post('/callbacks/resend', { payment_id: id }, { key: m.api_key });
        assert.equal(r.status, 200, r.text);
      }
      const sixth = await gw().post('/callbacks/resend', { payment_id: id }, { key: m.api_key });
      assert.equal(sixth.status, 429);
      assertShapeA(sixth.body, 429, 'RATE_LIMITED');
      const wait = Number(sixth.headers['retry-after']);
      assert.ok(wait > 3500 && wait <= 3600, `Retry-After ${wait}`);
      await gw().paygate.services.callbacks.resend(id);
      clock += 3_601_000;
      assert.equal(
        (await gw().post('/callbacks/resend', { payment_id: id }, { key: m.api_key })).status,
        200,
      );
      const deliveries = await gw()
        .database.db.selectFrom('callback_deliveries')
        .select('id')
        .where('payment_id', '=', id)
        .execute();
      assert.equal(deliveries.length, 1 + 5 + 1 + 1);
    });

    it('refuses a credit past 2^53 − 1 paise, and a pay-in settlement that would pass it, changing nothing', async () => {
      const m = await gw().newMerchant();
      const wallets = gw().paygate.services.wallets;
      await wallets.topUp(m.merchant_id, 'INR', BALANCE_LIMIT - 500);
      await assert.rejects(wallets.topUp(m.merchant_id, 'INR', 501), /BALANCE_LIMIT|exceed/);
      const res = await gw().post(
        '/payments/onsite/payin',
        { money: { amount: 5.01 }, merchant_order_no: orderNo() },
        { key: m.api_key },
      );
      const settle = await gw().post(
        '/sandbox/payin/complete',
        { payment_id: res.body.payment_id, status: 'SUCCESS' },
        { key: m.api_key },
      );
      assert.equal(settle.status, 400, settle.text);
      assertShapeA(settle.body, 400, 'BALANCE_LIMIT');
      const st = await gw().post(
        '/payments/payin_status',
        { payment_id: res.body.payment_id },
        { key: m.api_key },
      );
      assert.equal(st.body.status, 'PENDING');
      const balance = await gw().post('/wallet/balance', {}, { key: m.api_key });
      assert.equal(balance.body.available, (BALANCE_LIMIT - 500) / 100);
      await wallets.topUp(m.merchant_id, 'INR', 500);
      assert.equal(
        (await gw().post('/wallet/balance', {}, { key: m.api_key })).body.available,
        BALANCE_LIMIT / 100,
      );
    });

    it('counts held money against the limit: a credit that would pass it once the hold returns is refused', async () => {
      const m = await gw().newMerchant();
      const wallets = gw().paygate.services.wallets;
      await wallets.topUp(m.merchant_id, 'INR', BALANCE_LIMIT - 1_000);
      const payout = await gw().post(
        '/payments/payout',
        {
          money: { amount: 5 },
          merchant_order_no: orderNo(),
          receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
        },
        { key: m.api_key },
      );
      assert.equal(payout.status, 200, payout.text);
      // 500 paise are held: available + held is still BALANCE_LIMIT − 1,000, so 1,000 fit and 1,001 do not.
      await assert.rejects(wallets.topUp(m.merchant_id, 'INR', 1_001), /exceed/);
      await wallets.topUp(m.merchant_id, 'INR', 1_000);
    });

    it('refuses a CLI credit past the limit (BALANCE_LIMIT, exit 1) and shows the balance exactly', async () => {
      const m = await gw().newMerchant();
      await gw().paygate.services.wallets.topUp(m.merchant_id, 'INR', BALANCE_LIMIT - 500);
      const env = { DATABASE_URL: gw().testDb.url };
      const refused = cli(
        ['wallet', 'credit', '--merchant', m.merchant_id, '--amount', '5.01', '--json'],
        env,
      );
      assert.equal(refused.status, 1, refused.stdout + refused.stderr);
      assert.equal(JSON.parse(refused.stdout || refused.stderr).error.code, 'BALANCE_LIMIT');
      const shown = cli(['wallet', 'show', '--merchant', m.merchant_id, '--json'], env);
      assert.equal(shown.status, 0, shown.stderr);
      assert.equal(shown.json.available, (BALANCE_LIMIT - 500) / 100);
      assert.equal(cli(['wallet', 'credit', '--merchant', m.merchant_id, '--amount', '5.00'], env).status, 0);
      assert.equal(
        cli(['wallet', 'show', '--merchant', m.merchant_id, '--json'], env).json.available,
        BALANCE_LIMIT / 100,
      );
    });

    it('takes the last of duplicate JSON keys, as JSON.parse does (docs/decisions.md)', async () => {
      const res = await gw().post(
        '/payments/onsite/payin',
        '{"money":{"amount":5},"merchant_order_no":"dup-first","merchant_order_no":"dup-last"}',
      );
      assert.equal(res.status, 200, res.text);
      const row = await gw()
        .database.db.selectFrom('transactions')
        .select('merchant_order_no')
        .where('payment_id', '=', res.body.payment_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.merchant_order_no, 'dup-last');
    });

    it('ledger verify sums exactly: a drift of one paisa past 2^53 is reported', async () => {
      const m = await gw().newMerchant();
      const wallets = gw().paygate.services.wallets;
      await wallets.topUp(m.merchant_id, 'INR', BALANCE_LIMIT);
      const { db } = gw().database;
      const where = (q: any) => q.where('merchant_id', '=', m.merchant_id).where('currency', '=', 'INR');
      // 2^53 + 1 and 2^53 are the same JavaScript number: only an exact sum tells them apart.
      await where(db.updateTable('wallets').set({ available: sql`available + 2` })).execute();
      const report = await wallets.verify();
      assert.equal(report.ok, false);
      assert.ok(
        report.problems.some((p) => p.includes(m.merchant_id) && p.includes('9007199254740993')),
        report.problems.join('\n'),
      );
      await where(db.updateTable('wallets').set({ available: sql`available - 2` })).execute();
      assert.equal((await wallets.verify()).ok, true);
    });

    it('does not log a client that hangs up mid-body as a storage outage', async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const logged = await startGateway(kind, { listen: true, logger: pino({ level: 'debug' }, sink) });
      try {
        const socket = await import('node:net').then((net) =>
          net.connect(Number(new URL(logged.baseUrl).port), '127.0.0.1'),
        );
        await new Promise((r) => socket.on('connect', r));
        socket.write(
          `POST /payments/onsite/payin HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${logged.merchant.api_key}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"money":',
        );
        await new Promise((r) => setTimeout(r, 100));
        socket.resetAndDestroy();
        await new Promise((r) => setTimeout(r, 300));
        const all = lines.join('');
        assert.doesNotMatch(all, /storage unavailable|unhandled error/);
        assert.match(all, /client error|aborted|request/);
      } finally {
        await logged.close();
      }
    });
  });
}
