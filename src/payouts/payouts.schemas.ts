/** Request and response schemas of the payout endpoints (docs/integration.md §3 and §4). */
import { Type, type Static } from '@sinclair/typebox';
import { Text, type CommonSchemas } from '../http/common.schemas.ts';
import { statusResponse } from '../payments/payments.schemas.ts';

export function payoutSchemas(c: CommonSchemas) {
  const Receiver = Type.Object(
    {
      name: Text({ minLength: 1, maxLength: 100 }),
      account_no: Type.String({ pattern: '^[0-9]{9,18}$', description: '9 to 18 digits.' }),
      ifsc_code: Type.String({ pattern: '^[A-Z]{4}0[A-Z0-9]{6}$', examples: ['HDFC0001234'] }),
    },
    { title: 'PayoutReceiver' },
  );
  const Payout = Type.Object(
    {
      money: c.Money,
      merchant_order_no: c.OrderNo(32),
      receiver: Receiver,
      callback_url: Type.Optional(c.Url),
      user_details: Type.Optional(c.UserDetails),
    },
    {
      title: 'PayoutRequest',
      examples: [
        {
          money: { amount: 200, currency: 'INR' },
          merchant_order_no: 'payout-1001',
          receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
          callback_url: 'https://shop.example/paygate/callback',
        },
      ],
    },
  );
  return { Payout };
}

export type PayoutRequest = Static<ReturnType<typeof payoutSchemas>['Payout']>;

export const PayoutResponse = Type.Object(
  {
    success: Type.Boolean(),
    payment_id: Type.String(),
    amount: Type.Number(),
    currency: Type.String(),
    status: Type.String({ description: 'PENDING at creation' }),
    message: Type.String(),
  },
  { title: 'PayoutResponse' },
);
export type PayoutResponse = Static<typeof PayoutResponse>;

/** A payout's status: unlike a pay-in, it passes through PROCESSING while the bank has it. */
export const PayoutStatusResponse = Type.Object(
  {
    ...statusResponse(['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'], 'PayoutStatusResponse').properties,
    reversed: Type.Optional(
      Type.Boolean({
        description:
          "true when the beneficiary's bank sent a SUCCESS payout's money back (it is available again); status stays SUCCESS",
      }),
    ),
  },
  { title: 'PayoutStatusResponse' },
);
export type PayoutStatusResponse = Static<typeof PayoutStatusResponse>;
