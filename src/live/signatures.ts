/**
 * The channels' notification signatures: base64 HMAC-SHA256 of the raw body (Setu, with its
 * webhook secret) or of the timestamp followed by the raw body (Cashfree, with the client secret).
 * Compared in constant time; the signing functions are what the providers do, for tests and tools.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a Cashfree timestamp may be from now: 5 minutes either way. */
export const CASHFREE_TIMESTAMP_WINDOW_MS = 5 * 60_000;

export function setuSignature(raw: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(raw).digest('base64');
}

export function cashfreeSignature(timestamp: string, raw: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(timestamp).update(raw).digest('base64');
}

/** Whether `given` is the base64 signature `expected`, in time that does not depend on where they differ. */
export function sameSignature(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given.trim(), 'base64');
  const b = Buffer.from(expected, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function verifySetu(raw: Buffer, signature: string | string[] | undefined, secret: string): boolean {
  return sameSignature(signature, setuSignature(raw, secret));
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
