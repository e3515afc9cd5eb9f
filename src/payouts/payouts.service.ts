/**
 * Payouts (seed §4 rule 4, CONTRACT §4–§5). Creation holds the amount in one database transaction
 * with the payout record; the worker then hands it to the channel and asks for the outcome, and
 * the final-status transition pays it out of held or returns it to available. Payouts that arrive
 * together are created in one transaction (`WriteBatcher`): one wallet lock and one commit serve
 * the batch, with the balance rule applied to each payout in arrival order.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { WriteBatcher } from '../db/write-batcher.ts';
import { AppError } from '../errors.ts';
import { newPaymentId } from '../ids.ts';
import { toPaise, toRupees } from '../money.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import type { ChannelFor } from '../payments/channel-choice.ts';
import { checkCurrency } from '../payments/currency.ts';
import { replayOrConflict, requestHash, type Created } from '../payments/idempotency.ts';
import type { StatusResponse } from '../payments/payments.schemas.ts';
import { toStatusResponse } from '../payments/status-view.ts';
import {
  deleteTransactions,
  findStatus,
  insertTransactions,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { holdForPayouts, type Hold } from '../wallet/wallet.service.ts';
import { lockAvailable, walletKey } from '../wallet/wallet.repository.ts';
import type { PayoutRequest, PayoutResponse } from './payouts.schemas.ts';

/** A payout request ready to be written: its row, and the wallet it draws on. */
interface PendingPayout {
  row: TransactionRow;
  hold: Hold;
}

/** What writing one payout came to. */
type Written =
  | { outcome: 'created' }
  /** The merchant already used the order number: a replay or a conflict. */
  | { outcome: 'order_no_taken' }
  /** An earlier payout of the same batch has the same order number: write it after that one. */
  | { outcome: 'retry' }
  /** The available balance (paise) did not cover it, after the payouts accepted before it. */
  | { outcome: 'insufficient'; available: number };

/** The most payouts written in one database transaction (27 parameters each). */
const MAX_BATCH = 100;

export class PayoutService {
  private readonly now: () => number;
  private readonly batcher: WriteBatcher<PendingPayout, Written>;
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
    this.batcher = new WriteBatcher((batch) => this.write(batch), MAX_BATCH);
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
    const at = this.now();
    const pending: PendingPayout = {
      hold: { merchantId: principal.merchantId, currency, amount, paymentId },
      row: {
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
      },
    };
    let written = await this.batcher.submit(pending);
    while (written.outcome === 'retry') written = await this.batcher.submit(pending);
    if (written.outcome === 'insufficient') {
      throw new AppError('INSUFFICIENT_BALANCE', 'Available balance is lower than the payout amount', {
        available: toRupees(written.available),
        requested: toRupees(amount),
      });
    }
    if (written.outcome === 'order_no_taken') {
      return replayOrConflict(this.db, principal, 'payout', req.merchant_order_no, hash);
    }
    this.onCreated();
    return { body: response, replayed: false };
  }

  /**
   * Writes payouts in one database transaction: their records, then the balances of their wallets
   * under lock (one statement, rows locked in a fixed order), accepting each wallet's payouts in
   * arrival order while its balance covers them, then the holds (one statement for the journals,
   * one for the wallets). A refused payout's record is removed again, so it leaves no trace and
   * its order number stays free for a retry.
   */
  private async write(batch: PendingPayout[]): Promise<Written[]> {
    return this.db.transaction().execute(async (tx) => {
      const at = this.now();
      const results = new Map<PendingPayout, Written>();
      // Only the first of a batch's payouts with one order number is written; the repeats are
      // answered after it (see the end).
      const firstOf = new Map<string, PendingPayout>();
      const repeats = new Map<PendingPayout, PendingPayout>();
      for (const p of batch) {
        const order = `${p.row.merchant_id}\u0000${p.row.merchant_order_no}`;
        const earlier = firstOf.get(order);
        if (earlier) repeats.set(p, earlier);
        else firstOf.set(order, p);
      }
      const first = [...firstOf.values()];
      const fresh = await insertTransactions(
        tx,
        first.map((p) => p.row),
      );
      const byWallet = new Map<string, { merchantId: string; currency: string; payouts: PendingPayout[] }>();
      for (const p of first) {
        if (!fresh.has(p.row.payment_id)) {
          results.set(p, { outcome: 'order_no_taken' });
          continue;
        }
        const key = walletKey(p.hold);
        const wallet = byWallet.get(key);
        if (wallet) wallet.payouts.push(p);
        else byWallet.set(key, { merchantId: p.hold.merchantId, currency: p.hold.currency, payouts: [p] });
      }
      const refused: string[] = [];
      const wallets = [...byWallet.values()];
      const balances = await lockAvailable(tx, this.database, wallets);
      const accepted: Hold[] = [];
      for (const wallet of wallets) {
        let available = balances.get(walletKey(wallet)) ?? 0;
        for (const p of wallet.payouts) {
          if (p.hold.amount <= available) {
            available -= p.hold.amount;
            accepted.push(p.hold);
            results.set(p, { outcome: 'created' });
          } else {
            refused.push(p.row.payment_id);
            results.set(p, { outcome: 'insufficient', available });
          }
        }
      }
      await holdForPayouts(tx, accepted, at);
      await deleteTransactions(tx, refused);
      // A repeat of a written payout is its replay (or a conflict). A repeat of a refused one is
      // written again in a later batch: its order number is free again, and it gets what a
      // request on its own would get.
      for (const [p, earlier] of repeats) {
        const outcome = results.get(earlier)?.outcome;
        results.set(p, outcome === 'insufficient' ? { outcome: 'retry' } : { outcome: 'order_no_taken' });
      }
      return batch.map((p) => results.get(p) ?? { outcome: 'retry' });
    });
  }

  async status(principal: Principal, paymentId: string): Promise<StatusResponse> {
    const row = await findStatus(this.database, principal.merchantId, 'payout', paymentId);
    if (!row) throw new AppError('PAYMENT_NOT_FOUND', 'No payout with this payment_id');
    return toStatusResponse(row);
  }
}
