/**
 * Request parts shared by the payment endpoints (docs/integration.md §1–§3). They depend on
 * the config (MAX_AMOUNT, whether http callback URLs are allowed), so they are built per app.
 */
import { Type, type Static, type StringOptions, type TSchema } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import { toRupees } from '../money.ts';

/** A schema that also accepts null, written as a JSON-Schema type list so errors stay simple. */
export function nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });
}

/** A string that is stored and passed on: `plainText` refuses NUL and unpaired surrogates. */
export function Text(options: StringOptions = {}) {
  return Type.String({ ...options, plainText: true });
}

/**
 * Printable text with something besides spaces (docs/integration.md §2): no control characters
 * (NUL included), no format characters (zero-width and bidirectional controls such as U+202E, which
 * make an order number shown on the customer's page read differently from what is stored), no
 * unpaired surrogates, no line or paragraph separators; all 422 `string_pattern_mismatch`. The empty
 * string passes here because `minLength` refuses it in its own words: one error per field.
 */
const PRINTABLE = '^(?:(?=.*\\S)[^\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}]+)?$';

export function commonSchemas(config: Config) {
  const urlSchemes = config.allowPrivateCallbackUrls ? ['https', 'http'] : ['https'];
  const Url = nullable(Text({ maxLength: 512, urlParses: true, urlSchemes }));

  const Money = Type.Object(
    {
      amount: Type.Number({
        exclusiveMinimum: 0,
        maximum: toRupees(config.maxAmountPaise),
        maxDecimalPlaces: 2,
        description: 'Amount in rupees, at most 2 decimals.',
        examples: [500],
      }),
      currency: Type.Optional(nullable(Type.String({ description: 'Defaults to INR.', examples: ['INR'] }))),
    },
    { title: 'Money' },
  );

  const UserDetails = nullable(
    Type.Object(
      {
        phone_number: Type.Optional(nullable(Text({ maxLength: 20 }))),
        user_name: Type.Optional(nullable(Text({ maxLength: 100 }))),
        email: Type.Optional(nullable(Text({ maxLength: 254, emailAddress: true }))),
      },
      { title: 'UserDetails' },
    ),
  );

  // The pattern already refuses what `plainText` would (NUL, unpaired surrogates).
  const OrderNo = (maxLength: number) =>
    Type.String({
      minLength: 1,
      maxLength,
      pattern: PRINTABLE,
      description: `Your unique order number, 1 to ${maxLength} printable characters, not only spaces.`,
    });

  /**
   * A status query: a payment by the payment_id Paygate gave, or by the merchant's own order number
   * (CONTRACT §9); exactly one of the two (`exactlyOne`, a 422 otherwise).
   */
  const StatusBody = (orderNoMax: number) =>
    Type.Object(
      {
        payment_id: Type.Optional(
          Type.String({ minLength: 1, maxLength: 64, description: 'The payment_id Paygate answered with.' }),
        ),
        merchant_order_no: Type.Optional({
          ...OrderNo(orderNoMax),
          description: 'Your order number, instead of payment_id.',
        }),
      },
      {
        exactlyOne: ['payment_id', 'merchant_order_no'],
        description: 'Exactly one of payment_id and merchant_order_no.',
        examples: [{ payment_id: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA' }, { merchant_order_no: 'order-1001' }],
      },
    );

  return { Money, UserDetails, Url, OrderNo, StatusBody };
}

export type CommonSchemas = ReturnType<typeof commonSchemas>;

/** Shape A, for the OpenAPI document. */
export const ErrorEnvelopeSchema = Type.Object(
  {
    status: Type.Literal(false),
    error: Type.Object({
      code: Type.Integer(),
      error_code: Type.String(),
      message: Type.String(),
      metadata: Type.Record(Type.String(), Type.Unknown()),
    }),
  },
  { $id: 'ErrorEnvelope', title: 'Error (shape A)' },
);

/** Shape B, for the OpenAPI document. */
export const ValidationErrorSchema = Type.Object(
  {
    detail: Type.Array(
      Type.Object({ loc: Type.Array(Type.String()), msg: Type.String(), type: Type.String() }),
    ),
  },
  { $id: 'ValidationError', title: 'Validation error (shape B)' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'VALIDATION_INVALID_CURRENCY (metadata.supported_currencies) or INSUFFICIENT_BALANCE (metadata.available, metadata.requested)',
  401: 'AUTH_MISSING (no or malformed Authorization header) or AUTH_INVALID_API_KEY (unknown or revoked key)',
  403: 'MERCHANT_DISABLED, SANDBOX_ONLY or LIVE_CHANNEL_NOT_CONFIGURED',
  404: "PAYMENT_NOT_FOUND: unknown payment_id, another merchant's, or one of the other kind",
  409: 'DUPLICATE_ORDER_NO (merchant_order_no used with another request; metadata.payment_id) or INVALID_STATE (already final)',
  413: 'PAYLOAD_TOO_LARGE: body over 64 KiB',
  415: 'UNSUPPORTED_MEDIA_TYPE: body is not application/json',
  422: 'Request validation failed (shape B): every violation, with pydantic-style type words',
  429: 'RATE_LIMITED, with Retry-After',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE: storage unreachable, with Retry-After',
};

const RESPONSE_HEADERS = {
  'x-request-id': {
    type: 'string',
    description: "The caller's x-request-id when it sent a sane one, else a fresh one",
  },
};

/** The error responses a route can give, each described, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of [...new Set([401, 403, 413, 415, 422, 429, 500, 503, ...statuses])].sort()) {
    const ref = Type.Ref(s === 422 ? 'ValidationError' : 'ErrorEnvelope');
    const headers =
      s === 429 || s === 503
        ? {
            ...RESPONSE_HEADERS,
            'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying' },
          }
        : RESPONSE_HEADERS;
    out[s] = Type.Unsafe({ ...ref, description: ERROR_DESCRIPTIONS[s] ?? 'Error', headers });
  }
  return out;
}

/** Describes a success response: its text and the headers it may carry. */
export function success<T extends TSchema>(
  schema: T,
  description: string,
  headers: Record<string, string> = {},
): T {
  const described: Record<string, unknown> = { ...RESPONSE_HEADERS };
  for (const [name, text] of Object.entries(headers)) described[name] = { type: 'string', description: text };
  return { ...schema, description, headers: described };
}

/** The headers of a creation response. */
export const CREATION_HEADERS = {
  'Idempotent-Replayed':
    'true when this is the original response of an earlier request with the same merchant_order_no and body',
};
