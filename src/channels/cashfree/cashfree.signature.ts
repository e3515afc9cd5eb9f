/**
 * Cashfree's notification signature (`x-webhook-signature`): base64 HMAC-SHA256 of
 * `x-webhook-timestamp` followed by the raw body, with the webhook secret (by default the client
 * secret), compared in constant time. The signing function is what Cashfree does, for tests and tools.
 */
import { createHmac } from 'node:crypto';
import { sameSignature } from '../same-signature.ts';

/** How far a Cashfree timestamp may be from now: 5 minutes either way. */
export const CASHFREE_TIMESTAMP_WINDOW_MS = 5 * 60_000;

export function cashfreeSignature(timestamp: string, raw: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(timestamp).update(raw).digest('base64');
}

export function verifyCashfree(
  raw: Buffer,
  timestamp: string | string[] | undefined,
  signature: string | string[] | undefined,
  secret: string,
  now: number,
): boolean {
  if (typeof timestamp !== 'string' || !/^\d{1,16}$/.test(timestamp.trim())) return false;
  if (Math.abs(now - Number(timestamp.trim())) > CASHFREE_TIMESTAMP_WINDOW_MS) return false;
  return sameSignature(signature, cashfreeSignature(timestamp.trim(), raw, secret));
}
