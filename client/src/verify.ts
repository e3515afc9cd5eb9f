/**
 * Callback verification (docs/integration.md, "Verifying a callback"). By default a callback must
 * carry the Standard Webhooks headers, and its `webhook-signature` (over the id, the attempt's time
 * and the whole body) must match. Only with `requireStandardWebhooks: false` may a callback without
 * them pass on `X-Verification-Token` alone: the lowercase hex HMAC-SHA256, keyed by the webhook
 * secret, of `payment_id:amount:status`, with the amount as the text written in the body, which
 * signs neither the time, the currency nor the order number. Compared in constant time; anything
 * missing means "not verified".
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readBody } from './callback-json.js';
import { PaygateSignatureError, type SignatureFailure } from './errors.js';
import { checkStandardSignature, headerValue, standardHeaders, type HeaderBag } from './standard-webhooks.js';
import type { PaygateCallback, RefundCallback } from './types.js';

export interface VerifyCallbackInput {
  /** The body exactly as received (preferred: the amount is signed as written). */
  rawBody?: string | Uint8Array;
  /** The parsed body, when the raw bytes are gone; the amount is then written with two decimals. */
  body?: Record<string, unknown> | null;
  /** The `X-Verification-Token` header as your framework gives it; read from `headers` when absent. */
  token?: string | readonly string[] | null | undefined;
  /**
   * The request's headers. The Standard Webhooks signature is checked whenever the callback
   * carries one (it needs `rawBody`); the seed's token only when it does not and
   * `requireStandardWebhooks` is false.
   */
  headers?: HeaderBag;
  /** The webhook secret; several during a rotation (any one may match). */
  secret: string | readonly string[];
  /** How far `webhook-timestamp` may be from your clock, in seconds. Default 300. */
  toleranceSeconds?: number;
  /**
   * Refuse callbacks without the Standard Webhooks headers (`missing_header`), or with them but
   * only a parsed `body` (`raw_body_required`). Default true; false accepts the seed's
   * `X-Verification-Token` alone, which signs only `payment_id:amount:status`.
   */
  requireStandardWebhooks?: boolean;
  /** Throw a `PaygateSignatureError` saying why, instead of returning false. */
  throwOnFailure?: boolean;
  /** Your clock, in epoch milliseconds (for tests). Default Date.now. */
  now?: () => number;
}

/** The default tolerance of `webhook-timestamp`, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** What is signed, read from a callback body. */
export interface SignedFields {
  paymentId: string;
  amountText: string;
  status: string;
}

