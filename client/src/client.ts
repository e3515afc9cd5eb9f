/**
 * `Paygate`: the merchant API as typed methods. Every call is a POST with the merchant's key;
 * failures throw `PaygateApiError`, `PaygateValidationError` or `PaygateNetworkError`.
 */
import { OPERATIONS, type OperationName } from './operations.js';
import { post, type CallOptions, type TransportOptions } from './transport.js';
import type {
  Balance,
  CallbackResendResponse,
  CallbackStatus,
  FinalStatus,
  OffsitePayinRequest,
  OffsitePayinResponse,
  OnsitePayinRequest,
  P2PPayinRequest,
  PagePayinResponse,
  PayinStatus,
  PayoutRequest,
  PayoutResponse,
  RefundRequest,
  RefundResponse,
  RefundStatusResponse,
  PayoutStatusResponse,
  SandboxCompleteResponse,
  StatusRequest,
  StatusResponse,
} from './types.js';

/** A status query's body: a payment_id, or the merchant's own order number. */
function statusRequest(ref: string | { merchant_order_no: string }): StatusRequest {
  return typeof ref === 'string' ? { payment_id: ref } : { merchant_order_no: ref.merchant_order_no };
}

export interface PaygateOptions {
  /** `sk_test_…` (sandbox) or `sk_live_…`. */
  apiKey: string;
  /** The gateway's address, e.g. `https://pay.example.com`. */
  baseUrl: string;
  /** Per attempt, in milliseconds. Default 30 000. */
  timeoutMs?: number;
  /** Retries after a network error, a 5xx or a 429. Default 2; 0 turns retries off. */
  maxRetries?: number;
  /** First backoff step in milliseconds (doubles each retry). Default 500. */
  retryDelayMs?: number;
  /** Longest wait between attempts; a longer Retry-After ends the retries. Default 60 000. */
  maxRetryDelayMs?: number;
  /** A fetch implementation (for a proxy, say). Default: the global fetch. */
  fetch?: typeof fetch;
}

/** A creation response, plus whether it was replayed for a repeated `merchant_order_no`. */
export type Created<T> = T & {
  /** True when the gateway answered with `Idempotent-Replayed: true`: nothing new was created. */
  replayed: boolean;
};

export type { CallOptions };

/**
 * The Paygate merchant API.
 *
 * ```ts
 * const paygate = new Paygate({ apiKey: process.env.PAYGATE_API_KEY!, baseUrl: 'https://pay.example.com' });
 * const payin = await paygate.createOnsitePayin({ money: { amount: 500 }, merchant_order_no: 'order-1' });
 * // send the customer to payin.payment_url; wait for the callback
 * ```
 */
export class Paygate {
  readonly #transport: TransportOptions;

  constructor(options: PaygateOptions) {
    if (!options?.apiKey) throw new TypeError('Paygate: apiKey is required');
    if (!options.baseUrl || !/^https?:\/\//.test(options.baseUrl))
      throw new TypeError('Paygate: baseUrl must be an http(s) URL');
    this.#transport = {
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRetries: Math.max(0, options.maxRetries ?? 2),
      retryDelayMs: options.retryDelayMs ?? 500,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 60_000,
      fetch: options.fetch ?? globalThis.fetch,
    };
  }

