/**
 * The one final-status transition. Every change to SUCCESS or FAILED, from any source (the
 * sandbox, a page button, expiry, a bank adapter), goes through `settle`, which in one database
 * transaction: moves the status only if it is not final yet, moves the money through the ledger,
 * records the event, and writes the callback into the outbox. After the commit it tells the
 * listeners (the callback dispatcher), so delivery starts at once.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import type { FinalOutcome, SettlementSink } from '../channels/channel.ts';
import { callbackBody } from '../callbacks/signature.ts';
import { enqueueDelivery } from '../callbacks/outbox.repository.ts';
import { creditPayin, reversePayout, settlePayout } from '../wallet/wallet.service.ts';
import { insertEvent, markFinal, markReversed, type TransactionRow } from './transactions.repository.ts';

export interface SettlementOptions {
  payinFeeBps: number;
  /** 1 + CALLBACK_MAX_RETRIES */
  callbackMaxAttempts: number;
  now?: () => number;
}

export type FinalListener = (txn: TransactionRow, deliveryId: string | null) => void;

/** A final status committed (or about to be, inside the caller's transaction), for the listeners. */
export interface Settled {
  txn: TransactionRow;
  deliveryId: string | null;
}

export class SettlementService implements SettlementSink {
  private readonly listeners: FinalListener[] = [];
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly options: SettlementOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Called after each committed final status. */
  onFinal(listener: FinalListener): void {
    this.listeners.push(listener);
  }

  async settle(paymentId: string, outcome: FinalOutcome, source: string): Promise<{ changed: boolean }> {
    const result = await this.db.transaction().execute((tx) => this.settleIn(tx, paymentId, outcome, source));
    if (!result) return { changed: false };
    this.announce([result]);
    return { changed: true };
  }

  /** Tells the listeners of final statuses committed by the caller's transaction. */
  announce(settled: Settled[]): void {
    for (const s of settled) for (const listener of this.listeners) listener(s.txn, s.deliveryId);
  }

  /**
   * The transition inside the caller's transaction (several outcomes in one commit). Null when the
   * transaction was final already. The caller announces the result after its commit.
   */
  async settleIn(
    tx: Kysely<Tables>,
    paymentId: string,
    outcome: FinalOutcome,
    source: string,
  ): Promise<Settled | null> {
    const at = this.now();
    const txn = await markFinal(tx, paymentId, outcome, at);
    if (!txn) return null;
    await insertEvent(tx, paymentId, outcome.status, source, at);
    let deliveryId: string | null = null;
    if (txn.callback_url) {
      deliveryId = await enqueueDelivery(
        tx,
        {
          paymentId,
          merchantId: txn.merchant_id,
          url: txn.callback_url,
          body: callbackBody({
            paymentId,
            merchantOrderNo: txn.merchant_order_no,
            amount: txn.amount,
            currency: txn.currency,
            status: outcome.status,
            utr: txn.utr,
          }),
          maxAttempts: this.options.callbackMaxAttempts,
        },
        at,
      );
    }
    // Money last: the wallet row's lock is then held only until the commit.
    if (txn.kind === 'payin') {
      if (outcome.status === 'SUCCESS') {
        await creditPayin(
          tx,
          {
            merchantId: txn.merchant_id,
            currency: txn.currency,
            amount: txn.amount,
            paymentId,
            feeBps: this.options.payinFeeBps,
          },
          at,
        );
      }
    } else {
      await settlePayout(
        tx,
        {
          merchantId: txn.merchant_id,
          currency: txn.currency,
          amount: txn.amount,
          paymentId,
          success: outcome.status === 'SUCCESS',
        },
        at,
      );
    }
    return { txn, deliveryId };
  }

  /**
   * A successful payout whose money came back (the beneficiary's bank returned it): once per
   * payout, the amount returns to available through a journal. The status stays SUCCESS, and the
   * merchant's one callback of it stays the only one.
   */
  async reverseIn(tx: Kysely<Tables>, paymentId: string, source: string): Promise<TransactionRow | null> {
    const at = this.now();
    const txn = await markReversed(tx, paymentId, at);
    if (!txn) return null;
    await insertEvent(tx, paymentId, 'SUCCESS', `${source}:reversed`, at);
    await reversePayout(
      tx,
      { merchantId: txn.merchant_id, currency: txn.currency, amount: txn.amount, paymentId },
      at,
    );
    return txn;
  }
}
