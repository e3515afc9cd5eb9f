/**
 * What a failed call throws. `PaygateApiError` is an answer in shape A (or any other non-2xx
 * answer), `PaygateValidationError` is a 422 in shape B, and `PaygateNetworkError` means no
 * answer at all (refused, reset, timed out) after the retries.
 */
import type { ValidationIssue } from './types.js';

/** The base class of every error the SDK throws. */
export class PaygateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The gateway answered with an error in shape A (`{"status":false,"error":{…}}`). */
export class PaygateApiError extends PaygateError {
  /** The HTTP status. */
  readonly status: number;
  /** `error.code` of the body (the HTTP status, as the gateway writes it). */
  readonly code: number;
  /** `error.error_code`, e.g. INSUFFICIENT_BALANCE; null when the answer was not shape A (a proxy's 502 page). */
  readonly errorCode: string | null;
  /** `error.metadata`: details such as `available` and `requested`, and `request_id`. */
  readonly metadata: Record<string, unknown>;
  /** The `x-request-id` of the failed response; quote it to support. */
  readonly requestId: string | null;
  /** The Retry-After the gateway sent (429, 503), in milliseconds. */
  readonly retryAfterMs: number | null;

  constructor(init: {
    status: number;
    code: number;
    errorCode: string | null;
    message: string;
    metadata: Record<string, unknown>;
    requestId: string | null;
    retryAfterMs?: number | null;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.errorCode = init.errorCode;
    this.metadata = init.metadata;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

/** The gateway rejected the request body (HTTP 422, shape B): every faulty field is in `detail`. */
export class PaygateValidationError extends PaygateError {
  readonly status = 422;
  readonly detail: ValidationIssue[];
  readonly requestId: string | null;

  constructor(detail: ValidationIssue[], requestId: string | null) {
    const summary = detail
      .slice(0, 3)
      .map((d) => `${d.loc.join('.')}: ${d.msg}`)
      .join('; ');
    super(
      `Request validation failed${summary ? `: ${summary}` : ''}${detail.length > 3 ? ` (+${detail.length - 3} more)` : ''}`,
    );
    this.detail = detail;
    this.requestId = requestId;
  }
}

/** No HTTP answer: connection refused or reset, DNS failure, or the timeout, on every attempt. */
export class PaygateNetworkError extends PaygateError {
  /** How many attempts were made. */
  readonly attempts: number;
  /** True when the last attempt ran out of `timeoutMs`. */
  readonly timedOut: boolean;

  constructor(message: string, init: { attempts: number; timedOut: boolean; cause?: unknown }) {
    super(message, { cause: init.cause });
    this.attempts = init.attempts;
    this.timedOut = init.timedOut;
  }
}

/** Why a callback was not verified. */
export type SignatureFailure =
  /** A header the check needs is missing, or sent more than once. */
  | 'missing_header'
  /** `webhook-timestamp` is not a whole number of seconds. */
  | 'invalid_header'
  /** `webhook-timestamp` is further from your clock than the tolerance (a replayed or delayed callback). */
  | 'stale_timestamp'
  /** No signature matches under any of the secrets given (another secret, or a changed body). */
  | 'signature_mismatch'
  /** The body is not a callback the seed's token can be checked on. */
  | 'invalid_body'
  /** The Standard Webhooks signature covers the raw bytes, and only the parsed body was given. */
  | 'raw_body_required';

/** A callback that did not verify (`verifyCallback(…, throwOnFailure: true)` and the handlers' `onRejected`). */
export class PaygateSignatureError extends PaygateError {
  readonly reason: SignatureFailure;

  constructor(reason: SignatureFailure, message: string) {
    super(message);
    this.reason = reason;
  }
}
