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
  const given = c.headers.signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'utf8'));
  let match = false;
  for (const secret of c.secrets) {
    const expected = Buffer.from(createHmac('sha256', keyOf(secret)).update(signed).digest('base64'), 'utf8');
    // Lengths are public (44 base64 characters); only equal-length buffers go to the constant-time compare.
    for (const g of given) if (g.length === expected.length && timingSafeEqual(g, expected)) match = true;
  }
  if (!match) {
    throw new PaygateSignatureError(
      'signature_mismatch',
      'no webhook-signature matches the webhook secret (another secret, or the body was changed)',
    );
  }
}
