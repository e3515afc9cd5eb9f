/** The HTTP foundation seen from outside: auth, the two error shapes, request ids, operations endpoints. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, startGateway, useGateway } from '../support/harness.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import type { Tables } from '../../src/db/schema.ts';

const TABLES: (keyof Tables)[] = [
  'merchants',
  'api_keys',
  'wallets',
  'ledger_entries',
  'transactions',
  'transaction_events',
  'callback_deliveries',
  'callback_attempts',
];

const ONSITE = { money: { amount: 500, currency: 'INR' }, merchant_order_no: 'order-1' };

function assertShapeA(
  res: { status: number; body: any; headers: Record<string, unknown> },
  status: number,
  errorCode: string,
) {
  assert.equal(res.status, status);
  assert.equal(res.body.status, false);
  assert.equal(res.body.error.code, status);
  assert.equal(res.body.error.error_code, errorCode);
  assert.equal(typeof res.body.error.message, 'string');
  assert.ok(res.body.error.message.length > 0);
  assert.equal(res.body.error.metadata.request_id, res.headers['x-request-id']);
}

for (const kind of DATABASES) {
  describe(`foundation on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('answers 401 AUTH_MISSING without an Authorization header or with another scheme', async () => {
      assertShapeA(await gw().post('/payments/onsite/payin', ONSITE, { key: null }), 401, 'AUTH_MISSING');
      const basic = await gw().post('/payments/onsite/payin', ONSITE, {
        key: null,
        headers: { authorization: 'Basic abc' },
      });
      assertShapeA(basic, 401, 'AUTH_MISSING');
    });

    it('answers 401 AUTH_INVALID_API_KEY for an unknown key, and for a key after rotation', async () => {
      assertShapeA(
        await gw().post('/payments/onsite/payin', ONSITE, { key: 'sk_test_unknownunknownunknownunknown' }),
        401,
        'AUTH_INVALID_API_KEY',
      );
      assertShapeA(
        await gw().post('/payments/onsite/payin', ONSITE, { key: 'garbage' }),
        401,
        'AUTH_INVALID_API_KEY',
      );
      const m = await gw().newMerchant();
      assert.equal((await gw().post('/wallet/balance', {}, { key: m.api_key })).status, 200);
      const rotated = await gw().paygate.services.merchants.rotateKey(m.merchant_id);
      assertShapeA(await gw().post('/wallet/balance', {}, { key: m.api_key }), 401, 'AUTH_INVALID_API_KEY');
      assert.equal((await gw().post('/wallet/balance', {}, { key: rotated.api_key })).status, 200);
    });

    it('stores keys only as hashes: the raw key is nowhere in the database', async () => {
      const key = gw().merchant.api_key;
      assert.match(key, /^sk_test_[A-Za-z0-9]{40}$/);
      const { db } = gw().database;
      const keyRows = await db.selectFrom('api_keys').selectAll().execute();
      assert.ok(
        keyRows.some((r) => r.key_hash === createHash('sha256').update(key).digest('hex')),
        'the key is found by its SHA-256',
      );
      // Every row of every table, as text: the key, and the part after its prefix, appear nowhere.
      const secretPart = key.slice('sk_test_'.length);
      for (const table of TABLES) {
        const dump = JSON.stringify(await db.selectFrom(table).selectAll().execute());
        assert.ok(!dump.includes(key) && !dump.includes(secretPart), `${table} holds the raw key`);
      }
    });

    it('answers 403 MERCHANT_DISABLED for a disabled merchant', async () => {
      const m = await gw().newMerchant();
      await gw().paygate.services.merchants.setStatus(m.merchant_id, 'disabled');
      assertShapeA(await gw().post('/wallet/balance', {}, { key: m.api_key }), 403, 'MERCHANT_DISABLED');
      // The second request is answered from the key cache (without a database lookup): still 403.
      assertShapeA(await gw().post('/wallet/balance', {}, { key: m.api_key }), 403, 'MERCHANT_DISABLED');
    });

    it('answers 404 NOT_FOUND for an unknown path and 405 for another method on an API path', async () => {
      const res = await gw().app.inject({ method: 'POST', url: '/nowhere' });
      assertShapeA({ status: res.statusCode, body: res.json(), headers: res.headers }, 404, 'NOT_FOUND');
      const get = await gw().app.inject({ method: 'GET', url: '/payments/payin_status' });
      assertShapeA(
        { status: get.statusCode, body: get.json(), headers: get.headers },
        405,
        'METHOD_NOT_ALLOWED',
      );
      assert.equal(get.headers.allow, 'POST');
    });

    it('answers 413 for a body over 64 KiB and 415 for a body that is not JSON', async () => {
      const big = { ...ONSITE, filler: 'x'.repeat(70 * 1024) };
      assertShapeA(await gw().post('/payments/onsite/payin', big), 413, 'PAYLOAD_TOO_LARGE');
      const form = await gw().post('/payments/onsite/payin', 'a=b', {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assertShapeA(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('answers 422 shape B with every violation at once', async () => {
      const res = await gw().post('/payments/onsite/payin', {
        money: { amount: -1 },
        merchant_order_no: 'x'.repeat(33),
        callback_url: 'ftp://example.com/cb',
      });
      assert.equal(res.status, 422);
      const byLoc = Object.fromEntries(res.body.detail.map((d: any) => [d.loc.join('.'), d.type]));
      assert.deepEqual(byLoc, {
        'body.money.amount': 'greater_than',
        'body.merchant_order_no': 'string_too_long',
        'body.callback_url': 'url_scheme',
      });
      for (const d of res.body.detail) assert.equal(typeof d.msg, 'string');
    });

    it('answers 422 json_invalid for malformed JSON and missing for an absent body', async () => {
      const bad = await gw().post('/payments/onsite/payin', '{"money":');
      assert.equal(bad.status, 422);
      assert.equal(bad.body.detail[0].type, 'json_invalid');
      assert.equal(bad.body.detail[0].loc[0], 'body');
      const empty = await gw().post('/payments/onsite/payin', '', {
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(empty.status, 422);
      assert.deepEqual(empty.body.detail, [{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
      const missing = await gw().post('/payments/onsite/payin', { money: {} });
      assert.deepEqual(missing.body.detail.map((d: any) => `${d.loc.join('.')}:${d.type}`).sort(), [
        'body.merchant_order_no:missing',
        'body.money.amount:missing',
      ]);
    });

    it('echoes a sane x-request-id and replaces one that is not', async () => {
      const mine = await gw().post('/wallet/balance', {}, { headers: { 'x-request-id': 'req-abc.123' } });
      assert.equal(mine.headers['x-request-id'], 'req-abc.123');
      const insane = await gw().post(
        '/wallet/balance',
        {},
        { headers: { 'x-request-id': 'bad id with spaces' } },
      );
      assert.notEqual(insane.headers['x-request-id'], 'bad id with spaces');
      assert.match(String(insane.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });

    it('serves healthz, readyz, metrics and the OpenAPI document', async () => {
      const app = gw().app;
      assert.deepEqual((await app.inject('/healthz')).json(), { status: 'ok' });
      const ready = await app.inject('/readyz');
      assert.equal(ready.statusCode, 200);
      assert.equal(ready.json().database, kind);
      await gw().post('/wallet/balance', {});
      const metrics = (await app.inject('/metrics')).body;
      assert.match(
        metrics,
        /paygate_http_requests_total\{method="POST",route="\/wallet\/balance",status="200"\} \d+/,
      );
      assert.match(metrics, /paygate_http_request_duration_seconds_bucket/);
      const doc = (await app.inject('/openapi.json')).json();
      for (const p of [
        '/payments/onsite/payin',
        '/payments/offsite/payin',
        '/payments/p2p/payin',
        '/payments/payout',
        '/payments/payin_status',
        '/payments/payout_status',
        '/wallet/balance',
      ]) {
        assert.ok(doc.paths[p]?.post, `${p} is documented`);
      }
      assert.equal((await app.inject('/docs')).statusCode < 400, true);
    });

    it('reports the balance of a new merchant as zero', async () => {
      const res = await gw().post('/wallet/balance');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { currency: 'INR', available: 0, held: 0 });
    });
  });
}

describe('rate limit and unavailable storage', () => {
  it('answers 429 RATE_LIMITED in shape A with Retry-After once a key exceeds RATE_LIMIT_PER_MINUTE', async () => {
    const gw = await startGateway('sqlite', { env: { RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      for (let i = 0; i < 3; i++) assert.equal((await gw.post('/wallet/balance', {})).status, 200);
      const limited = await gw.post('/wallet/balance', {});
      assertShapeA(limited, 429, 'RATE_LIMITED');
      assert.match(String(limited.headers['retry-after']), /^\d+$/);
      // The limit is per key: another merchant is not affected.
      const other = await gw.newMerchant();
      assert.equal((await gw.post('/wallet/balance', {}, { key: other.api_key })).status, 200);
    } finally {
      await gw.close();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the database cannot be reached', async () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://root@127.0.0.1:1/paygate',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_PER_MINUTE: '0',
    });
    const database = openDatabase(config.databaseUrl);
    const { app } = await buildApp({ config, database, logger: false });
    try {
      const res = await app.inject({
        method: 'POST',
        url: '/wallet/balance',
        headers: { authorization: `Bearer sk_test_${'a'.repeat(40)}`, 'content-type': 'application/json' },
        payload: '{}',
      });
      const body = res.json();
      assert.equal(res.statusCode, 503);
      assert.equal(body.error.error_code, 'SERVICE_UNAVAILABLE');
      assert.equal(body.error.code, 503);
      assert.equal(res.headers['retry-after'], '5');
      assert.doesNotMatch(body.error.message, /ECONNREFUSED|127\.0\.0\.1|postgres/i);
      const ready = await app.inject('/readyz');
      assert.equal(ready.statusCode, 503);
    } finally {
      await app.close();
      await database.close();
    }
  });
});
