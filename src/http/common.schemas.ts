/**
 * Request parts shared by the payment endpoints (seed §2, CONTRACT §2 and §5). They depend on
 * the config (MAX_AMOUNT, whether http callback URLs are allowed), so they are built per app.
 */
import { Type, type Static, type StringOptions, type TSchema } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import { toRupees } from '../money.ts';

/** A schema that also accepts null, written as a JSON-Schema type list so errors stay simple. */
function nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type as string, 'null'] });
}

/** A string that is stored and passed on: `plainText` refuses NUL and unpaired surrogates. */
export function Text(options: StringOptions = {}) {
  return Type.String({ ...options, plainText: true });
}

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

  const OrderNo = (maxLength: number) =>
    Text({ minLength: 1, maxLength, description: `Your unique order number, 1 to ${maxLength} characters.` });

  return { Money, UserDetails, Url, OrderNo };
}

export type CommonSchemas = ReturnType<typeof commonSchemas>;

export const PaymentIdBody = Type.Object({ payment_id: Type.String({ minLength: 1, maxLength: 64 }) });

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

/** The error responses every authenticated payment route can give, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const s of [401, 403, 413, 415, 429, 500, 503, ...statuses]) {
    out[s] = s === 422 ? Type.Ref('ValidationError') : Type.Ref('ErrorEnvelope');
  }
  out[422] = Type.Ref('ValidationError');
  return out;
}
