/**
 * Every operation the SDK calls, as data: its path, and the field names, types, required-ness
 * and nullability of its request and response. The client takes its paths from here; the
 * `Same<…>` lines below stop the build when `types.ts` and these descriptions disagree; and the
 * SDK's drift test compares these descriptions with the gateway's `/openapi.json`.
 */
import {
  arr,
  bool,
  deprecated,
  int,
  map,
  nullable,
  num,
  obj,
  optional,
  str,
  type Field,
  type Infer,
  type Same,
} from './shape.js';
import type * as T from './types.js';

const Money = obj({ amount: num(), currency: optional(nullable(str())) });
const UserDetails = nullable(
  obj({
    phone_number: optional(nullable(str())),
    user_name: optional(nullable(str())),
    email: optional(nullable(str())),
  }),
);
const payinCommon = {
  money: Money,
  merchant_order_no: str(),
  callback_url: optional(nullable(str())),
  phone: optional(nullable(deprecated(str()))),
  user_details: optional(UserDetails),
};

const PAYIN_STATUSES = ['PENDING', 'SUCCESS', 'FAILED'] as const;
const PAYOUT_STATUSES = ['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'] as const;
const FINAL_STATUSES = ['SUCCESS', 'FAILED'] as const;
const CALLBACK_STATUSES = ['SUCCESS', 'FAILED', 'REVERSED'] as const;

export const OnsitePayinRequest = obj(payinCommon);
export const OffsitePayinRequest = obj(payinCommon);
export const P2PPayinRequest = obj({ ...payinCommon, redirect_url: optional(nullable(str())) });

export const PagePayinResponse = obj({
  success: bool(),
  payment_id: str(),
  payment_url: str(),
  amount: num(),
  currency: str(),
  message: str(),
});

export const OffsitePayinResponse = obj({
  success: bool(),
  payment_id: str(),
  data: obj({
    qrCode: str(),
    cashier_url: str(),
    cashier_string: str(),
    deep_links: obj({ upi: str(), gpay: str(), phonepe: str(), paytm: str() }),
  }),
  amount: num(),
  currency: str(),
  message: str(),
});

export const PayoutRequest = obj({
  money: Money,
  merchant_order_no: str(),
  receiver: obj({ name: str(), account_no: str(), ifsc_code: str() }),
  callback_url: optional(nullable(str())),
  user_details: optional(UserDetails),
});

export const PayoutResponse = obj({
  success: bool(),
  payment_id: str(),
  amount: num(),
  currency: str(),
  status: str(PAYOUT_STATUSES),
  message: str(),
});

export const StatusRequest = obj({ payment_id: optional(str()), merchant_order_no: optional(str()) });

const statusFields = <S extends readonly string[]>(statuses: S) => ({
  status: str(statuses),
  money: obj({ amount: num(), currency: str() }),
  channel_txn_id: str(),
  utr: str(),
});
export const PayinStatusResponse = obj(statusFields(PAYIN_STATUSES));
export const PayoutStatusResponse = obj({ ...statusFields(PAYOUT_STATUSES), reversed: optional(bool()) });

export const BalanceRequest = obj({ currency: optional(nullable(str())) });
export const Balance = obj({ currency: str(), available: num(), held: num() });

export const SandboxCompleteRequest = obj({ payment_id: str(), status: str(FINAL_STATUSES) });
export const SandboxPayoutCompleteRequest = obj({ payment_id: str(), status: str(CALLBACK_STATUSES) });
export const SandboxCompleteResponse = obj({
  payment_id: str(),
  ...statusFields([...PAYIN_STATUSES, 'PROCESSING'] as const),
  reversed: optional(bool()),
});

export const RefundRequest = obj({
  payment_id: str(),
  money: Money,
  merchant_refund_no: str(),
  reason: optional(nullable(str())),
  callback_url: optional(nullable(str())),
});

export const RefundResponse = obj({
  success: bool(),
  refund_id: str(),
  payment_id: str(),
  merchant_refund_no: str(),
  amount: num(),
  currency: str(),
  status: str(PAYOUT_STATUSES),
  message: str(),
});

export const RefundStatusRequest = obj({ refund_id: str() });
export const RefundStatusResponse = obj({
  refund_id: str(),
  payment_id: str(),
  merchant_refund_no: str(),
  status: str(PAYOUT_STATUSES),
  money: obj({ amount: num(), currency: str() }),
  utr: str(),
});
export const SandboxRefundCompleteRequest = obj({ refund_id: str(), status: str(FINAL_STATUSES) });

export const CallbackResendRequest = obj({ payment_id: optional(str()), refund_id: optional(str()) });
export const CallbackResendResponse = obj({
  success: bool(true),
  payment_id: optional(str()),
  refund_id: optional(str()),
  delivery_id: str(),
  status: str(['pending'] as const),
});

/** The callback body (not in the OpenAPI document; compared with the gateway's own writer in tests). */
export const PaygateCallback = obj({
  payment_id: str(),
  merchant_order_no: str(),
  amount: num(),
  currency: str(),
  status: str(CALLBACK_STATUSES),
  utr: str(),
});

