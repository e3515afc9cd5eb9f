/**
 * The SDK's Standard Webhooks check: the openssl vectors (test/vectors/standard-webhooks.json),
 * callbacks signed by the published `standardwebhooks` package, and each failure as a typed error.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  handleCallback,
  PaygateSignatureError,
  verifyCallback,
  type SignatureFailure,
  type VerifyCallbackInput,
} from '../src/index.ts';

interface Vector {
  name: string;
  legacy: boolean;
  secret: string;
  webhook_id: string;
  timestamp: number;
  body: string;
  signature: string;
  token?: string;
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../../test/vectors/standard-webhooks.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

const [legacy, fresh] = [
  vectors.find((v) => v.legacy && v.token)!,
  vectors.find((v) => !v.legacy && v.token)!,
];

function headersOf(v: Vector, signature = v.signature): Record<string, string> {
  return {
    'webhook-id': v.webhook_id,
    'webhook-timestamp': String(v.timestamp),
    'webhook-signature': signature,
  };
}

/** Checks `input` at the vector's own time; returns the failure's reason, or 'ok'. */
function reasonOf(input: VerifyCallbackInput, atS: number): SignatureFailure | 'ok' {
  try {
    verifyCallback({ ...input, now: () => atS * 1000, throwOnFailure: true });
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof PaygateSignatureError, String(err));
    assert.ok(!err.message.includes('whsec_'), 'the message never quotes a secret');
    return err.reason;
  }
}

describe('verifyCallback with Standard Webhooks headers', () => {
  it('verifies every vector, secrets made before Standard Webhooks included', () => {
    for (const v of vectors) {
      assert.equal(
        reasonOf({ rawBody: v.body, headers: headersOf(v), secret: v.secret }, v.timestamp),
        'ok',
        v.name,
      );
      assert.equal(
        verifyCallback({
          rawBody: Buffer.from(v.body),
          headers: headersOf(v),
          secret: v.secret,
          now: () => v.timestamp * 1000,
        }),
        true,
      );
    }
  });

  it('prefers the Standard Webhooks signature when it is present, and falls back to the token only when told to', () => {
    const v = legacy;
    const bothHeaders = { ...headersOf(v), 'x-verification-token': v.token! };
    assert.equal(reasonOf({ rawBody: v.body, headers: bothHeaders, secret: v.secret }, v.timestamp), 'ok');
    const badStandard = { ...bothHeaders, 'webhook-signature': fresh.signature };
    assert.equal(
      reasonOf({ rawBody: v.body, headers: badStandard, secret: v.secret }, v.timestamp),
      'signature_mismatch',
    );
    const badToken = { ...bothHeaders, 'x-verification-token': fresh.token! };
    assert.equal(reasonOf({ rawBody: v.body, headers: badToken, secret: v.secret }, v.timestamp), 'ok');
    // The token alone: refused by default, accepted when the merchant turns the requirement off.
    assert.equal(verifyCallback({ rawBody: v.body, token: v.token, secret: v.secret }), false);
    const tokenOnly = { 'X-Verification-Token': v.token! };
    assert.equal(reasonOf({ rawBody: v.body, headers: tokenOnly, secret: v.secret }, 0), 'missing_header');
    const optedOut = { secret: v.secret, requireStandardWebhooks: false };
    assert.equal(verifyCallback({ rawBody: v.body, token: v.token, ...optedOut }), true);
    assert.equal(reasonOf({ rawBody: v.body, headers: tokenOnly, ...optedOut }, 0), 'ok');
  });

  it('refuses a stale or future timestamp beyond 5 minutes by default, or beyond the tolerance given', () => {
    const input = { rawBody: legacy.body, headers: headersOf(legacy), secret: legacy.secret };
    assert.equal(reasonOf(input, legacy.timestamp + 300), 'ok');
    assert.equal(reasonOf(input, legacy.timestamp + 301), 'stale_timestamp');
    assert.equal(reasonOf(input, legacy.timestamp - 301), 'stale_timestamp');
    assert.equal(reasonOf({ ...input, toleranceSeconds: 600 }, legacy.timestamp + 599), 'ok');
    const garbled = { ...headersOf(legacy), 'webhook-timestamp': '1674087231.5' };
    assert.equal(reasonOf({ ...input, headers: garbled }, legacy.timestamp), 'invalid_header');
  });

  it('refuses a missing header', () => {
    const { 'webhook-timestamp': _dropped, ...partial } = headersOf(legacy);
    const base = { rawBody: legacy.body, secret: legacy.secret };
    assert.equal(
      reasonOf({ ...base, headers: partial, token: legacy.token }, legacy.timestamp),
      'missing_header',
    );
    assert.equal(reasonOf({ ...base, headers: {} }, legacy.timestamp), 'missing_header');
    assert.equal(
      reasonOf({ ...base, token: legacy.token, requireStandardWebhooks: true }, legacy.timestamp),
      'missing_header',
    );
    const repeated = { ...headersOf(legacy), 'webhook-id': [legacy.webhook_id, legacy.webhook_id] };
    assert.equal(reasonOf({ ...base, headers: repeated }, legacy.timestamp), 'missing_header');
  });

  it('refuses a signature by another secret, and a body changed by one byte', () => {
    const input = { rawBody: legacy.body, headers: headersOf(legacy), secret: fresh.secret };
    assert.equal(reasonOf(input, legacy.timestamp), 'signature_mismatch');
    const changed = legacy.body.replace('412345678901', '412345678902');
    assert.equal(
      reasonOf({ ...input, rawBody: changed, secret: legacy.secret }, legacy.timestamp),
      'signature_mismatch',
    );
    assert.equal(
      verifyCallback({ ...input, now: () => legacy.timestamp * 1000 }),
      false,
      'false without throwOnFailure',
    );
  });

  it('accepts either signature during a rotation, under the new secret or the old one', () => {
    const both = headersOf(fresh, `${fresh.signature} ${legacy.signature}`);
    for (const secret of [fresh.secret, legacy.secret, [fresh.secret, legacy.secret]]) {
      assert.equal(reasonOf({ rawBody: fresh.body, headers: both, secret }, fresh.timestamp), 'ok');
    }
    assert.equal(
      reasonOf({ rawBody: fresh.body, headers: both, secret: 'whsec_AAAA' }, fresh.timestamp),
      'signature_mismatch',
    );
  });

  it('needs the raw body for the Standard Webhooks signature: a parsed body is refused, or falls back to the token when told to', () => {
    const body = JSON.parse(legacy.body) as Record<string, unknown>;
    const headers = { ...headersOf(legacy), 'x-verification-token': legacy.token! };
    assert.equal(reasonOf({ body, headers, secret: legacy.secret }, legacy.timestamp), 'raw_body_required');
    assert.equal(
      reasonOf({ body, headers, secret: legacy.secret, requireStandardWebhooks: false }, legacy.timestamp),
      'ok',
    );
  });

  it('checks webhook-signature in its exact shape: "<valid>, junk" and lenient base64 are refused', () => {
    const v = fresh;
    const check = (signature: string) =>
      reasonOf({ rawBody: v.body, headers: headersOf(v, signature), secret: v.secret }, v.timestamp);
    const mac = v.signature.slice(3);
    assert.equal(check(v.signature), 'ok');
    assert.equal(check(`${v.signature} ${legacy.signature}`), 'ok', 'two entries, one space apart');
    for (const shape of [
      `${v.signature}, junk`,
      `${v.signature},`,
      `${v.signature} junk`,
      `${v.signature}  ${legacy.signature}`,
      ` ${v.signature}`,
      `${v.signature} `,
      `${v.signature}\t`,
      `${v.signature},${legacy.signature}`,
      `v1,${mac.slice(0, -1)}`,
      `v1,${mac}=`,
      `v1,${mac.replace(/=$/, '')}`,
      `v1,${mac.slice(0, 42)}${String.fromCharCode(mac.charCodeAt(42) + 1)}=`,
      `v1,${Buffer.from(mac, 'base64').toString('base64url')}`,
      `v1a,${mac}`,
      `V1,${mac}`,
      mac,
    ]) {
      assert.equal(check(shape), 'invalid_header', JSON.stringify(shape));
    }
  });
});

