/**
 * Setu's notification signature (`x-setu-signature`): base64 HMAC-SHA256 of the raw body with the
 * webhook secret, compared in constant time. The signing function is what Setu does, for tests and tools.
 */
import { createHmac } from 'node:crypto';
import { sameSignature } from '../same-signature.ts';

export function setuSignature(raw: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(raw).digest('base64');
}

export function verifySetu(raw: Buffer, signature: string | string[] | undefined, secret: string): boolean {
  return sameSignature(signature, setuSignature(raw, secret));
}
