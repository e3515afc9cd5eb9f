/** The comparison of a notification's signature with the one expected, shared by the providers' checks. */
import { timingSafeEqual } from 'node:crypto';

/** Whether `given` is the base64 signature `expected`, in time that does not depend on where they differ. */
export function sameSignature(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given.trim(), 'base64');
  const b = Buffer.from(expected, 'base64');
  return a.length === b.length && timingSafeEqual(a, b);
}