describe('handleCallback with Standard Webhooks headers', () => {
  // Signed now by the published package, so the default 5 minutes' tolerance applies to a fresh callback.
  const signed = (secret: string, id: string, at: Date, body: string) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  });

  it('passes the webhook-id to your function and answers 200', async () => {
    const seen: (string | null)[] = [];
    const answer = await handleCallback(
      {
        method: 'POST',
        headers: signed(fresh.secret, 'msg_abc', new Date(), fresh.body),
        rawBody: fresh.body,
      },
      { secret: fresh.secret, onCallback: (_cb, ctx) => void seen.push(ctx.webhookId) },
    );
    assert.equal(answer.status, 200);
    assert.deepEqual(seen, ['msg_abc']);
  });

  it('answers 401 and tells onRejected the typed reason', async () => {
    const reasons: unknown[] = [];
    const options = {
      secret: fresh.secret,
      onCallback: () => assert.fail('not authentic'),
      onRejected: (_why: string, err?: unknown) =>
        reasons.push(err instanceof PaygateSignatureError ? err.reason : err),
    };
    const old = new Date(Date.now() - 10 * 60_000);
    for (const headers of [
      signed(fresh.secret, 'msg_old', old, fresh.body),
      signed(legacy.secret, 'msg_other', new Date(), fresh.body),
      {},
    ]) {
      const answer = await handleCallback({ method: 'POST', headers, rawBody: fresh.body }, options);
      assert.equal(answer.status, 401);
    }
    assert.deepEqual(reasons, ['stale_timestamp', 'signature_mismatch', 'missing_header']);
  });
});
