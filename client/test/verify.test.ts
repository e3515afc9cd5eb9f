/**
 * The SDK's check of the seed's token against the shared vectors
 * (test/vectors/callback-signatures.json): what `requireStandardWebhooks: false` accepts, and that
 * by default the token alone verifies nothing.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  formatCallbackAmount,
  isRefundCallback,
  parseCallback,
  PaygateSignatureError,
  verifyCallback,
  type VerifyCallbackInput,
} from '../src/index.ts';

interface Vector {
  name: string;
  secret: string;
  raw_body: string;
  token: string | null;
  valid: boolean;
  parsed_valid?: boolean;
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../../test/vectors/callback-signatures.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

const hmac = (secret: string, msg: string) => createHmac('sha256', secret).update(msg).digest('hex');

/** The token alone, as a merchant that turned the Standard Webhooks headers' requirement off checks it. */
const verifyToken = (input: Omit<VerifyCallbackInput, 'requireStandardWebhooks'>) =>
  verifyCallback({ ...input, requireStandardWebhooks: false });

describe('verifyCallback by default', () => {
  it('refuses a callback without the webhook-* headers, however right its token', () => {
    const v = vectors.find((x) => x.valid)!;
    assert.equal(verifyToken({ rawBody: v.raw_body, token: v.token, secret: v.secret }), true);
    assert.equal(verifyCallback({ rawBody: v.raw_body, token: v.token, secret: v.secret }), false);
    const headers = { 'content-type': 'application/json', 'x-verification-token': v.token! };
    assert.equal(verifyCallback({ rawBody: v.raw_body, headers, secret: v.secret }), false);
    assert.throws(
      () => verifyCallback({ rawBody: v.raw_body, headers, secret: v.secret, throwOnFailure: true }),
      (err: unknown) => err instanceof PaygateSignatureError && err.reason === 'missing_header',
    );
    const body = JSON.parse(v.raw_body) as Record<string, unknown>;
    assert.equal(verifyCallback({ body, token: v.token, secret: v.secret }), false);
  });
});

describe('verifyCallback', () => {
  it('answers every vector from the raw body as the vector says', () => {
    for (const v of vectors) {
      assert.equal(verifyToken({ rawBody: v.raw_body, token: v.token, secret: v.secret }), v.valid, v.name);
      // Bytes work the same as text.
      assert.equal(
        verifyToken({ rawBody: Buffer.from(v.raw_body), token: v.token, secret: v.secret }),
        v.valid,
        v.name,
      );
    }
  });

  it('answers every vector from the parsed body (amount re-written with two decimals)', () => {
    for (const v of vectors) {
      const parsed = parseCallback(v.raw_body) as Record<string, unknown> | null;
      const expected = parsed === null ? false : (v.parsed_valid ?? v.valid);
      // A repeated key is only detectable in the raw text; the parsed body keeps the last value.
      if (v.name.includes('repeated')) continue;
      assert.equal(verifyToken({ body: parsed, token: v.token, secret: v.secret }), expected, v.name);
    }
  });

  it('accepts the token as a one-element header array and refuses several values', () => {
    const v = vectors.find((x) => x.valid)!;
    assert.equal(verifyToken({ rawBody: v.raw_body, token: [v.token!], secret: v.secret }), true);
    assert.equal(verifyToken({ rawBody: v.raw_body, token: [v.token!, v.token!], secret: v.secret }), false);
  });

  it('accepts either secret during a rotation, and neither when both are wrong', () => {
    const v = vectors.find((x) => x.valid)!;
    assert.equal(verifyToken({ rawBody: v.raw_body, token: v.token, secret: ['whsec_new', v.secret] }), true);
    assert.equal(
      verifyToken({ rawBody: v.raw_body, token: v.token, secret: ['whsec_new', 'whsec_older'] }),
      false,
    );
  });

  it('throws on a missing secret rather than rejecting every callback silently', () => {
    const v = vectors[0]!;
    assert.throws(() => verifyToken({ rawBody: v.raw_body, token: v.token, secret: '' }), TypeError);
    assert.throws(() => verifyToken({ rawBody: v.raw_body, token: v.token, secret: [] }), TypeError);
  });

  it('is false without a body', () => {
    const v = vectors[0]!;
    assert.equal(verifyToken({ token: v.token, secret: v.secret }), false);
  });

  it('signs an amount sent as a JSON string as its text', () => {
    const raw = '{"payment_id":"abc","amount":"500.00","status":"SUCCESS"}';
    assert.equal(verifyToken({ rawBody: raw, token: hmac('s', 'abc:500.00:SUCCESS'), secret: 's' }), true);
    assert.equal(verifyToken({ rawBody: raw, token: hmac('s', 'abc:500:SUCCESS'), secret: 's' }), false);
  });

  it('ignores a key named "amount" inside strings and nested objects', () => {
    const raw =
      '{"note":"\\"amount\\":1","payment_id":"abc","meta":{"amount":2},"amount":3.10,"status":"FAILED"}';
    assert.equal(verifyToken({ rawBody: raw, token: hmac('s', 'abc:3.10:FAILED'), secret: 's' }), true);
  });

  it('formats amounts the way the gateway writes them', () => {
    assert.equal(formatCallbackAmount(500), '500.00');
    assert.equal(formatCallbackAmount(500.5), '500.50');
    assert.equal(formatCallbackAmount(0.29), '0.29');
    assert.equal(formatCallbackAmount(1.15), '1.15');
    assert.equal(formatCallbackAmount(4.35), '4.35');
    assert.equal(formatCallbackAmount(10000000), '10000000.00');
    assert.equal(formatCallbackAmount(Number.NaN), null);
  });

  it('parses a callback with a trailing comma and refuses what is not an object', () => {
    assert.deepEqual(parseCallback('{"payment_id":"x","amount":500.00,"status":"SUCCESS",}'), {
      payment_id: 'x',
      amount: 500,
      status: 'SUCCESS',
    });
    assert.equal(parseCallback('[1,2]'), null);
    assert.equal(parseCallback('{"a":'), null);
    assert.equal(parseCallback('{"a":1,"a":2}'), null);
  });
});

describe('verifyCallback for refunds', () => {
  const refunds = JSON.parse(
    readFileSync(new URL('../../test/vectors/refund-callback-signatures.json', import.meta.url), 'utf8'),
  ) as { vectors: Vector[] };

  it('answers every refund vector as it says: signed over refund_id:amount:status', () => {
    for (const v of refunds.vectors) {
      assert.equal(verifyToken({ rawBody: v.raw_body, token: v.token, secret: v.secret }), v.valid, v.name);
      const body = JSON.parse(v.raw_body) as Record<string, unknown>;
      assert.equal(verifyToken({ body, token: v.token, secret: v.secret }), v.valid, `${v.name} (parsed)`);
    }
    const ok = refunds.vectors.find((v) => v.valid)!;
    const parsed = parseCallback(ok.raw_body)!;
    assert.ok(isRefundCallback(parsed));
    assert.equal(parsed.refund_id, JSON.parse(ok.raw_body).refund_id);
    assert.equal(isRefundCallback(parseCallback(vectors[0]!.raw_body)!), false);
  });
});