/** A refund's callback body (compared with the gateway's own writer in tests). */
export const RefundCallback = obj({
  refund_id: str(),
  payment_id: str(),
  merchant_refund_no: str(),
  amount: num(),
  currency: str(),
  status: str(FINAL_STATUSES),
  utr: str(),
});

/** Shape A. */
export const ErrorEnvelope = obj({
  status: bool(false),
  error: obj({ code: int(), error_code: str(), message: str(), metadata: map() }),
});

/** Shape B. */
export const ValidationErrorBody = obj({
  detail: arr(obj({ loc: arr(str()), msg: str(), type: str() })),
});

export interface Operation {
  readonly path: string;
  readonly request: Field;
  readonly response: Field;
}

/** The operations, by SDK method name. All are POST with a JSON body. */
export const OPERATIONS = {
  createOnsitePayin: {
    path: '/payments/onsite/payin',
    request: OnsitePayinRequest,
    response: PagePayinResponse,
  },
  createOffsitePayin: {
    path: '/payments/offsite/payin',
    request: OffsitePayinRequest,
    response: OffsitePayinResponse,
  },
  createP2PPayin: { path: '/payments/p2p/payin', request: P2PPayinRequest, response: PagePayinResponse },
  createPayout: { path: '/payments/payout', request: PayoutRequest, response: PayoutResponse },
  getPayinStatus: { path: '/payments/payin_status', request: StatusRequest, response: PayinStatusResponse },
  getPayoutStatus: {
    path: '/payments/payout_status',
    request: StatusRequest,
    response: PayoutStatusResponse,
  },
  getBalance: { path: '/wallet/balance', request: BalanceRequest, response: Balance },
  createRefund: { path: '/payments/refund', request: RefundRequest, response: RefundResponse },
  refundStatus: {
    path: '/payments/refund_status',
    request: RefundStatusRequest,
    response: RefundStatusResponse,
  },
  resendCallback: {
    path: '/callbacks/resend',
    request: CallbackResendRequest,
    response: CallbackResendResponse,
  },
  completeSandboxPayin: {
    path: '/sandbox/payin/complete',
    request: SandboxCompleteRequest,
    response: SandboxCompleteResponse,
  },
  completeSandboxPayout: {
    path: '/sandbox/payout/complete',
    request: SandboxPayoutCompleteRequest,
    response: SandboxCompleteResponse,
  },
  completeSandboxRefund: {
    path: '/sandbox/refund/complete',
    request: SandboxRefundCompleteRequest,
    response: RefundStatusResponse,
  },
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;

// Compile-time agreement between these descriptions and the interfaces in types.ts: a line whose
// types differ does not compile ("'false' does not satisfy the constraint 'true'").
function agree<_Ok extends true>(): void {}
agree<Same<Infer<typeof OnsitePayinRequest>, T.OnsitePayinRequest>>();
agree<Same<Infer<typeof OffsitePayinRequest>, T.OffsitePayinRequest>>();
agree<Same<Infer<typeof P2PPayinRequest>, T.P2PPayinRequest>>();
agree<Same<Infer<typeof PagePayinResponse>, T.PagePayinResponse>>();
agree<Same<Infer<typeof OffsitePayinResponse>, T.OffsitePayinResponse>>();
agree<Same<Infer<typeof PayoutRequest>, T.PayoutRequest>>();
agree<Same<Infer<typeof PayoutResponse>, T.PayoutResponse>>();
agree<Same<Infer<typeof StatusRequest>, T.StatusRequest>>();
agree<Same<Infer<typeof PayinStatusResponse>, T.StatusResponse<T.PayinStatus>>>();
agree<Same<Infer<typeof PayoutStatusResponse>, T.PayoutStatusResponse>>();
agree<Same<Infer<typeof BalanceRequest>, T.BalanceRequest>>();
agree<Same<Infer<typeof Balance>, T.Balance>>();
agree<Same<Infer<typeof SandboxCompleteRequest>, T.SandboxCompleteRequest>>();
agree<Same<Infer<typeof SandboxPayoutCompleteRequest>, T.SandboxPayoutCompleteRequest>>();
agree<Same<Infer<typeof SandboxCompleteResponse>, T.SandboxCompleteResponse>>();
agree<Same<Infer<typeof CallbackResendRequest>, T.CallbackResendRequest>>();
agree<Same<Infer<typeof CallbackResendResponse>, T.CallbackResendResponse>>();
agree<Same<Infer<typeof RefundRequest>, T.RefundRequest>>();
agree<Same<Infer<typeof RefundResponse>, T.RefundResponse>>();
agree<Same<Infer<typeof RefundStatusRequest>, T.RefundStatusRequest>>();
agree<Same<Infer<typeof RefundStatusResponse>, T.RefundStatusResponse>>();
agree<Same<Infer<typeof SandboxRefundCompleteRequest>, T.SandboxRefundCompleteRequest>>();
agree<Same<Infer<typeof RefundCallback>, T.RefundCallback>>();
agree<Same<Infer<typeof PaygateCallback>, T.PaygateCallback>>();
agree<Same<Infer<typeof ErrorEnvelope>, T.ErrorEnvelope>>();
agree<Same<Infer<typeof ValidationErrorBody>, T.ValidationErrorBody>>();
