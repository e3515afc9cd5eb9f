/**
 * The callback handlers on real servers: Node's http server (the Express signature too) and
 * Fastify. Only an authentic callback gets 200, after the merchant's function ran.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import { Webhook } from 'standardwebhooks';
import {
  createCallbackHandler,
  PaygateSignatureError,
  paygateCallbackPlugin,
  type CallbackContext,
  type PaygateCallback,
  type RefundCallback,
} from '../src/index.ts';

interface Vector {
  name: string;
  secret: string;
  raw_body: string;
  token: string | null;
  valid: boolean;
  gateway_fields?: unknown;
}
const { vectors } = JSON.parse(
  readFileSync(new URL('../../test/vectors/callback-signatures.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };
const SECRET = vectors[0]!.secret;
const gatewayVector = vectors.find((v) => v.gateway_fields)!;
const trailingComma = vectors.find((v) => v.name.includes('trailing comma'))!;
const forged = vectors.find((v) => v.name === 'amount changed after signing')!;

type Seen = { callback: PaygateCallback; context: CallbackContext };

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function send(
  url: string,
  v: { raw_body: string; token: string | null },
  headers: Record<string, string> = {},
) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(v.token ? { 'x-verification-token': v.token } : {}),
      ...headers,
    },
    body: v.raw_body,
  });
}

describe('createCallbackHandler on node:http', () => {
  const seen: Seen[] = [];
  const rejected: string[] = [];
  let failNext = false;
  // These callbacks carry the seed's token alone: accepted only when the merchant says so.
  const handler = createCallbackHandler({
    secret: SECRET,
    requireStandardWebhooks: false,
    maxBodyBytes: 4096,
    onCallback: async (callback, context) => {
      if (failNext) {
        failNext = false;
        throw new Error('database is down');
      }
      seen.push({ callback, context });
    },
    onRejected: (reason) => rejected.push(reason),
  });
  const server = http.createServer((req, res) => void handler(req, res));
  // Express-style: a JSON body parser ran first and left only the parsed body.
  const parsedServer = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      Object.assign(req, { body: JSON.parse(text) });
      void handler(req, res);
    });
  });
  let url = '';
  let parsedUrl = '';
  before(async () => {
    url = await listen(server);
    parsedUrl = await listen(parsedServer);
  });
  after(() => {
    server.close();
    parsedServer.close();
  });

  it('answers 200 to an authentic callback after calling the function with the parsed body', async () => {
    const res = await send(url, gatewayVector, { 'x-callback-attempt': '2' });
    assert.equal(res.status, 200);
    const last = seen.at(-1)!;
    assert.deepEqual(last.callback, JSON.parse(gatewayVector.raw_body));
    assert.equal(typeof last.callback.amount, 'number');
    assert.equal(last.context.attempt, 2);
    assert.equal(last.context.rawBody, gatewayVector.raw_body);
  });

  it('accepts the interface sample with a trailing comma', async () => {
    const before = seen.length;
    assert.equal((await send(url, trailingComma)).status, 200);
    assert.equal(seen.length, before + 1);
    assert.equal(seen.at(-1)!.callback.payment_id, 'x');
  });

  it('answers 401 to a forged or unsigned callback and never calls the function', async () => {
    const before = seen.length;
    assert.equal((await send(url, forged)).status, 401);
    assert.equal((await send(url, { ...gatewayVector, token: null })).status, 401);
    assert.equal((await send(url, { raw_body: 'not json', token: gatewayVector.token })).status, 401);
    assert.equal(seen.length, before);
    assert.ok(rejected.filter((r) => r === 'signature').length >= 3);
  });

  it('hands a refund callback to onRefund, and answers 500 (retried) when there is none', async () => {
    const refunds = JSON.parse(
      readFileSync(new URL('../../test/vectors/refund-callback-signatures.json', import.meta.url), 'utf8'),
    ) as { vectors: Vector[] };
    const refundVector = refunds.vectors.find((v) => v.valid)!;
    const forgedRefund = refunds.vectors.find((v) => !v.valid)!;
    const got: RefundCallback[] = [];
    const withRefunds = createCallbackHandler({
      secret: refundVector.secret,
      requireStandardWebhooks: false,
      onCallback: () => assert.fail('a refund is not a payment callback'),
      onRefund: (refund) => void got.push(refund),
    });
    const refundServer = http.createServer((req, res) => void withRefunds(req, res));
    const refundUrl = await listen(refundServer);
    try {
      assert.equal((await send(refundUrl, refundVector)).status, 200);
      assert.deepEqual(got, [JSON.parse(refundVector.raw_body)]);
      assert.equal((await send(refundUrl, forgedRefund)).status, 401);
      assert.equal(got.length, 1);
    } finally {
      refundServer.close();
    }
    // The handler above has no onRefund: the refund is not acknowledged, so the gateway retries it.
    const before = seen.length;
    const mine = createCallbackHandler({
      secret: refundVector.secret,
      requireStandardWebhooks: false,
      onCallback: () => {},
    });
    const plain = http.createServer((req, res) => void mine(req, res));
    const plainUrl = await listen(plain);
    try {
      assert.equal((await send(plainUrl, refundVector)).status, 500);
    } finally {
      plain.close();
    }
    assert.equal(seen.length, before);
  });

  it('answers 500 when the function throws, so the gateway retries', async () => {
    failNext = true;
    assert.equal((await send(url, gatewayVector)).status, 500);
    assert.ok(rejected.includes('handler_error'));
    assert.equal((await send(url, gatewayVector)).status, 200);
  });

  it('answers 405 to other methods and 413 to an oversized body', async () => {
    assert.equal((await fetch(url)).status, 405);
    const big = {
      raw_body: JSON.stringify({ payment_id: 'x', amount: 1, status: 'SUCCESS', pad: 'x'.repeat(8000) }),
      token: 'aa',
    };
    assert.equal((await send(url, big)).status, 413);
  });

  it('verifies from the parsed body when a JSON parser ran first', async () => {
    const before = seen.length;
    assert.equal((await send(parsedUrl, gatewayVector)).status, 200);
    assert.equal(seen.length, before + 1);
    assert.equal((await send(parsedUrl, forged)).status, 401);
    assert.equal(seen.length, before + 1);
  });
});

describe('createCallbackHandler by default', () => {
  it('answers 401 to a callback without the webhook-* headers, and 200 to one with them', async () => {
    const seen: string[] = [];
    const reasons: unknown[] = [];
    const handler = createCallbackHandler({
      secret: SECRET,
      onCallback: (callback) => void seen.push(callback.payment_id),
      onRejected: (_why, err) => reasons.push(err instanceof PaygateSignatureError ? err.reason : err),
    });
    const server = http.createServer((req, res) => void handler(req, res));
    const url = await listen(server);
    try {
      assert.equal((await send(url, gatewayVector)).status, 401, 'the right token alone');
      assert.deepEqual(reasons, ['missing_header']);
      const id = 'msg_default';
      const headers = {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': new Webhook(SECRET).sign(id, new Date(), gatewayVector.raw_body),
      };
      assert.equal((await send(url, gatewayVector, headers)).status, 200);
      assert.deepEqual(seen, [JSON.parse(gatewayVector.raw_body).payment_id]);
    } finally {
      server.close();
    }
  });
});

describe('paygateCallbackPlugin on Fastify', () => {
  const seen: PaygateCallback[] = [];
  const app = Fastify();
  before(async () => {
    await app.register(
      paygateCallbackPlugin({
        secret: ['whsec_next', SECRET],
        requireStandardWebhooks: false,
        onCallback: (c) => void seen.push(c),
      }),
    );
    // The rest of the app keeps Fastify's own JSON parsing.
    app.post('/orders', async (req) => ({ echoed: req.body }));
    await app.ready();
  });
  after(() => app.close());

  const inject = (v: { raw_body: string; token: string | null }) =>
    app.inject({
      method: 'POST',
      url: '/paygate/callback',
      headers: {
        'content-type': 'application/json',
        ...(v.token ? { 'x-verification-token': v.token } : {}),
      },
      payload: v.raw_body,
    });

  it('answers 200 to authentic callbacks (trailing comma included) and 401 to forged ones', async () => {
    assert.equal((await inject(gatewayVector)).statusCode, 200);
    assert.equal((await inject(trailingComma)).statusCode, 200);
    assert.equal((await inject(forged)).statusCode, 401);
    assert.deepEqual(
      seen.map((c) => c.payment_id),
      [JSON.parse(gatewayVector.raw_body).payment_id, 'x'],
    );
  });

  it('leaves JSON parsing of the other routes alone', async () => {
    const res = await app.inject({ method: 'POST', url: '/orders', payload: { a: 1 } });
    assert.deepEqual(res.json(), { echoed: { a: 1 } });
  });
});
