/**
 * Payouts (seed §4 rule 4, CONTRACT §4–§5). Creation holds the amount in one database transaction
 * with the payout record; the worker then hands it to the channel and asks for the outcome, and
 * the final-status transition pays it out of held or returns it to available.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../http/errors.ts';
import { newPaymentId } from '../ids.ts';
import { toPaise, toRupees } from '../money.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import { requestHash, type Created } from '../payments/idempotency.ts';
import {
  checkCurrency,
  replayOrConflict,
  toStatusResponse,
  type ChannelFor,
} from '../payins/payins.service.ts';
import type { StatusResponse } from '../payins/payins.schemas.ts';
import { findStatus, insertTransaction } from '../transactions/transactions.repository.ts';
import { holdForPayout } from '../wallet/wallet.service.ts';
import { findWallet } from '../wallet/wallet.repository.ts';
import type { PayoutRequest, PayoutResponse } from './payouts.schemas.ts';

class Insufficient extends Error {}

export class PayoutService {
  private readonly now: () => number;
  /** Told after each committed payout, so the worker submits it at once. */
  onCreated: () => void = () => {};

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly config: Config,
    private readonly channelFor: ChannelFor,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
  }

  async create(principal: Principal, req: PayoutRequest): Promise<Created<PayoutResponse>> {
    const channel = this.channelFor(principal);
    const currency = checkCurrency(this.config, req.money.currency);
    const amount = toPaise(req.money.amount);
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

    let inserted: boolean;
    try {
      inserted = await this.db.transaction().execute(async (tx) => {
        const at = this.now();
        const fresh = await insertTransaction(tx, {
          payment_id: paymentId,
          merchant_id: principal.merchantId,
          kind: 'payout',
          flow: 'payout',
          merchant_order_no: req.merchant_order_no,
          amount,
          currency,
          status: 'PENDING',
          utr: '',
          channel_txn_id: '',
          channel: channel.name,
          user_name: user.user_name ?? null,
          user_phone: user.phone_number ?? null,
          user_email: user.email ?? null,
          callback_url: callbackUrl ?? principal.callbackUrl,
          redirect_url: null,
          receiver_name: req.receiver.name,
          receiver_account_no: req.receiver.account_no,
          receiver_ifsc: req.receiver.ifsc_code,
          request_hash: hash,
          response_json: JSON.stringify(response),
          expires_at: null,
          next_action_at: at,
          lease_until: null,
          created_at: at,
          updated_at: at,
          finalized_at: null,
        });
        if (!fresh) return false;
        const held = await holdForPayout(
          tx,
          { merchantId: principal.merchantId, currency, amount, paymentId },
          at,
        );
        // Rolling back leaves no trace: the order number stays free for a retry.
        if (!held) throw new Insufficient();
        return true;
      });
    } catch (err) {
      if (!(err instanceof Insufficient)) throw err;
      const wallet = await findWallet(this.db, principal.merchantId, currency);
      throw new AppError('INSUFFICIENT_BALANCE', 'Available balance is lower than the payout amount', {
        available: toRupees(wallet?.available ?? 0),
        requested: toRupees(amount),
      });
    }
    if (!inserted) return replayOrConflict(this.db, principal, 'payout', req.merchant_order_no, hash);
    this.onCreated();
    return { body: response, replayed: false };
  }

  async status(principal: Principal, paymentId: string): Promise<StatusResponse> {
    const row = await findStatus(this.db, principal.merchantId, 'payout', paymentId);
    if (!row) throw new AppError('PAYMENT_NOT_FOUND', 'No payout with this payment_id');
    return toStatusResponse(row);
  }
}
