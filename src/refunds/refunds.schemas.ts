/** Request and response schemas of the refund endpoints (docs/integration.md, Refunds; contract §12). */
import { Type, type Static } from '@sinclair/typebox';
import { nullable, Text, type CommonSchemas } from '../http/common.schemas.ts';

const RefundId = Type.String({ minLength: 1, maxLength: 64, description: 'The refund_id Paygate returned.' });

export function refundSchemas(c: CommonSchemas) {
  const Refund = Type.Object(
    {
      payment_id: Type.String({ minLength: 1, maxLength: 64, description: 'The SUCCESS pay-in to refund.' }),
      money: c.Money,
      merchant_refund_no: {
        ...c.OrderNo(36),
        description: 'Your unique refund number, 1 to 36 printable characters, not only spaces.',
      },
      reason: Type.Optional(nullable(Text({ maxLength: 100 }))),
      callback_url: Type.Optional(c.Url),
    },
    {
      title: 'RefundRequest',
      examples: [
        {
          payment_id: 'pQ7rT2mX9kL4vN8bC3zW6yH1jF5gD0sA',
          money: { amount: 100, currency: 'INR' },
          merchant_refund_no: 'refund-1001',
          reason: 'Returned item',
        },
      ],
    },
  );
  return { Refund };
}

export type RefundRequest = Static<ReturnType<typeof refundSchemas>['Refund']>;

export const RefundIdBody = Type.Object(
  { refund_id: RefundId },
  { examples: [{ refund_id: 'rK2mX9kL4vN8bC3zW6yH1jF5gD0sApQ7' }] },
);

export const RefundResponse = Type.Object(
  {
    success: Type.Boolean(),
    refund_id: Type.String(),
    payment_id: Type.String(),
    merchant_refund_no: Type.String(),
    amount: Type.Number(),
    currency: Type.String(),
    status: Type.String({ description: 'PENDING at creation' }),
    message: Type.String(),
  },
  { title: 'RefundResponse' },
);
export type RefundResponse = Static<typeof RefundResponse>;

const REFUND_STATUSES = ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'];

export const RefundStatusResponse = Type.Object(
  {
    refund_id: Type.String(),
    payment_id: Type.String(),
    merchant_refund_no: Type.String(),
    status: Type.Unsafe<'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED'>({
      type: 'string',
      enum: REFUND_STATUSES,
      description: REFUND_STATUSES.join(', '),
    }),
    money: Type.Object({ amount: Type.Number(), currency: Type.String() }),
    utr: Type.String({ description: 'The bank reference of the refund; "" until it succeeds' }),
  },
  { title: 'RefundStatusResponse' },
);
export type RefundStatusResponse = Static<typeof RefundStatusResponse>;
