/**
 * The one final-status transition. Every change to SUCCESS or FAILED, from any source (the
 * sandbox, a page button, expiry, a bank adapter), goes through `settle`, which in one database
 * transaction: moves the status only if it is not final yet, moves the money through the ledger,
 * records the event, and writes the callback into the outbox. After the commit it tells the
 * listeners (the callback dispatcher), so delivery starts at once.
 */
import type { Kysely } from 'kysely';
import { BatchQueue } from '../db/batch-queue.ts';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import type { FinalOutcome, FinalStatusSink } from '../channels/channel.ts';
import { callbackBodyOf } from '../callbacks/callback-body.ts';
import { callbackBody } from '../callbacks/signature.ts';
import { enqueueDeliveries } from '../callbacks/outbox.repository.ts';
import { fromSuspense, suspenseRefundsSettled } from '../exceptions/suspense-refunds.ts';
import {
  insertEvents,
  markFinal,
  markReversed,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { moveFinals, reversePayout } from '../wallet/ledger.ts';

export interface FinalityOptions {
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

/** One final status to settle, and what reported it (kept in the transaction's history). */
export interface SettleRequest {
  paymentId: string;
  outcome: FinalOutcome;
  source: string;
}

export class FinalityService implements FinalStatusSink {
  private readonly listeners: FinalListener[] = [];
  private readonly batch = new BatchQueue<SettleRequest, boolean>((requests) => this.settleBatch(requests));
  private readonly now: () => number;

  private readonly db: Kysely<Tables>;

  constructor(
    private readonly database: Pick<Database, 'db' | 'lockRows'>,
    private readonly options: FinalityOptions,
  ) {
    this.db = database.db;
    this.now = options.now ?? Date.now;
  }

  /** Called after each committed final status. */
  onFinal(listener: FinalListener): void {
    this.listeners.push(listener);
  }

  /**
   * Settles one transaction in a transaction of its own, shared with the other settlements asked for
   * while the previous one was written (`BatchQueue`: one commit and a few statements for all).
   */
  async settle(paymentId: string, outcome: FinalOutcome, source: string): Promise<{ changed: boolean }> {
    return { changed: await this.batch.submit({ paymentId, outcome, source }) };
  }

  private async settleBatch(requests: SettleRequest[]): Promise<boolean[]> {
    // A transaction asked for twice in one batch is settled by the first request: the second would
    // find it final either way.
    const seen = new Set<string>();
    const first = requests.filter((r) => !seen.has(r.paymentId) && seen.add(r.paymentId));
    const settled = await this.db.transaction().execute((tx) => this.settleManyIn(tx, first));
    const done = settled.filter((s): s is Settled => s !== null);
    this.announce(done);
    const changed = new Set(done.map((s) => s.txn.payment_id));
    return requests.map((r) => changed.delete(r.paymentId));
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
    const [settled] = await this.settleManyIn(tx, [{ paymentId, outcome, source }]);
    return settled ?? null;
  }

  /**
   * The transition for several transactions at once (each at most once), in a few statements
   * whatever their number: the statuses, their history, the callbacks, the journals, then each
   * wallet once. One entry per request, in order: null where the transaction was final already.
   */
  async settleManyIn(tx: Kysely<Tables>, requests: SettleRequest[]): Promise<(Settled | null)[]> {
    const at = this.now();
    if (new Set(requests.map((r) => r.paymentId)).size !== requests.length)
      throw new Error('a transaction may be settled only once in a batch');
    const changed = await markFinal(
      tx,
      requests
        .map(({ paymentId, outcome: o }) => ({
          paymentId,
          status: o.status,
          utr: o.utr,
          channelTxnId: o.channelTxnId,
          payment: o.payment,
          reason: o.reason,
        }))
        // In one order (the join follows the batch), so that two processes settling the same transactions lock them alike.
        .sort((a, b) => (a.paymentId < b.paymentId ? -1 : 1)),
      at,
    );
    if (changed.length === 0) return requests.map(() => null);
    const byId = new Map(changed.map((txn) => [txn.payment_id, txn]));
    const settled = requests.filter((r) => byId.has(r.paymentId));
    await insertEvents(
      tx,
      settled.map((r) => ({ paymentId: r.paymentId, status: r.outcome.status, source: r.source })),
      at,
    );
    const called = changed.filter((txn) => txn.callback_url);
    const deliveryIds = await enqueueDeliveries(
      tx,
      called.map((txn) => ({
        paymentId: txn.payment_id,
        merchantId: txn.merchant_id,
        url: txn.callback_url!,
        body: callbackBodyOf({ ...txn, status: txn.status as 'SUCCESS' | 'FAILED' }),
        maxAttempts: this.options.callbackMaxAttempts,
      })),
      at,
    );
    const deliveries = new Map(called.map((txn, i) => [txn.payment_id, deliveryIds[i]!]));
    // A refund from suspense is paid from suspense, not from a wallet, and settles its exception.
    await suspenseRefundsSettled(tx, changed, at);
    // Money last: the wallet rows' locks are then held only until the commit.
    await moveFinals(
      tx,
      this.database,
      changed
        .filter((txn) => !fromSuspense(txn))
        .map((txn) => ({
          kind: txn.kind,
          merchantId: txn.merchant_id,
          currency: txn.currency,
          amount: txn.amount,
          paymentId: txn.payment_id,
          success: txn.status === 'SUCCESS',
        })),
      this.options.payinFeeBps,
      at,
    );
    return requests.map((r) => {
      const txn = byId.get(r.paymentId);
      return txn ? { txn, deliveryId: deliveries.get(r.paymentId) ?? null } : null;
    });
  }

  /** `reverseIn` in a transaction of its own (the sandbox's REVERSED). False when there was nothing to reverse. */
  async reverse(paymentId: string, source: string): Promise<boolean> {
    const done = await this.db.transaction().execute((tx) => this.reverseIn(tx, paymentId, source));
    if (done) this.announce([done]);
    return done !== null;
  }

  /**
   * A successful payout whose money came back (the beneficiary's bank returned it): once per
   * payout, the amount returns to available through a journal. The status stays SUCCESS; the
   * merchant is told by one more callback, with `"status":"REVERSED"`. Null when it was not a
   * SUCCESS payout or was reversed already.
   */
  async reverseIn(tx: Kysely<Tables>, paymentId: string, source: string): Promise<Settled | null> {
    const at = this.now();
    const txn = await markReversed(tx, paymentId, at);
    if (!txn) return null;
    await insertEvents(tx, [{ paymentId, status: 'SUCCESS', source: `${source}:reversed` }], at);
    const [deliveryId] = txn.callback_url
      ? await enqueueDeliveries(
          tx,
          [
            {
              paymentId,
              merchantId: txn.merchant_id,
              url: txn.callback_url,
              body: callbackBody({
                paymentId,
                merchantOrderNo: txn.merchant_order_no,
                amount: txn.amount,
                currency: txn.currency,
                status: 'REVERSED',
                utr: txn.utr,
              }),
              maxAttempts: this.options.callbackMaxAttempts,
            },
          ],
          at,
        )
      : [];
    await reversePayout(
      tx,
      { merchantId: txn.merchant_id, currency: txn.currency, amount: txn.amount, paymentId },
      at,
    );
    return { txn, deliveryId: deliveryId ?? null };
  }
}