/** An amount as the gateway writes it in a callback: exactly two decimals. */
export function formatCallbackAmount(amount: number): string | null {
  if (!Number.isFinite(amount)) return null;
  const paise = Math.round(Math.abs(amount) * 100);
  if (!Number.isSafeInteger(paise)) return null;
  return `${amount < 0 ? '-' : ''}${Math.floor(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;
}

const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function nonEmptyString(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** The signed fields from raw body text, or null when one is missing or the body is not a JSON object. */
export function signedFieldsFromRaw(text: string): SignedFields | null {
  const read = readBody(text);
  if (!read) return null;
  const paymentId = signedId(read.value);
  const status = nonEmptyString(read.value.status);
  const rawAmount = read.raw.get('amount');
  if (!paymentId || !status || rawAmount === undefined) return null;
  let amountText: string | null = null;
  if (NUMBER_TEXT.test(rawAmount)) amountText = rawAmount;
  // An amount sent as a JSON string is signed as its text.
  else if (rawAmount.startsWith('"')) amountText = nonEmptyString(JSON.parse(rawAmount));
  return amountText === null ? null : { paymentId, amountText, status };
}

/** The signed fields from a parsed body, or null when one is missing. */
export function signedFieldsFromBody(body: Record<string, unknown>): SignedFields | null {
  const paymentId = signedId(body);
  const status = nonEmptyString(body.status);
  const amount = body.amount;
  const amountText = typeof amount === 'number' ? formatCallbackAmount(amount) : nonEmptyString(amount);
  if (!paymentId || !status || !amountText) return null;
  return { paymentId, amountText, status };
}

/** The token for `payment_id:amount:status` under `secret`: lowercase hex HMAC-SHA256. */
export function callbackToken(secret: string, fields: SignedFields): string {
  return createHmac('sha256', secret)
    .update(`${fields.paymentId}:${fields.amountText}:${fields.status}`)
    .digest('hex');
}

function singleToken(token: VerifyCallbackInput['token']): string | null {
  if (typeof token === 'string') return token.trim() || null;
  if (Array.isArray(token) && token.length === 1 && typeof token[0] === 'string')
    return token[0].trim() || null;
  return null;
}

function secretsOf(secret: VerifyCallbackInput['secret']): string[] {
  const list = typeof secret === 'string' ? [secret] : [...(secret ?? [])];
  // A missing secret is a set-up mistake, not a forged callback: say so loudly.
  if (list.length === 0 || list.some((s) => typeof s !== 'string' || s === '')) {
    throw new TypeError('verifyCallback: secret must be the non-empty webhook secret');
  }
  return list;
}

function fail(reason: SignatureFailure, message: string): never {
  throw new PaygateSignatureError(reason, message);
}

function rawText(rawBody: VerifyCallbackInput['rawBody']): string | null {
  if (rawBody === undefined || rawBody === null) return null;
  return typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
}

/** Returns when the callback is authentic; throws a `PaygateSignatureError` saying why not. */
function check(input: VerifyCallbackInput, secrets: string[]): void {
  const raw = rawText(input.rawBody);
  const standard = standardHeaders(input.headers);
  if (standard && raw !== null) {
    checkStandardSignature({
      rawBody: raw,
      headers: standard,
      secrets,
      toleranceSeconds: input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS,
      now: (input.now ?? Date.now)(),
    });
    return;
  }
  if (input.requireStandardWebhooks ?? true) {
    if (standard) fail('raw_body_required', 'the Standard Webhooks signature needs the raw body');
    fail('missing_header', 'the callback carries no webhook-id, webhook-timestamp and webhook-signature');
  }
  const token = singleToken(input.token ?? headerValue(input.headers, 'x-verification-token'));
  if (token === null) fail('missing_header', 'the X-Verification-Token header is missing or repeated');
  let fields: SignedFields | null = null;
  if (raw !== null) fields = signedFieldsFromRaw(raw);
  else if (input.body && typeof input.body === 'object') fields = signedFieldsFromBody(input.body);
  if (!fields) fail('invalid_body', 'the body is not a callback with payment_id, amount and status');
  const given = Buffer.from(token, 'utf8');
  let match = false;
  for (const secret of secrets) {
    const expected = Buffer.from(callbackToken(secret, fields), 'utf8');
    // Lengths are public (64 hex digits); only equal-length buffers go to the constant-time compare.
    if (given.length === expected.length && timingSafeEqual(given, expected)) match = true;
  }
  if (!match) fail('signature_mismatch', 'X-Verification-Token does not match the webhook secret');
}

/**
 * True when the callback is authentic: give `rawBody` and `headers`, and the Standard Webhooks
 * signature, which covers the whole body and the time of the attempt, is checked. With
 * `requireStandardWebhooks: false` a callback without those headers is checked on the seed's token
 * (`token`, or `X-Verification-Token` in `headers`), for which a parsed `body` works too, because
 * the gateway always writes the amount with two decimals. With `throwOnFailure`, a callback that
 * does not verify throws a `PaygateSignatureError` whose `reason` says why.
 */
export function verifyCallback(input: VerifyCallbackInput & { throwOnFailure: true }): true;
export function verifyCallback(input: VerifyCallbackInput): boolean;
export function verifyCallback(input: VerifyCallbackInput): boolean {
  const secrets = secretsOf(input.secret);
  try {
    check(input, secrets);
    return true;
  } catch (err) {
    if (err instanceof PaygateSignatureError && !input.throwOnFailure) return false;
    throw err;
  }
}

/**
 * Parses a callback body (trailing commas tolerated) into a `PaygateCallback`, or null when it is
 * not a JSON object. Verify first: this does not check the signature.
 */
/** Whether a parsed callback is a refund's (it carries `refund_id`). */
export function isRefundCallback(callback: PaygateCallback | RefundCallback): callback is RefundCallback {
  return 'refund_id' in callback;
}

/** A refund's callback is signed over its refund_id; any other over its payment_id. */
function signedId(body: Record<string, unknown>): string | null {
  return 'refund_id' in body ? nonEmptyString(body.refund_id) : nonEmptyString(body.payment_id);
}

export function parseCallback(rawBody: string | Uint8Array): PaygateCallback | RefundCallback | null {
  const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8');
  const read = readBody(text);
  return read ? (read.value as unknown as PaygateCallback | RefundCallback) : null;
}
