/**
 * Writes the refunds that arrive together in one database transaction, as the payout batch writer
 * writes payouts. The wallets the refunds draw on are locked first: a refund draws on the wallet of
 * its pay-in's merchant in its pay-in's currency, so the refunds of one pay-in are written one batch
 * after another. With that lock come what the refunded pay-ins' refunds add up to, and each request
 * makes its refund from its pay-in (or is refused for it: not found, not SUCCESS); then the records
 * (which take the merchants' refund numbers), and each refund accepted in arrival order only while
 * both its pay-in's refundable amount and its wallet's available balance cover it.
 *
 * On PostgreSQL, where each statement of a batch is a round trip that every request of the batch
 * waits out, the lock reads the pay-ins and their sums in the same statement (`lockWithPayins`), so
 * that a refund batch has as many statements as a payout batch. On SQLite, where a statement is a
 * call, the pay-ins and their sums are read after the lock, each in a statement of its own.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import type { AppError } from '../errors.ts';
import {
  deleteTransactions,
  insertTransactions,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { lockAvailable, walletKey } from '../wallet/wallet.repository.ts';
import {
  lockWithPayins,
  readPayins,
  refundedOf,
  type RefundablePayin,
  type RefundedPayin,
} from './refunds.repository.ts';
import { holdForRefunds, type Hold } from '../wallet/ledger.ts';

/** A refund made from its pay-in: its row (`refund_of` names the pay-in), and the wallet it draws on. */
export interface MadeRefund {
  row: TransactionRow & { refund_of: string };
  hold: Hold;
}

/** A refund request ready to be written once its pay-in is read. */
export interface PendingRefund {
  merchantId: string;
  /** The currency asked for: with the merchant, the wallet the refund draws on (a pay-in in another is refused). */
  currency: string;
  refundNo: string;
  /** The pay-in it names. */
  payinId: string;
  /** The refund made from that pay-in as read under lock (undefined when there is none), or why it cannot be. */
  make(payin: RefundedPayin | undefined): MadeRefund | { refusal: AppError };
}

export type RefundWritten =
  | { outcome: 'created' }
  /** The pay-in cannot be refunded by this request (`make`'s refusal). */
  | { outcome: 'refused'; refusal: AppError }
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

  /** The batch's wallets locked, and its pay-ins with what their refunds add up to. */
  private async lockAndRead(
    tx: Transaction<Tables>,
    first: PendingRefund[],
  ): Promise<{ balances: Map<string, number>; payins: Map<string, RefundablePayin> }> {
    const wallets = first.map((r) => ({ merchantId: r.merchantId, currency: r.currency }));
    const ids = first.map((r) => r.payinId);
    let read: { balances: Map<string, number>; payins: RefundedPayin[]; refunded: Map<string, number> };
    if (this.database.kind === 'postgres') read = await lockWithPayins(tx, wallets, ids);
    else {
      const balances = await lockAvailable(tx, this.database, wallets);
      const payins = await readPayins(tx, ids);
      read = {
        balances,
        payins,
        refunded: await refundedOf(
          tx,
          payins.map((p) => p.payment_id),
        ),
      };
    }
    // One record per pay-in, which the batch's refunds of it add to as they are accepted.
    const payins = new Map<string, RefundablePayin>();
    for (const p of read.payins)
      payins.set(p.payment_id, { ...p, refunded: read.refunded.get(p.payment_id) ?? 0 });
    return { balances: read.balances, payins };
  }

  private async write(queued: PendingRefund[]): Promise<RefundWritten[]> {
    return this.database.writeTransaction().execute(async (tx) => {
      const at = this.now();
      const results = new Map<PendingRefund, RefundWritten>();
      const firstOf = new Map<string, PendingRefund>();
      const repeats = new Map<PendingRefund, PendingRefund>();
      for (const r of queued) {
        const refundNo = `${r.merchantId}\u0000${r.refundNo}`;
        const earlier = firstOf.get(refundNo);
        if (earlier) repeats.set(r, earlier);
        else firstOf.set(refundNo, r);
      }
      const first = [...firstOf.values()];
      const { balances, payins } = await this.lockAndRead(tx, first);
      const made = new Map<PendingRefund, MadeRefund>();
      for (const r of first) {
        const m = r.make(payins.get(r.payinId));
        if ('refusal' in m) results.set(r, { outcome: 'refused', refusal: m.refusal });
        else made.set(r, m);
      }
      const fresh = await insertTransactions(
        tx,
        [...made.values()].map((m) => m.row),
      );
      const accepted: Hold[] = [];
      const refused: string[] = [];
      for (const [r, m] of made) {
        if (!fresh.has(m.row.payment_id)) {
          results.set(r, { outcome: 'refund_no_taken' });
          continue;
        }
        const payin = payins.get(m.row.refund_of)!;
        const refundable = payin.amount - payin.refunded;
        const wallet = walletKey(m.hold);
        const available = balances.get(wallet) ?? 0;
        if (m.row.amount > refundable) {
          refused.push(m.row.payment_id);
          results.set(r, { outcome: 'exceeds', refundable: Math.max(refundable, 0) });
        } else if (m.hold.amount > available) {
          refused.push(m.row.payment_id);
          results.set(r, { outcome: 'insufficient', available });
        } else {
          payin.refunded += m.row.amount;
          balances.set(wallet, available - m.hold.amount);
          accepted.push(m.hold);
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
      return queued.map((r) => results.get(r) ?? { outcome: 'retry' });
    });
  }
}
