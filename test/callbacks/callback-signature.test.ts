/**
 * The gateway's callback writer and signer against the shared vectors in
 * test/vectors/callback-signatures.json (the SDK's verifier reads the same file).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { callbackBody, signBody, signCallback } from '../../src/callbacks/signature.ts';

interface SignatureVector {
  name: string;
  secret: string;
  raw_body: string;
  message: string | null;
  token: string | null;
  valid: boolean;
  parsed_valid?: boolean;
  note?: string;
  gateway_fields?: {
    payment_id: string;
    merchant_order_no: string;
    amount_paise: number;
    currency: string;
    status: 'SUCCESS' | 'FAILED';
    utr: string;
  };
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../vectors/callback-signatures.json', import.meta.url), 'utf8'),
) as {
  vectors: SignatureVector[];
};

describe('callback signature vectors against the gateway signer', () => {
  it('has vectors of both kinds', () => {
    assert.ok(vectors.filter((v) => v.valid).length >= 5);
    assert.ok(vectors.filter((v) => !v.valid).length >= 10);
  });

  for (const v of vectors.filter((x) => x.gateway_fields)) {
    it(`writes and signs "${v.name}" exactly as the vector says`, () => {
      const f = v.gateway_fields!;
      const body = callbackBody({
        paymentId: f.payment_id,
        merchantOrderNo: f.merchant_order_no,
        amount: f.amount_paise,
        currency: f.currency,
        status: f.status,
        utr: f.utr,
      });
      assert.equal(body, v.raw_body);
      assert.equal(signBody(v.secret, body), v.token);
      const amountText = /"amount":([0-9.]+)/.exec(body)![1]!;
      assert.match(amountText, /^\d+\.\d\d$/, 'the amount is written with exactly two decimals');
      assert.equal(signCallback(v.secret, f.payment_id, amountText, f.status), v.token);
      assert.equal(v.valid, true);
    });
  }

  it('signs payment_id:amount:status as lowercase hex HMAC-SHA256 for every valid vector', () => {
    for (const v of vectors.filter((x) => x.valid)) {
      const [paymentId, amountText, status] = v.message!.split(':') as [string, string, string];
      const token = signCallback(v.secret, paymentId, amountText, status);
      assert.match(token, /^[0-9a-f]{64}$/);
      assert.equal(token, v.token, v.name);
    }
  });

  it('gives a different token when any signed part or the secret differs', () => {
    const v = vectors.find((x) => x.gateway_fields)!;
    const [paymentId, amountText, status] = v.message!.split(':') as [string, string, string];
    const base = signCallback(v.secret, paymentId, amountText, status);
    assert.notEqual(signCallback(`${v.secret}x`, paymentId, amountText, status), base);
    assert.notEqual(signCallback(v.secret, `${paymentId}x`, amountText, status), base);
    assert.notEqual(signCallback(v.secret, paymentId, `${amountText}0`, status), base);
    assert.notEqual(
      signCallback(v.secret, paymentId, amountText, status === 'SUCCESS' ? 'FAILED' : 'SUCCESS'),
      base,
    );
  });
});
