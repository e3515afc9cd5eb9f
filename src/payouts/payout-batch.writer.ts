/**
 * Writes the payouts that arrive together in one database transaction: one wallet lock and one
 * commit serve the batch, and the balance rule is applied to each payout in arrival order. A
 * hot wallet then takes one lock per batch rather than one per payout.
 */
import type { Database } from '../db/database.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import {
  deleteTransactions,
  insertTransactions,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { lockAvailable, walletKey } from '../wallet/wallet.repository.ts';
import { holdForPayouts, type Hold } from '../wallet/ledger.ts';

/** A payout request ready to be written: its row, and the wallet it draws on. */
export interface PendingPayout {
  row: TransactionRow;
  hold: Hold;
}

/** What writing one payout came to. */
export type Written =
  | { outcome: 'created' }
  /** The merchant already used the order number: a replay or a conflict. */
  | { outcome: 'order_no_taken' }
  /** An earlier payout of the same batch has the same order number: write it after that one. */
  | { outcome: 'retry' }
  /** The available balance (paise) did not cover it, after the payouts accepted before it. */
  | { outcome: 'insufficient'; available: number };

/** The most payouts written in one database transaction (27 parameters each). */
const MAX_BATCH = 100;

export class PayoutBatchWriter {
  private readonly queue: BatchQueue<PendingPayout, Written>;

  constructor(
    private readonly database: Database,
    private readonly now: () => number,
  ) {
    this.queue = new BatchQueue((batch) => this.write(batch), MAX_BATCH);
  }

  /** Writes `payout` with the others that arrive meanwhile; says what came of it. */
  submit(payout: PendingPayout): Promise<Written> {
    return this.queue.submit(payout);
  }

  /**
   * Writes payouts in one database transaction: their records, then the balances of their wallets
   * under lock (one statement, rows locked in a fixed order), accepting each wallet's payouts in
   * arrival order while its balance covers them, then the holds (one statement for the journals,
   * one for the wallets). A refused payout's record is removed again, so it leaves no trace and
   * its order number stays free for a retry.
   */
  private async write(batch: PendingPayout[]): Promise<Written[]> {
    return this.database.db.transaction().execute(async (tx) => {
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
}
