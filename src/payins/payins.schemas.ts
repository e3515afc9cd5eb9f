/** Request and response schemas of the pay-in endpoints (docs/integration.md §2 and §4). */
import { Type, type Static } from '@sinclair/typebox';
import type { CommonSchemas } from '../http/common.schemas.ts';
import { statusResponse } from '../payments/payments.schemas.ts';

const EXAMPLE = {
  money: { amount: 500, currency: 'INR' },
  merchant_order_no: 'order-1001',
  callback_url: 'https://shop.example/paygate/callback',
  user_details: { phone_number: '+919812345678', user_name: 'Asha Rao', email: 'asha@example.com' },
};

export function payinSchemas(c: CommonSchemas) {
  const common = {
    money: c.Money,
    callback_url: Type.Optional(c.Url),
    phone: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: 20,
        plainText: true,
        deprecated: true,
        description: 'Deprecated: use user_details.phone_number.',
      }),
    ),
    user_details: Type.Optional(c.UserDetails),
  };
  const Onsite = Type.Object(
    { ...common, merchant_order_no: c.OrderNo(32) },
    { title: 'OnsitePayinRequest', examples: [EXAMPLE] },
  );
  const Offsite = Type.Object(
    { ...common, merchant_order_no: c.OrderNo(36) },
    { title: 'OffsitePayinRequest', examples: [EXAMPLE] },
  );
  const P2P = Type.Object(
    { ...common, merchant_order_no: c.OrderNo(36), redirect_url: Type.Optional(c.Url) },
    {
      title: 'P2PPayinRequest',
      examples: [{ ...EXAMPLE, redirect_url: 'https://shop.example/orders/1001' }],
    },
  );
  return { Onsite, Offsite, P2P };
}

export type PayinSchemas = ReturnType<typeof payinSchemas>;
export type P2PPayinRequest = Static<PayinSchemas['P2P']>;
export type PayinRequest = Static<PayinSchemas['Onsite']> & { redirect_url?: string | null };

export const PagePayinResponse = Type.Object(
  {
    success: Type.Boolean(),
    payment_id: Type.String(),
    payment_url: Type.String(),
    amount: Type.Number(),
    currency: Type.String(),
    message: Type.String(),
  },
  { title: 'PayinResponse' },
);
export type PagePayinResponse = Static<typeof PagePayinResponse>;

export const OffsitePayinResponse = Type.Object(
  {
    success: Type.Boolean(),
    payment_id: Type.String(),
    data: Type.Object({
      qrCode: Type.String({ description: 'PNG data URL of the UPI intent.' }),
      cashier_url: Type.String(),
      cashier_string: Type.String({ description: 'UPI intent: upi://pay?pa=…&pn=…&am=…&cu=…&tr=…&tn=…' }),
      deep_links: Type.Object({
        upi: Type.String(),
        gpay: Type.String(),
        phonepe: Type.String(),
        paytm: Type.String(),
      }),
    }),
    amount: Type.Number(),
    currency: Type.String(),
    message: Type.String(),
  },
  { title: 'OffsitePayinResponse' },
);
export type OffsitePayinResponse = Static<typeof OffsitePayinResponse>;

export const PayinStatusResponse = statusResponse(['PENDING', 'SUCCESS', 'FAILED'], 'PayinStatusResponse');
export type PayinStatusView = Static<typeof PayinStatusResponse>;
