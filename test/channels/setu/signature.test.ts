/**
 * Setu's notification signature against known answers worked out outside the code (OpenSSL, see
 * test/vectors/setu-signatures.json): Paygate's verifier and signer, and the fake Setu's own signer
 * that the live tests send with, must all agree with them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setuSignature, verifySetu } from '../../../src/channels/setu/setu.signature.ts';
import { fakeSetuSignature } from '../../support/fake-setu.ts';

interface SetuVector {
  name: string;
  secret: string;
  raw_body: string;
  signature: string;
  valid: boolean;
}

const { vectors } = JSON.parse(
  readFileSync(new URL('../../vectors/setu-signatures.json', import.meta.url), 'utf8'),
) as { vectors: SetuVector[] };

describe('Setu notification signatures against OpenSSL vectors', () => {
  it('has vectors of both kinds, a hex digest among the invalid ones', () => {
    assert.ok(vectors.filter((v) => v.valid).length >= 4);
    assert.ok(vectors.some((v) => !v.valid && /^[0-9a-f]{64}$/.test(v.signature)));
  });

  for (const v of vectors) {
    it(`${v.valid ? 'accepts' : 'refuses'}: ${v.name}`, () => {
      assert.equal(verifySetu(Buffer.from(v.raw_body, 'utf8'), v.signature, v.secret), v.valid);
    });
  }

  it("signs as OpenSSL does, in Paygate's code and in the fake's", () => {
    for (const v of vectors.filter((x) => x.valid)) {
      assert.equal(setuSignature(v.raw_body, v.secret), v.signature, v.name);
      assert.equal(fakeSetuSignature(v.raw_body, v.secret), v.signature, v.name);
    }
  });

  it('refuses a valid signature in any other shape: "<valid>, junk", trailing text, no padding, a space', () => {
    for (const v of vectors.filter((x) => x.valid)) {
      const raw = Buffer.from(v.raw_body, 'utf8');
      for (const shape of [
        `${v.signature}, junk`,
        `${v.signature}x`,
        v.signature.replace(/=+$/, ''),
        ` ${v.signature}`,
      ])
        assert.equal(verifySetu(raw, shape, v.secret), false, `${v.name}: ${shape}`);
    }
  });

  it('refuses a missing header and a repeated one', () => {
    const v = vectors.find((x) => x.valid)!;
    const raw = Buffer.from(v.raw_body, 'utf8');
    assert.equal(verifySetu(raw, undefined, v.secret), false);
    assert.equal(verifySetu(raw, [v.signature, v.signature], v.secret), false);
  });
});
