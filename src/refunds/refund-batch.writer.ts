/**
 * Writes the refunds that arrive together in one database transaction, as the payout batch writer
 * writes payouts: the records first (which on SQLite takes the database's write lock), then the
 * refunded pay-ins under lock and what they have refunded so far, then the wallets under lock, and
 * each refund accepted in arrival order only while both its pay-in's refundable amount and its
 * wallet's available balance cover it. Locks are taken pay-ins first, wallets second, each in key
 * order, as every other writer of these rows takes them, so no two batches deadlock.
 */
import type { Database } from '../db/database.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import {
  deleteTransactions,
  insertTransactions,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { holdForRefunds, type Hold } from '../wallet/wallet.service.ts';
import { lockAvailable, walletKey } from '../wallet/wallet.repository.ts';
import { lockPayins, refundedSums } from './refunds.repository.ts';

/** A refund ready to be written: its row (`refund_of` names its pay-in), and the wallet it draws on. */
export interface PendingRefund {
  row: TransactionRow & { refund_of: string };
  hold: Hold;
}

export type RefundWritten =
  | { outcome: 'created' }
  /** The merchant already used the refund number: a replay or a conflict. */
  | { outcome: 'refund_no_taken' }
  /** An earlier refund of the same batch has the same refund number: write it after that one. */
  | { outcome: 'retry' }
  /** The pay-in's refunds would pass its amount; `refundable` paise are left. */
  | { outcome: 'exceeds'; refundable: number }
  /** The available balance (paise) did not cover it, after the refunds accepted before it. */
  | { outcome: 'insufficient'; available: number };

/** The most refunds written in one database transaction. */
const MAX_BATCH = 100;

export class RefundBatchWriter {
  private readonly queue: BatchQueue<PendingRefund, RefundWritten>;

  constructor(
    private readonly database: Database,
    private readonly now: () => number,
  ) {
    this.queue = new BatchQueue((batch) => this.write(batch), MAX_BATCH);
  }

  submit(refund: PendingRefund): Promise<RefundWritten> {
    return this.queue.submit(refund);
  }

  private async write(batch: PendingRefund[]): Promise<RefundWritten[]> {
    return this.database.db.transaction().execute(async (tx) => {
      const at = this.now();
      const results = new Map<PendingRefund, RefundWritten>();
      const firstOf = new Map<string, PendingRefund>();
      const repeats = new Map<PendingRefund, PendingRefund>();
      for (const r of batch) {
        const refundNo = `${r.row.merchant_id}\u0000${r.row.merchant_order_no}`;
        const earlier = firstOf.get(refundNo);
        if (earlier) repeats.set(r, earlier);
        else firstOf.set(refundNo, r);
      }
      const first = [...firstOf.values()];
      const fresh = await insertTransactions(
        tx,
        first.map((r) => r.row),
      );
      const written: PendingRefund[] = [];
      for (const r of first) {
        if (fresh.has(r.row.payment_id)) written.push(r);
        else results.set(r, { outcome: 'refund_no_taken' });
      }
      const payinIds = written.map((r) => r.row.refund_of);
      const amounts = await lockPayins(tx, this.database, payinIds);
      // The sums include this batch's own new rows (PENDING): they are taken out again, and the
      // batch's refunds are counted one by one below.
      const refunded = await refundedSums(tx, payinIds);
      for (const r of written)
        refunded.set(r.row.refund_of, (refunded.get(r.row.refund_of) ?? 0) - r.row.amount);
      const balances = await lockAvailable(
        tx,
        this.database,
        written.map((r) => r.hold),
      );
      const accepted: Hold[] = [];
      const refused: string[] = [];
      for (const r of written) {
        const payin = r.row.refund_of;
        const refundable = (amounts.get(payin) ?? 0) - (refunded.get(payin) ?? 0);
        const wallet = walletKey(r.hold);
        const available = balances.get(wallet) ?? 0;
        if (r.row.amount > refundable) {
          refused.push(r.row.payment_id);
          results.set(r, { outcome: 'exceeds', refundable: Math.max(refundable, 0) });
        } else if (r.hold.amount > available) {
          refused.push(r.row.payment_id);
          results.set(r, { outcome: 'insufficient', available });
        } else {
          refunded.set(payin, (refunded.get(payin) ?? 0) + r.row.amount);
          balances.set(wallet, available - r.hold.amount);
          accepted.push(r.hold);
          results.set(r, { outcome: 'created' });
        }
      }
      await holdForRefunds(tx, accepted, at);
      await deleteTransactions(tx, refused);
      for (const [r, earlier] of repeats) {
        const outcome = results.get(earlier)?.outcome;
        results.set(
          r,
          outcome === 'created' || outcome === 'refund_no_taken'
            ? { outcome: 'refund_no_taken' }
            : { outcome: 'retry' },
        );
      }
      return batch.map((r) => results.get(r) ?? { outcome: 'retry' });
    });
  }
}
