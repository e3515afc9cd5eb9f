/**
 * Request and response bodies of the Paygate merchant API, field for field as the API has them
 * (snake_case, amounts in rupees as JSON numbers). `operations.ts` holds the same shapes as data
 * and checks at compile time that both agree.
 */

/** An amount and its currency. `amount` is rupees with at most 2 decimals (500, 500.5, 499.99). */
export interface Money {
  amount: number;
  /** Defaults to INR. */
  currency?: string | null;
}

/** The customer, all optional. */
export interface UserDetails {
  phone_number?: string | null;
  user_name?: string | null;
  email?: string | null;
}

interface PayinCommon {
  money: Money;
  /** Your unique order number. Repeating it with the same body replays the original response. */
  merchant_order_no: string;
  /** Where the final-status callback goes; defaults to the merchant's callback URL. */
  callback_url?: string | null;
  /** @deprecated Use `user_details.phone_number`. */
  phone?: string | null;
  user_details?: UserDetails | null;
}

/** POST /payments/onsite/payin. `merchant_order_no` 1 to 32 characters. */
export type OnsitePayinRequest = PayinCommon;

/** POST /payments/offsite/payin. `merchant_order_no` 1 to 36 characters. */
export type OffsitePayinRequest = PayinCommon;

/** POST /payments/p2p/payin. `merchant_order_no` 1 to 36 characters. */
export interface P2PPayinRequest extends PayinCommon {
  /** Where the customer is sent (303) after the final status, with payment_id, merchant_order_no and status in the query. */
  redirect_url?: string | null;
}

/** Response of the onsite and P2P pay-ins: send the customer to `payment_url`. */
export interface PagePayinResponse {
  success: boolean;
  payment_id: string;
  payment_url: string;
  amount: number;
  currency: string;
  message: string;
}

/** UPI deep links for the offsite pay-in, one per app. */
export interface DeepLinks {
  upi: string;
  gpay: string;
  phonepe: string;
  paytm: string;
}

/** Response of the offsite pay-in: show the QR code or the links yourself. */
export interface OffsitePayinResponse {
  success: boolean;
  payment_id: string;
  data: {
    /** `data:image/png;base64,…` of `cashier_string`. */
    qrCode: string;
    cashier_url: string;
    /** The UPI intent: `upi://pay?pa=…&pn=…&am=…&cu=…&tr=…&tn=…`. */
    cashier_string: string;
    deep_links: DeepLinks;
  };
  amount: number;
  currency: string;
  message: string;
}

export interface PayoutReceiver {
  /** 1 to 100 characters. */
  name: string;
  /** 9 to 18 digits. */
  account_no: string;
  /** `^[A-Z]{4}0[A-Z0-9]{6}$`, e.g. HDFC0001234. */
  ifsc_code: string;
}

/** POST /payments/payout. `merchant_order_no` 1 to 32 characters. */
export interface PayoutRequest {
  money: Money;
  merchant_order_no: string;
  receiver: PayoutReceiver;
  callback_url?: string | null;
  user_details?: UserDetails | null;
}

export type PayinStatus = 'PENDING' | 'SUCCESS' | 'FAILED';
export type PayoutStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';
/** The two final statuses. */
export type FinalStatus = 'SUCCESS' | 'FAILED';
/**
 * What a callback carries: a final status, or REVERSED, a second callback for a SUCCESS payout
 * whose money the beneficiary's bank sent back (it is available again; the status stays SUCCESS).
 * Code that handles only SUCCESS and FAILED can ignore it.
 */
export type CallbackStatus = FinalStatus | 'REVERSED';

export interface PayoutResponse {
  success: boolean;
  payment_id: string;
  amount: number;
  currency: string;
  /** PENDING at creation. */
  status: PayoutStatus;
  message: string;
}

/** Body of the two status queries: exactly one of the two. */
export interface StatusRequest {
  payment_id?: string;
  /** Your own order number, instead of payment_id. */
  merchant_order_no?: string;
}

/** Response of the status queries, read from the gateway's own records. */
export interface StatusResponse<S extends string = PayinStatus | PayoutStatus> {
  status: S;
  money: { amount: number; currency: string };
  /** "" until the channel has a reference. */
  channel_txn_id: string;
  /** 12-digit bank reference; "" until settled. */
  utr: string;
}

