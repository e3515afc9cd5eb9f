/**
 * The gateway's Standard Webhooks signer against known answers worked out with openssl
 * (test/vectors/standard-webhooks.json) and against the published `standardwebhooks` package.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  callbackHeaders,
  signingKey,
  signingSecretsAt,
  standardSignature,
} from '../../src/callbacks/standard-webhooks.ts';

interface Vector {
  name: string;
  legacy: boolean;
  secret: string;
  key_hex: string;
  webhook_id: string;
  timestamp: number;
  body: string;
  signature: string;
  token?: string;
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../vectors/standard-webhooks.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

describe('Standard Webhooks signatures', () => {
  it('has vectors for secrets made before Standard Webhooks and after', () => {
    assert.ok(vectors.some((v) => v.legacy) && vectors.some((v) => !v.legacy));
    for (const v of vectors.filter((x) => x.legacy)) assert.match(v.secret, /^whsec_[A-Za-z0-9]{40}$/);
    for (const v of vectors.filter((x) => !x.legacy)) assert.match(v.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  });

  for (const v of vectors) {
    it(`signs "${v.name}" as openssl does`, () => {
      assert.equal(signingKey(v.secret).toString('hex'), v.key_hex);
      assert.equal(standardSignature(v.secret, v.webhook_id, v.timestamp, v.body), v.signature);
      // The published library computes the same signature from the secret as shown to merchants.
      assert.equal(
        new Webhook(v.secret).sign(v.webhook_id, new Date(v.timestamp * 1000), v.body),
        v.signature,
      );
    });
  }

  it('writes the headers of an attempt: the token with the current secret, the id, the time, one signature', () => {
    const v = vectors.find((x) => x.token)!;
    const headers = callbackHeaders(
      { current: v.secret, previous: null, previousUntil: null },
      { eventId: v.webhook_id, body: v.body, attemptNo: 2, at: v.timestamp * 1000 + 999 },
    );
    assert.deepEqual(headers, {
      'x-verification-token': v.token,
      'x-callback-attempt': '2',
      'webhook-id': v.webhook_id,
      'webhook-timestamp': String(v.timestamp),
      'webhook-signature': v.signature,
    });
  });

  it('signs with the new secret and the previous one, space-separated, until the overlap ends', () => {
    const [fresh, old] = [vectors.find((x) => !x.legacy)!, vectors.find((x) => x.legacy)!];
    assert.equal(fresh.body, old.body);
    const secrets = { current: fresh.secret, previous: old.secret, previousUntil: old.timestamp * 1000 + 1 };
    const at = old.timestamp * 1000;
    const during = callbackHeaders(secrets, { eventId: old.webhook_id, body: old.body, attemptNo: 1, at });
    assert.equal(during['webhook-signature'], `${fresh.signature} ${old.signature}`);
    assert.equal(during['x-verification-token'], fresh.token);
    const after = callbackHeaders(secrets, {
      eventId: old.webhook_id,
      body: old.body,
      attemptNo: 1,
      at: at + 1,
    });
    assert.equal(after['webhook-signature'], fresh.signature);
    assert.deepEqual(signingSecretsAt({ ...secrets, previous: null }, at), [fresh.secret]);
  });
});
