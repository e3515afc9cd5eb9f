/** The comparison of a notification's signature with the one expected, shared by the providers' checks. */
import { timingSafeEqual } from 'node:crypto';

/** Canonical base64: what Node's encoder writes, padding included. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Whether `given` is the base64 signature `expected`, in its exact shape and in time that does not
 * depend on where they differ. Node's decoder is lenient (it stops at the first character that is
 * not base64, so `"<valid>, junk"` would decode to the valid bytes): the text must be canonical
 * base64 that encodes back to exactly what was sent.
 */
export function sameSignature(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0 || !BASE64.test(given)) return false;
  const a = Buffer.from(given, 'base64');
  if (a.toString('base64') !== given) return false;
  const b = Buffer.from(expected, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}
