/**
 * Standard Webhooks verification (https://www.standardwebhooks.com): `webhook-signature` holds
 * space-separated `v1,` + base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.body`, keyed by the
 * base64 decoding of the secret's text after `whsec_`. Written here rather than imported so the
 * SDK keeps no runtime dependencies; the gateway's tests check it against the published package.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PaygateSignatureError } from './errors.js';

/** Headers as frameworks give them: names in any case, a value or a list of values. */
export type HeaderBag = Record<string, string | readonly string[] | undefined>;

export interface StandardHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

export const STANDARD_HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** One header's single value (a list of one counts); undefined when absent or sent several times. */
export function headerValue(headers: HeaderBag | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  let v = headers[name];
  if (v === undefined) {
    const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
    v = key === undefined ? undefined : headers[key];
  }
  if (Array.isArray(v)) return v.length === 1 && typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** The three Standard Webhooks headers; null when none was sent. Throws when only some were. */
export function standardHeaders(headers: HeaderBag | undefined): StandardHeaders | null {
  const [id, timestamp, signature] = STANDARD_HEADER_NAMES.map((n) => headerValue(headers, n));
  const present = STANDARD_HEADER_NAMES.filter(
    (n) => headers && Object.keys(headers).some((k) => k.toLowerCase() === n),
  );
  if (present.length === 0) return null;
  if (!id || !timestamp || !signature) {
    const missing = STANDARD_HEADER_NAMES.filter((n) => !headerValue(headers, n));
    throw new PaygateSignatureError(
      'missing_header',
      `callback header ${missing.join(', ')} is missing or repeated`,
    );
  }
  return { id, timestamp, signature };
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/** One entry of `webhook-signature`: `v1,` and the base64 of a 32-byte HMAC, written as base64 writes it. */
const ENTRY = /^v1,([A-Za-z0-9+/]{43}=)$/;

/**
 * The HMACs a `webhook-signature` carries: one or more `v1,<base64>` entries, one space apart, each
 * base64 that decodes to 32 bytes and encodes back to the same text. Anything else (a comma or text
 * after an entry, another separator, a version this SDK does not know, base64 with stray bits) is
 * `invalid_header`: a signature is checked in its exact shape, never read leniently.
 */
export function signaturesOf(header: string): Buffer[] {
  const macs = header.split(' ').map((entry) => {
    const b64 = ENTRY.exec(entry)?.[1];
    const mac = b64 === undefined ? null : Buffer.from(b64, 'base64');
    return mac !== null && mac.length === 32 && mac.toString('base64') === b64 ? mac : null;
  });
  if (macs.length === 0 || macs.some((m) => m === null)) {
    throw new PaygateSignatureError(
      'invalid_header',
      'webhook-signature is not one or more "v1,<base64 HMAC>" entries separated by single spaces',
    );
  }
  return macs as Buffer[];
}

export interface StandardCheck {
  rawBody: string;
  headers: StandardHeaders;
  secrets: readonly string[];
  toleranceSeconds: number;
  /** Now, in epoch milliseconds. */
  now: number;
}

/** Returns when a signature matches under one of the secrets and the timestamp is within tolerance; throws otherwise. */
export function checkStandardSignature(c: StandardCheck): void {
  if (!/^\d{1,15}$/.test(c.headers.timestamp)) {
    throw new PaygateSignatureError('invalid_header', 'webhook-timestamp is not a whole number of seconds');
  }
  const skew = Math.abs(Math.floor(c.now / 1000) - Number(c.headers.timestamp));
  if (skew > c.toleranceSeconds) {
    throw new PaygateSignatureError(
      'stale_timestamp',
      `webhook-timestamp is ${skew} s from this clock (tolerance ${c.toleranceSeconds} s)`,
    );
  }
  const signed = `${c.headers.id}.${c.headers.timestamp}.${c.rawBody}`;
  const given = signaturesOf(c.headers.signature);
  let match = false;
  for (const secret of c.secrets) {
    const expected = createHmac('sha256', keyOf(secret)).update(signed).digest();
    // Lengths are public (32 bytes); only equal-length buffers go to the constant-time compare.
    for (const g of given) if (g.length === expected.length && timingSafeEqual(g, expected)) match = true;
  }
  if (!match) {
    throw new PaygateSignatureError(
      'signature_mismatch',
      'no webhook-signature matches the webhook secret (another secret, or the body was changed)',
    );
  }
}
