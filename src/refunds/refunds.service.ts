/**
 * Refunds (contract §12): a SUCCESS pay-in of the merchant's gives back all or part of its amount
 * through the channel that took it. Creation holds the amount from the merchant's available balance
 * in the same database transaction as the refund record, and never lets the refunds of a pay-in
 * that are not FAILED add up to more than it (`refund-batch.writer.ts`); the worker then hands the
 * refund to the channel, and the final-status transition pays it out of held to the customer or
 * returns it to available.
 */
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Channel } from '../channels/channel.ts';
import { AppError } from '../errors.ts';
import { newRefundId } from '../ids.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import { toPaise, toRupees } from '../money.ts';
import { liveRangeError } from '../payments/channel-choice.ts';
import { checkCurrency } from '../payments/currency.ts';
import { requestHash, type Created } from '../payments/idempotency.ts';
import { normalUrl } from '../outbound/urls.ts';
import {
  findByOrderNo,
  findTransaction,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { newTransaction } from '../transactions/new-transaction.ts';
import { findMerchant } from '../merchants/merchants.repository.ts';
import { base62 } from '../ids.ts';
import {
  RefundBatchWriter,
  type MadeRefund,
  type PendingRefund,
  type RefundWritten,
} from './refund-batch.writer.ts';
import type { RefundedPayin } from './refunds.repository.ts';
import type { RefundRequest, RefundResponse, RefundStatusResponse } from './refunds.schemas.ts';
import { toRefundStatus } from './refund-status.ts';

/** A refund request as read before its pay-in is: what its row, its replay and its answer are made of. */
interface Asked {
  refundId: string;
  amount: number;
  currency: string;
  reason: string | null;
  callbackUrl: string | null;
  hash: string;
  response: RefundResponse;
}

export class RefundService {
  private readonly writer: RefundBatchWriter;
  private readonly now: () => number;
  /** Told after each committed refund, so the worker submits it at once. */
  onCreated: () => void = () => {};

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly channels: (name: string) => Channel | undefined,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
    this.writer = new RefundBatchWriter(database, this.now);
  }

  async create(principal: Principal, req: RefundRequest): Promise<Created<RefundResponse>> {
    const asked = this.asked(req);
    const pending: PendingRefund = {
      merchantId: principal.merchantId,
      currency: asked.currency,
      refundNo: req.merchant_refund_no,
      payinId: req.payment_id,
      make: (payin) => this.make(principal, req, asked, payin),
    };
    let written = await this.writer.submit(pending);
    while (written.outcome === 'retry') written = await this.writer.submit(pending);
    if (written.outcome !== 'created') return this.notCreated(principal, req, asked, written);
    this.onCreated();
    return { body: asked.response, replayed: false };
  }

  /** A refund request read: its currency checked, its amount in paise, and what it answers when created. */
  private asked(req: RefundRequest): Asked {
    const currency = checkCurrency(this.config, req.money.currency);
    const amount = toPaise(req.money.amount);
    const callbackUrl = req.callback_url ?? null;
    const reason = req.reason ?? null;
    const hash = requestHash({
      payment_id: req.payment_id,
      amount,
      currency,
      reason,
      callback_url: callbackUrl,
    });
    const refundId = newRefundId(req.payment_id);
    const response: RefundResponse = {
      success: true,
      refund_id: refundId,
      payment_id: req.payment_id,
      merchant_refund_no: req.merchant_refund_no,
      amount: toRupees(amount),
      currency,
      status: 'PENDING',
      message: 'Refund initiated',
    };
    return { refundId, amount, currency, reason, callbackUrl, hash, response };
  }

  /** The refund made from its pay-in as the writer read it under lock, or why it cannot be. */
  private make(
    principal: Principal,
    req: RefundRequest,
    asked: Asked,
    payin: RefundedPayin | undefined,
  ): MadeRefund | { refusal: AppError } {
    const refusal = this.refusal(principal, payin, asked.currency, asked.amount);
    if (refusal || !payin) return { refusal: refusal! };
    const at = this.now();
    const row = newTransaction({
      payment_id: asked.refundId,
      merchant_id: principal.merchantId,
      kind: 'refund',
      flow: 'refund',
      merchant_order_no: req.merchant_refund_no,
      amount: asked.amount,
      currency: asked.currency,
      status: 'PENDING',
      channel: payin.channel,
      user_name: payin.user_name,
      user_phone: payin.user_phone,
      user_email: payin.user_email,
      // The refund's own URL, else the pay-in's (which was the merchant's default when it had none).
      callback_url: normalUrl(asked.callbackUrl) ?? payin.callback_url ?? principal.callbackUrl,
      request_hash: asked.hash,
      response_json: JSON.stringify(asked.response),
      next_action_at: at,
      created_at: at,
      reason: asked.reason,
      // The provider's payment the refund returns: the refund carries what its channel needs.
      channel_payment_id: payin.channel_payment_id,
      channel_payment_txn_id: payin.channel_payment_txn_id,
    });
    return {
      // `refund_of` set after the defaults, so that the row's type says it names its pay-in.
      row: { ...row, refund_of: payin.payment_id },
      hold: {
        merchantId: principal.merchantId,
        currency: asked.currency,
        amount: asked.amount,
        paymentId: asked.refundId,
      },
    };
  }

  /** What a refund that was not created answers: its replay, a conflict, or why it was refused. */
  private async notCreated(
    principal: Principal,
    req: RefundRequest,
    asked: Asked,
    written: Exclude<RefundWritten, { outcome: 'created' | 'retry' }>,
  ): Promise<Created<RefundResponse>> {
    switch (written.outcome) {
      case 'refused': {
        // The refund number first: a repeat is answered as the first request was, and a used
        // number is a conflict, whatever has happened to the pay-in since (on the way to a new
        // refund the insert itself finds a used number).
        const replay = await this.replay(principal, req.merchant_refund_no, asked.hash);
        if (replay) return replay;
        throw written.refusal;
      }
      case 'exceeds':
        throw new AppError('REFUND_EXCEEDS_PAYMENT', 'The refunds of this pay-in would exceed its amount', {
          refundable: toRupees(written.refundable),
          requested: toRupees(asked.amount),
        });
      case 'insufficient':
        throw new AppError('INSUFFICIENT_BALANCE', 'Available balance is lower than the refund amount', {
          available: toRupees(written.available),
          requested: toRupees(asked.amount),
        });
      case 'refund_no_taken': {
        const again = await this.replay(principal, req.merchant_refund_no, asked.hash);
        if (again) return again;
        // Taken by a refund that was then refused: its number is free again.
        return this.create(principal, req);
      }
    }
  }

  /** Why `payin` cannot be refunded by this request, or null when it can. */
  private refusal(
    principal: Principal,
    payin: RefundedPayin | undefined,
    currency: string,
    amount: number,
  ): AppError | null {
    if (!payin || payin.kind !== 'payin' || payin.merchant_id !== principal.merchantId)
      return new AppError('PAYMENT_NOT_FOUND', 'No pay-in with this payment_id');
    if (payin.status !== 'SUCCESS')
      return new AppError(
        'PAYMENT_NOT_REFUNDABLE',
        `Only a SUCCESS pay-in can be refunded; this one is ${payin.status}`,
        { status: payin.status },
      );
    if (payin.disputed)
      return new AppError(
        'PAYMENT_DISPUTED',
        'A dispute of this pay-in is open: it cannot be refunded until the dispute is decided',
      );
    if (currency !== payin.currency)
      return new AppError('VALIDATION_INVALID_CURRENCY', `The pay-in was made in ${payin.currency}`, {
        supported_currencies: [payin.currency],
      });
    const channel = this.channels(payin.channel);
    if (!channel?.refunds)
      return new AppError(
        'LIVE_CHANNEL_NOT_CONFIGURED',
        `Refunds through the ${payin.channel} channel are not available on this gateway`,
      );
    return channel.live ? this.liveRefusal(payin, amount) : null;
  }

  /**
   * A live refund names the provider's payment it returns (a pay-in settled without it cannot be
   * refunded through the channel: 409) and keeps to the UPI rail's range, as a live pay-in does.
   */
  private liveRefusal(payin: RefundedPayin, amount: number): AppError | null {
    if (!payin.channel_payment_id || !payin.channel_payment_txn_id)
      return new AppError(
        'PAYMENT_NOT_REFUNDABLE',
        `The ${payin.channel} payment behind this pay-in is not known, so it cannot be refunded through ${payin.channel}`,
        { status: payin.status },
      );
    return liveRangeError('refund', amount, this.config.liveMaxPayinPaise);
  }

  /** The first answer to this refund number, when it was used with the same request; 409 when with another; null when unused. */
  private async replay(principal: Principal, refundNo: string, hash: string): Promise<Created<never> | null> {
    const existing = await findByOrderNo(this.database.db, principal.merchantId, 'refund', refundNo);
    if (!existing) return null;
    if (existing.request_hash === hash) return { body: existing.response_json, replayed: true };
    throw new AppError(
      'DUPLICATE_REFUND_NO',
      'merchant_refund_no was already used for another refund request',
      {
        refund_id: existing.payment_id,
      },
    );
  }

  /**
   * A refund asked for by a person rather than the API: the operator's CLI (any merchant's pay-in,
   * `merchantId` undefined) or a merchant's user in the console (that merchant's only; another's is
   * 404). It takes the API's path, as the pay-in's merchant; a refund number is made when none is given.
   */
  async createOnBehalf(
    merchantId: string | undefined,
    r: { paymentId: string; amount: number; refundNo?: string; reason?: string | null },
  ): Promise<Created<RefundResponse>> {
    const payin = await findTransaction(this.database.db, r.paymentId);
    if (!payin || payin.kind !== 'payin' || (merchantId !== undefined && payin.merchant_id !== merchantId))
      throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in with this payment_id');
    const merchant = await findMerchant(this.database.db, payin.merchant_id);
    if (!merchant) throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in with this payment_id');
    const principal: Principal = {
      keyId: '',
      merchantId: merchant.id,
      merchantName: merchant.name,
      mode: merchant.mode,
      status: merchant.status,
      vpa: merchant.vpa,
      callbackUrl: merchant.callback_url,
    };
    return this.create(principal, {
      payment_id: r.paymentId,
      money: { amount: toRupees(r.amount), currency: payin.currency },
      merchant_refund_no: r.refundNo ?? `rf-${base62(20)}`,
      reason: r.reason ?? null,
    });
  }

  /** A refund of the merchant's, or 404. */
  async find(merchantId: string | undefined, refundId: string): Promise<TransactionRow> {
    const refund = await findTransaction(this.database.db, refundId);
    if (
      !refund ||
      refund.kind !== 'refund' ||
      (merchantId !== undefined && refund.merchant_id !== merchantId)
    )
      throw new AppError('PAYMENT_NOT_FOUND', 'No refund with this refund_id');
    return refund;
  }

  async status(principal: Principal, refundId: string): Promise<RefundStatusResponse> {
    return toRefundStatus(await this.find(principal.merchantId, refundId));
  }
}
