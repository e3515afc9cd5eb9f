/**
 * Payouts: the rules of creating one (currency, balance, order number) and of reading its
 * status. Creation holds the amount in the same database transaction as the payout record
 * (`payout-batch.writer.ts`); the worker then hands it to the channel and asks for the outcome,
 * and the final-status transition pays it out of held or returns it to available.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { normalUrl } from '../outbound/urls.ts';
import { AppError } from '../errors.ts';
import { newPaymentId } from '../ids.ts';
import { toPaise, toRupees } from '../money.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import type { ChannelFor } from '../payments/channel-choice.ts';
import { checkCurrency } from '../payments/currency.ts';
import { replayOrConflict, requestHash, type Created } from '../payments/idempotency.ts';
import { readStatusOf, toStatusResponse, type StatusRef } from '../payments/status-view.ts';
import { newTransaction } from '../transactions/new-transaction.ts';
import { PayoutBatchWriter, type PendingPayout } from './payout-batch.writer.ts';
import type { PayoutRequest, PayoutResponse, PayoutStatusResponse } from './payouts.schemas.ts';

export class PayoutService {
  private readonly now: () => number;
  private readonly writer: PayoutBatchWriter;
  /** Told after each committed payout, so the worker submits it at once. */
  onCreated: () => void = () => {};

  private readonly db: Kysely<Tables>;

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly channelFor: ChannelFor,
    now?: () => number,
  ) {
    this.db = database.db;
    this.now = now ?? Date.now;
    this.writer = new PayoutBatchWriter(database, this.now);
  }

  async create(principal: Principal, req: PayoutRequest): Promise<Created<PayoutResponse>> {
    const { pending, response } = this.prepare(principal, req);
    let written = await this.writer.submit(pending);
    while (written.outcome === 'retry') written = await this.writer.submit(pending);
    if (written.outcome === 'insufficient') {
      throw new AppError('INSUFFICIENT_BALANCE', 'Available balance is lower than the payout amount', {
        available: toRupees(written.available),
        requested: toRupees(pending.hold.amount),
      });
    }
    if (written.outcome === 'order_no_taken') {
      return replayOrConflict(this.db, principal, 'payout', req.merchant_order_no, pending.row.request_hash);
    }
    this.onCreated();
    return { body: response, replayed: false };
  }

  /**
   * A creation request checked (currency, then the channel's own limits) and made into the row it
   * writes, the hold it takes and the response it answers; nothing is written yet.
   */
  private prepare(
    principal: Principal,
    req: PayoutRequest,
  ): { pending: PendingPayout; response: PayoutResponse } {
    const currency = checkCurrency(this.config, req.money.currency);
    const amount = toPaise(req.money.amount);
    const channel = this.channelFor(principal, 'payout', amount, currency);
    const user = req.user_details ?? {};
    const callbackUrl = req.callback_url ?? null;
    const hash = requestHash({
      amount,
      currency,
      receiver_name: req.receiver.name,
      account_no: req.receiver.account_no,
      ifsc: req.receiver.ifsc_code,
      phone: user.phone_number ?? null,
      user_name: user.user_name ?? null,
      email: user.email ?? null,
      callback_url: callbackUrl,
    });
    const paymentId = newPaymentId();
    const response: PayoutResponse = {
      success: true,
      payment_id: paymentId,
      amount: toRupees(amount),
      currency,
      status: 'PENDING',
      message: 'Payout initiated',
    };
    const at = this.now();
    const pending: PendingPayout = {
      hold: { merchantId: principal.merchantId, currency, amount, paymentId },
      row: newTransaction({
        payment_id: paymentId,
        merchant_id: principal.merchantId,
        kind: 'payout',
        flow: 'payout',
        merchant_order_no: req.merchant_order_no,
        amount,
        currency,
        status: 'PENDING',
        channel: channel.name,
        user_name: user.user_name,
        user_phone: user.phone_number,
        user_email: user.email,
        callback_url: normalUrl(callbackUrl) ?? principal.callbackUrl,
        receiver_name: req.receiver.name,
        receiver_account_no: req.receiver.account_no,
        receiver_ifsc: req.receiver.ifsc_code,
        request_hash: hash,
        response_json: JSON.stringify(response),
        next_action_at: at,
        created_at: at,
      }),
    };
    return { pending, response };
  }

  /** A payout's status, by its payment_id or by the merchant's order number. */
  async status(principal: Principal, ref: StatusRef): Promise<PayoutStatusResponse> {
    const row = await readStatusOf(this.database, principal.merchantId, 'payout', ref);
    const view = toStatusResponse(row);
    return row.status === 'SUCCESS' && row.reversed_at !== null ? { ...view, reversed: true } : view;
  }
}
