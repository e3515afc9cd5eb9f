/**
 * The gateway's refund callback writer and signer against vectors worked out with openssl
 * (test/vectors/refund-callback-signatures.json; the SDK's verifier reads the same file).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { refundCallbackBody, signBody } from '../../src/callbacks/signature.ts';

interface Vector {
  name: string;
  secret: string;
  raw_body: string;
  token: string;
  valid: boolean;
  gateway_fields?: {
    refund_id: string;
    payment_id: string;
    merchant_refund_no: string;
    amount_paise: number;
    currency: string;
    status: 'SUCCESS' | 'FAILED';
    utr: string;
  };
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../vectors/refund-callback-signatures.json', import.meta.url), 'utf8'),
) as { vectors: Vector[] };

describe('refund callback bodies and signatures', () => {
  it('writes each vector body byte for byte and signs it as openssl did', () => {
    const written = vectors.filter((v) => v.gateway_fields);
    assert.ok(written.length >= 2);
    for (const v of written) {
      const f = v.gateway_fields!;
      const body = refundCallbackBody({
        refundId: f.refund_id,
        paymentId: f.payment_id,
        merchantRefundNo: f.merchant_refund_no,
        amount: f.amount_paise,
        currency: f.currency,
        status: f.status,
        utr: f.utr,
      });
      assert.equal(body, v.raw_body, v.name);
      assert.equal(signBody(v.secret, body), v.token, v.name);
    }
  });

  it("never signs a refund's body over the pay-in's payment_id", () => {
    for (const v of vectors.filter((x) => !x.valid))
      assert.notEqual(signBody(v.secret, v.raw_body), v.token, v.name);
  });
});
