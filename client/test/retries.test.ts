/**
 * Retries against a real local HTTP server that answers as each test scripts it: network errors,
 * 5xx and 429 are retried (after Retry-After when given), other 4xx never are.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  Paygate,
  PaygateApiError,
  PaygateNetworkError,
  PaygateValidationError,
  SDK_VERSION,
  type PaygateOptions,
} from '../src/index.ts';

interface Seen {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
}

/** What the server does with the nth request (1-based). */
type Script = (nth: number, req: http.IncomingMessage, res: http.ServerResponse) => void;

const OK_BODY = {
  success: true,
  payment_id: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA',
  payment_url: 'http://gateway.test/pay/pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA',
  amount: 500,
  currency: 'INR',
  message: 'Payment created',
};

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'srv-req', ...headers });
  res.end(JSON.stringify(body));
}

function shapeA(status: number, errorCode: string, metadata: Record<string, unknown> = {}) {
  return {
    status: false,
    error: {
      code: status,
      error_code: errorCode,
      message: `${errorCode} happened`,
      metadata: { ...metadata, request_id: 'srv-req' },
    },
  };
}

const ORDER = { money: { amount: 500, currency: 'INR' }, merchant_order_no: 'order-1' };

describe('retries', () => {
  const seen: Seen[] = [];
  let script: Script = (_n, _req, res) => json(res, 200, OK_BODY);
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ at: Date.now(), headers: req.headers, body, url: req.url ?? '' });
      script(seen.length, req, res);
    });
  });
  let baseUrl = '';
  const client = (o: Partial<PaygateOptions> = {}) =>
    new Paygate({ apiKey: 'sk_test_key', baseUrl, timeoutMs: 2000, retryDelayMs: 20, ...o });

  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('waits for Retry-After after a 503, then returns the replayed original with the same request', async () => {
    script = (n, _req, res) =>
      n === 1
        ? json(res, 503, shapeA(503, 'SERVICE_UNAVAILABLE'), { 'retry-after': '1' })
        : json(res, 200, OK_BODY, { 'idempotent-replayed': 'true' });
    const created = await client().createOnsitePayin(ORDER);
    assert.equal(seen.length, 2);
    assert.ok(
      seen[1]!.at - seen[0]!.at >= 990,
      `retried after ${seen[1]!.at - seen[0]!.at} ms, Retry-After was 1 s`,
    );
    assert.equal(seen[1]!.body, seen[0]!.body);
    assert.equal(seen[1]!.headers['x-request-id'], seen[0]!.headers['x-request-id']);
    assert.equal(created.replayed, true);
    assert.equal(created.payment_id, OK_BODY.payment_id);
  });

  it('sends the key, JSON and its User-Agent to the operation path', async () => {
    script = (_n, _req, res) => json(res, 200, OK_BODY);
    const created = await client().createOnsitePayin(ORDER, { requestId: 'my-id-1' });
    assert.equal(created.replayed, false);
    const h = seen[0]!.headers;
    assert.equal(seen[0]!.url, '/payments/onsite/payin');
    assert.equal(h.authorization, 'Bearer sk_test_key');
    assert.equal(h['content-type'], 'application/json');
    assert.equal(h['user-agent'], `paygate-client-node/${SDK_VERSION}`);
    assert.equal(h['x-request-id'], 'my-id-1');
    assert.deepEqual(JSON.parse(seen[0]!.body), ORDER);
  });

  it('retries a 429 and 500s with growing backoff', async () => {
    script = (n, _req, res) => {
      if (n === 1) return json(res, 429, shapeA(429, 'RATE_LIMITED'), { 'retry-after': '0' });
      if (n <= 3) return json(res, 500, shapeA(500, 'INTERNAL_ERROR'));
      json(res, 200, { currency: 'INR', available: 10, held: 0 });
    };
    const balance = await client({ maxRetries: 3 }).getBalance();
    assert.deepEqual(balance, { currency: 'INR', available: 10, held: 0 });
    assert.equal(seen.length, 4);
    // Backoff n waits between half and all of 20·2^(n-1) ms.
    assert.ok(seen[2]!.at - seen[1]!.at >= 19);
    assert.ok(seen[3]!.at - seen[2]!.at >= 39);
  });

  it('gives up after maxRetries and throws the last error', async () => {
    script = (_n, _req, res) => json(res, 503, shapeA(503, 'SERVICE_UNAVAILABLE'));
    const err = await client({ maxRetries: 2 })
      .getPayinStatus('abc')
      .catch((e: unknown) => e);
    assert.ok(err instanceof PaygateApiError);
    assert.equal(err.status, 503);
    assert.equal(err.errorCode, 'SERVICE_UNAVAILABLE');
    assert.equal(seen.length, 3);
  });

  it('does not wait for a Retry-After longer than maxRetryDelayMs', async () => {
    script = (_n, _req, res) => json(res, 429, shapeA(429, 'RATE_LIMITED'), { 'retry-after': '120' });
    const err = await client({ maxRetryDelayMs: 5000 })
      .getBalance()
      .catch((e: unknown) => e);
    assert.ok(err instanceof PaygateApiError);
    assert.equal(err.errorCode, 'RATE_LIMITED');
    assert.equal(err.retryAfterMs, 120_000);
    assert.equal(seen.length, 1);
  });

  for (const [status, errorCode] of [
    [400, 'INSUFFICIENT_BALANCE'],
    [401, 'AUTH_INVALID_API_KEY'],
    [403, 'SANDBOX_ONLY'],
    [404, 'PAYMENT_NOT_FOUND'],
    [409, 'DUPLICATE_ORDER_NO'],
  ] as const) {
    it(`never retries a ${status}`, async () => {
      script = (_n, _req, res) => json(res, status, shapeA(status, errorCode, { payment_id: 'p1' }));
      const err = await client({ maxRetries: 3 })
        .createOnsitePayin(ORDER)
        .catch((e: unknown) => e);
      assert.ok(err instanceof PaygateApiError);
      assert.equal(err.status, status);
      assert.equal(err.code, status);
      assert.equal(err.errorCode, errorCode);
      assert.equal(err.message, `${errorCode} happened`);
      assert.deepEqual(err.metadata, { payment_id: 'p1', request_id: 'srv-req' });
      assert.equal(err.requestId, 'srv-req');
      assert.equal(seen.length, 1);
    });
  }

  it('never retries a 422 and gives its detail', async () => {
    const detail = [
      { loc: ['body', 'money', 'amount'], msg: 'Input should be greater than 0', type: 'greater_than' },
    ];
    script = (_n, _req, res) => json(res, 422, { detail });
    const err = await client({ maxRetries: 3 })
      .createOnsitePayin(ORDER)
      .catch((e: unknown) => e);
    assert.ok(err instanceof PaygateValidationError);
    assert.deepEqual(err.detail, detail);
    assert.equal(err.status, 422);
    assert.match(err.message, /body\.money\.amount/);
    assert.equal(seen.length, 1);
  });

  it('retries a dropped connection', async () => {
    script = (n, req, res) => (n === 1 ? req.socket.destroy() : json(res, 200, OK_BODY));
    const created = await client().createOnsitePayin(ORDER);
    assert.equal(created.payment_id, OK_BODY.payment_id);
    assert.equal(seen.length, 2);
  });

  it('retries after a timeout, and reports a timeout when every attempt hangs', async () => {
    script = (n, _req, res) => (n === 1 ? undefined : json(res, 200, OK_BODY));
    const created = await client({ timeoutMs: 300 }).createOnsitePayin(ORDER);
    assert.equal(created.payment_id, OK_BODY.payment_id);
    assert.equal(seen.length, 2);

    seen.length = 0;
    script = () => undefined;
    const err = await client({ timeoutMs: 200, maxRetries: 1 })
      .getBalance()
      .catch((e: unknown) => e);
    assert.ok(err instanceof PaygateNetworkError);
    assert.equal(err.timedOut, true);
    assert.equal(err.attempts, 2);
    assert.equal(seen.length, 2);
  });

  it('retries a proxy page that is not Paygate JSON, then reports it with errorCode null', async () => {
    script = (_n, _req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>Bad gateway</h1>');
    };
    const err = await client({ maxRetries: 1 })
      .getBalance()
      .catch((e: unknown) => e);
    assert.ok(err instanceof PaygateApiError);
    assert.equal(err.status, 502);
    assert.equal(err.errorCode, null);
    assert.equal(seen.length, 2);
  });

  it('stops at once when the caller aborts', async () => {
    script = (_n, _req, res) => json(res, 503, shapeA(503, 'SERVICE_UNAVAILABLE'), { 'retry-after': '5' });
    const controller = new AbortController();
    const pending = client({ maxRetries: 5 }).getBalance(undefined, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user gave up')), 200);
    await assert.rejects(pending, /user gave up/);
    assert.equal(seen.length, 1);
  });

  it('reports refused connections as a network error after the retries', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await new Paygate({
      apiKey: 'k',
      baseUrl: `http://127.0.0.1:${port}`,
      maxRetries: 2,
      retryDelayMs: 5,
    })
      .getBalance()
      .catch((e: unknown) => e);
    assert.ok(err instanceof PaygateNetworkError);
    assert.equal(err.attempts, 3);
    assert.equal(err.timedOut, false);
  });
});