/** A payout's status; `reversed` is true once a SUCCESS payout's money came back. */
export interface PayoutStatusResponse extends StatusResponse<PayoutStatus> {
  reversed?: boolean;
}

export interface BalanceRequest {
  /** Defaults to INR. */
  currency?: string | null;
}

/** POST /wallet/balance: rupees. */
export interface Balance {
  currency: string;
  /** What payouts can use. */
  available: number;
  /** Held for payouts that are not final yet. */
  held: number;
}

/** POST /sandbox/{payin,payout}/complete (test keys only). */
export interface SandboxCompleteRequest {
  payment_id: string;
  status: FinalStatus;
}

/** A sandbox payout may also be REVERSED once it is SUCCESS, as a bank would. */
export interface SandboxPayoutCompleteRequest {
  payment_id: string;
  status: CallbackStatus;
}

export interface SandboxCompleteResponse extends StatusResponse<PayinStatus | PayoutStatus> {
  payment_id: string;
  reversed?: boolean;
}

/** POST /payments/refund: all or part of a SUCCESS pay-in back to the customer. */
export interface RefundRequest {
  /** The SUCCESS pay-in to refund. */
  payment_id: string;
  money: Money;
  /** Your unique refund number, 1 to 36 printable characters. Repeating it with the same body replays the original response. */
  merchant_refund_no: string;
  /** Up to 100 characters. */
  reason?: string | null;
  /** Where the refund's callback goes; defaults to the pay-in's, then the merchant's callback URL. */
  callback_url?: string | null;
}

export type RefundStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';

export interface RefundResponse {
  success: boolean;
  refund_id: string;
  payment_id: string;
  merchant_refund_no: string;
  amount: number;
  currency: string;
  /** PENDING at creation. */
  status: RefundStatus;
  message: string;
}

export interface RefundStatusRequest {
  refund_id: string;
}

/** POST /payments/refund_status, and the sandbox's refund completion. */
export interface RefundStatusResponse {
  refund_id: string;
  payment_id: string;
  merchant_refund_no: string;
  status: RefundStatus;
  money: { amount: number; currency: string };
  /** The bank reference of the refund; "" until it succeeds. */
  utr: string;
}

/** POST /sandbox/refund/complete (test keys only). */
export interface SandboxRefundCompleteRequest {
  refund_id: string;
  status: FinalStatus;
}

/** POST /callbacks/resend: exactly one of the two. */
export interface CallbackResendRequest {
  payment_id?: string;
  refund_id?: string;
}

/** POST /callbacks/resend: a fresh delivery of a final transaction's callback was queued. */
export interface CallbackResendResponse {
  success: true;
  /** The pay-in or payout, when one was named. */
  payment_id?: string;
  /** The refund, when one was named. */
  refund_id?: string;
  /** The new delivery; it starts again at attempt 1. */
  delivery_id: string;
  status: 'pending';
}

/**
 * The body of a callback, once verified. `amount` is a number here; on the wire it is written
 * with two decimals (`500.00`) and signed as that text.
 */
export interface PaygateCallback {
  payment_id: string;
  merchant_order_no: string;
  amount: number;
  currency: string;
  status: CallbackStatus;
  utr: string;
}

/**
 * The body of a refund's callback, once verified; signed over `refund_id:amount:status`.
 * `payment_id` is the refunded pay-in.
 */
export interface RefundCallback {
  refund_id: string;
  payment_id: string;
  merchant_refund_no: string;
  amount: number;
  currency: string;
  status: FinalStatus;
  utr: string;
}

/** Shape A, the general error envelope. */
export interface ErrorEnvelope {
  status: false;
  error: {
    /** The HTTP status. */
    code: number;
    /** From the fixed list in the integration guide, e.g. INSUFFICIENT_BALANCE. */
    error_code: string;
    message: string;
    /** Details of the error, and always `request_id`. */
    metadata: Record<string, unknown>;
  };
}

/** One entry of shape B. */
export interface ValidationIssue {
  /** Where the faulty field is, e.g. ["body", "money", "amount"]. */
  loc: string[];
  msg: string;
  /** pydantic v2 words: missing, string_too_long, greater_than, … */
  type: string;
}

/** Shape B, HTTP 422. */
export interface ValidationErrorBody {
  detail: ValidationIssue[];
}
