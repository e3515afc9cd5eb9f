/**
 * The error vocabulary of the API (docs/integration.md §7). Services throw `AppError` with an `error_code`
 * from the fixed list; the central handler (`http/plumbing.ts`) turns it into shape A. Schema
 * violations become `ValidationError` and shape B. It sits beside `config.ts` and `money.ts`, not
 * in `http/`, because services throw it too and nothing below the routes imports from `http/`.
 */

export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_INVALID_CURRENCY: 400,
  INSUFFICIENT_BALANCE: 400,
  BALANCE_LIMIT: 400,
  AMOUNT_OUT_OF_RANGE: 400,
  CHANNEL_REJECTED: 400,
  REFUND_EXCEEDS_PAYMENT: 400,
  VPA_NOT_ROUTABLE: 400,
  AUTH_MISSING: 401,
  AUTH_INVALID_API_KEY: 401,
  SIGNATURE_INVALID: 401,
  MERCHANT_DISABLED: 403,
  SANDBOX_ONLY: 403,
  LIVE_CHANNEL_NOT_CONFIGURED: 403,
  PAYMENT_NOT_FOUND: 404,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  DUPLICATE_ORDER_NO: 409,
  INVALID_STATE: 409,
  DUPLICATE_REFUND_NO: 409,
  PAYMENT_NOT_REFUNDABLE: 409,
  PAYMENT_DISPUTED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  CHANNEL_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly errorCode: ErrorCode;
  readonly statusCode: number;
  readonly metadata: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    errorCode: ErrorCode,
    message: string,
    metadata: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.errorCode = errorCode;
    this.statusCode = ERROR_STATUS[errorCode];
    this.metadata = metadata;
    this.headers = headers;
  }
}

/** One entry of shape B, as pydantic v2 writes it. */
export interface ValidationIssue {
  loc: string[];
  msg: string;
  type: string;
}

export class ValidationError extends Error {
  readonly statusCode = 422;
  readonly detail: ValidationIssue[];

  constructor(detail: ValidationIssue[]) {
    super('Request validation failed');
    this.name = 'ValidationError';
    this.detail = detail;
  }
}

/** Shape A, the general error envelope. */
export interface ErrorEnvelope {
  status: false;
  error: { code: number; error_code: ErrorCode; message: string; metadata: Record<string, unknown> };
}

export function envelope(err: AppError, requestId: string): ErrorEnvelope {
  return {
    status: false,
    error: {
      code: err.statusCode,
      error_code: err.errorCode,
      message: err.message,
      metadata: { ...err.metadata, request_id: requestId },
    },
  };
}
