/**
 * Cashfree's notification signature (`x-webhook-signature`): base64 HMAC-SHA256 of
 * `x-webhook-timestamp` followed by the raw body, with the webhook secret (by default the client
 * secret), compared in constant time. The signing function is what Cashfree does, for tests and tools.
 *
 * An old timestamp is accepted: Cashfree retries a webhook for hours after a failed delivery (and
 * disables the URL after repeated failures), and a notification applies at most once, so a replay
 * changes nothing. A timestamp more than 5 minutes ahead of this clock is refused (CONTRACT §10).
 */
import { createHmac } from 'node:crypto';
import { sameSignature } from '../same-signature.ts';

/** How far ahead of now a Cashfree timestamp may be: 5 minutes (clocks differ a little). */
export const CASHFREE_TIMESTAMP_AHEAD_MS = 5 * 60_000;

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
  if (typeof timestamp !== 'string' || !/^\d{1,16}$/.test(timestamp)) return false;
  if (Number(timestamp) - now > CASHFREE_TIMESTAMP_AHEAD_MS) return false;
  return sameSignature(signature, cashfreeSignature(timestamp, raw, secret));
}