  async #call<T>(op: OperationName, body: unknown, call?: CallOptions): Promise<T> {
    return (await post<T>(this.#transport, OPERATIONS[op].path, body, call)).body;
  }

  async #create<T>(op: OperationName, body: unknown, call?: CallOptions): Promise<Created<T>> {
    const answer = await post<T>(this.#transport, OPERATIONS[op].path, body, call);
    return { ...answer.body, replayed: answer.replayed };
  }

  /** An onsite pay-in: Paygate hosts the payment page; send the customer to `payment_url`. */
  createOnsitePayin(request: OnsitePayinRequest, call?: CallOptions): Promise<Created<PagePayinResponse>> {
    return this.#create('createOnsitePayin', request, call);
  }

  /** An offsite pay-in: you show the UPI QR code, cashier link or app deep links yourself. */
  createOffsitePayin(
    request: OffsitePayinRequest,
    call?: CallOptions,
  ): Promise<Created<OffsitePayinResponse>> {
    return this.#create('createOffsitePayin', request, call);
  }

  /** A P2P pay-in: send the customer to `payment_url`; they come back to `redirect_url`. */
  createP2PPayin(request: P2PPayinRequest, call?: CallOptions): Promise<Created<PagePayinResponse>> {
    return this.#create('createP2PPayin', request, call);
  }

  /** A payout to a bank account; the amount is held against the available balance (else INSUFFICIENT_BALANCE). */
  createPayout(request: PayoutRequest, call?: CallOptions): Promise<Created<PayoutResponse>> {
    return this.#create('createPayout', request, call);
  }

  /**
   * A pay-in's status from the gateway's records, by its payment_id or `{ merchant_order_no }`
   * (404 PAYMENT_NOT_FOUND for unknown ones and payouts).
   */
  getPayinStatus(
    ref: string | { merchant_order_no: string },
    call?: CallOptions,
  ): Promise<StatusResponse<PayinStatus>> {
    return this.#call('getPayinStatus', statusRequest(ref), call);
  }

  /** A payout's status from the gateway's records, by its payment_id or `{ merchant_order_no }`. */
  getPayoutStatus(
    ref: string | { merchant_order_no: string },
    call?: CallOptions,
  ): Promise<PayoutStatusResponse> {
    return this.#call('getPayoutStatus', statusRequest(ref), call);
  }

  /**
   * A refund of all or part of a SUCCESS pay-in; the amount is held against the available balance.
   * Refused with REFUND_EXCEEDS_PAYMENT (metadata.refundable) past what is left of the pay-in,
   * PAYMENT_NOT_REFUNDABLE when it is not SUCCESS, PAYMENT_DISPUTED while a customer's dispute of it
   * is open, INSUFFICIENT_BALANCE, DUPLICATE_REFUND_NO.
   */
  createRefund(request: RefundRequest, call?: CallOptions): Promise<Created<RefundResponse>> {
    return this.#create('createRefund', request, call);
  }

  /** A refund's status from the gateway's records. */
  refundStatus(refundId: string, call?: CallOptions): Promise<RefundStatusResponse> {
    return this.#call('refundStatus', { refund_id: refundId }, call);
  }

  /** The wallet balance in rupees (INR unless `currency` says otherwise). */
  getBalance(currency?: string, call?: CallOptions): Promise<Balance> {
    return this.#call('getBalance', currency === undefined ? {} : { currency }, call);
  }

  /**
   * Asks for the callback of a final pay-in or payout again (a fresh delivery, attempt 1).
   * 409 INVALID_STATE when it is not final yet or has no callback URL.
   */
  resendCallback(paymentId: string, call?: CallOptions): Promise<CallbackResendResponse> {
    return this.#call('resendCallback', { payment_id: paymentId }, call);
  }

  /** Asks for the callback of a final refund again. */
  resendRefundCallback(refundId: string, call?: CallOptions): Promise<CallbackResendResponse> {
    return this.#call('resendCallback', { refund_id: refundId }, call);
  }

  /** Sandbox only: settle a pay-in now (409 INVALID_STATE when it is already final). */
  completeSandboxPayin(
    paymentId: string,
    status: FinalStatus,
    call?: CallOptions,
  ): Promise<SandboxCompleteResponse> {
    return this.#call('completeSandboxPayin', { payment_id: paymentId, status }, call);
  }

  /** Sandbox only: settle a refund now. */
  completeSandboxRefund(
    refundId: string,
    status: FinalStatus,
    call?: CallOptions,
  ): Promise<RefundStatusResponse> {
    return this.#call('completeSandboxRefund', { refund_id: refundId, status }, call);
  }

  /** Sandbox only: settle a payout now, or reverse a SUCCESS one (REVERSED). */
  completeSandboxPayout(
    paymentId: string,
    status: CallbackStatus,
    call?: CallOptions,
  ): Promise<SandboxCompleteResponse> {
    return this.#call('completeSandboxPayout', { payment_id: paymentId, status }, call);
  }
}
