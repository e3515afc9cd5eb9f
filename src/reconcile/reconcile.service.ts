/**
 * Daily reconciliation (CONTRACT §13): reads from each live channel every transaction of an IST day,
 * every one still open from before it, and every one that became final in the RECONCILE_LOOKBACK_DAYS
 * before it and that the provider can still change. What it finds that moved money is booked as if
 * the provider had said it at the time (`booking.ts`); a difference where no money moved (a bank
 * reference, an amount the record disagrees on) opens one `reconcile_mismatch` exception. Reads go
 * through the channel adapters, so through their limits.
 */
import type { Kysely } from 'kysely';
import type { CashfreeChannel } from '../channels/cashfree/cashfree.channel.ts';
import { ChannelFailure, transferIdOf } from '../channels/channel.ts';
import type { SetuChannel } from '../channels/setu/setu.channel.ts';
import type { Tables } from '../db/schema.ts';
import { DAY_MS, istDayBounds } from '../ist.ts';
import type { ChannelOutcomes } from '../live/outcomes.ts';
import { findTransactions } from '../transactions/transactions.repository.ts';
import { book, type ProviderRecord } from './booking.ts';
import { comparePayments, compareRefund, compareTransfer, type Found } from './compare.ts';
import { alreadyKept, finishRun, openDifference, startRun, type RunCounts } from './reconcile.repository.ts';
import {
  changeablePage,
  createdPage,
  openIds,
  transactionsOf,
  withPaidAfterFailed,
  type ReconcileTxn,
} from './reconcile-reads.ts';

export type ReconcileChannel = 'setu' | 'cashfree';
export const RECONCILE_CHANNELS: readonly ReconcileChannel[] = ['setu', 'cashfree'];

/** A run as `paygate reconcile` prints it. */
export interface RunSummary {
  date: string;
  channel: ReconcileChannel;
  checked: number;
  matched: number;
  mismatched: number;
  unreadable: number;
}

export interface ReconcileOptions {
  now?: () => number;
  /** Reads in flight at once per run; the channel's own limit spaces them. */
  concurrency?: number;
  /** Transactions read from the database at a time. */
  pageSize?: number;
  /** Tries of one read that the channel did not answer (each read is safe to repeat). */
  readTries?: number;
  /** Wait before the second try; doubled for each further one. */
  retryMs?: number;
  /** RECONCILE_LOOKBACK_DAYS: how many days of finals before the day are read back too. */
  lookbackDays?: number;
}

/** Thrown by `keepGoing` to stop a run whose lease was lost: it is left unfinished. */
export class RunAbandoned extends Error {}

export class ReconcileService {
  private readonly now: () => number;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly channels: { setu: SetuChannel | null; cashfree: CashfreeChannel | null },
    /** Where what moved money is booked: the services' own outcomes. */
    private readonly outcomes: ChannelOutcomes,
    private readonly options: ReconcileOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The channels whose settings are set. */
  configured(): ReconcileChannel[] {
    return RECONCILE_CHANNELS.filter((c) => this.channels[c] !== null);
  }

  /**
   * Reconciles one channel for one IST day and stores the run. `keepGoing` is asked between pages
   * (the scheduler renews its lease there); it throws to abandon the run.
   */
  async run(
    date: string,
    channel: ReconcileChannel,
    trigger: 'cli' | 'schedule',
    keepGoing: () => Promise<void> = async () => {},
  ): Promise<RunSummary> {
    const read = this.reader(channel);
    const startedAt = this.now();
    const runId = await startRun(this.db, { date, channel, trigger }, startedAt);
    const counts: RunCounts = { checked: 0, matched: 0, mismatched: 0, unreadable: 0, opened: 0 };
    const check = async (t: ReconcileTxn) => {
      let record: ProviderRecord;
      try {
        record = await this.tries(() => read(t));
      } catch (err) {
        if (!(err instanceof ChannelFailure)) throw err;
        counts.checked++;
        counts.unreadable++;
        return;
      }
      const found = compareWith(t, record);
      counts.checked++;
      if (found.length === 0) {
        counts.matched++;
        return;
      }
      counts.mismatched++;
      // Awaited first: `counts.opened += await …` would read the count before the wait, and the
      // checks that run beside this one would lose their additions.
      const opened = await this.settle(channel, runId, t, record, found.some(movedMoney));
      counts.opened += opened;
    };
    for await (const rows of this.transactions(channel, date, startedAt)) {
      await keepGoing();
      const page = await withPaidAfterFailed(this.db, channel, rows);
      await inParallel(page, this.options.concurrency ?? 16, check);
    }
    await finishRun(this.db, runId, counts, this.now());
    const { checked, matched, mismatched, unreadable } = counts;
    return { date, channel, checked, matched, mismatched, unreadable };
  }

  /**
   * The day's transactions of a channel created before the run started (what the run itself books,
   * a refund of a second payment, is not read back by it), then those from before the day that are
   * still open, then those that became final in the lookback, a page at a time.
   */
  private async *transactions(
    channel: ReconcileChannel,
    date: string,
    startedAt: number,
  ): AsyncGenerator<ReconcileTxn[]> {
    const { from, to: dayEnd } = istDayBounds(date);
    const to = Math.min(dayEnd, startedAt);
    const size = this.options.pageSize ?? 500;
    let after: { createdAt: number; paymentId: string } | null = null;
    for (;;) {
      const page = await createdPage(this.db, channel, from, to, after, size);
      if (page.length > 0) yield page;
      if (page.length < size) break;
      const last = page.at(-1)!;
      after = { createdAt: last.created_at, paymentId: last.payment_id };
    }
    const open = await openIds(this.db, channel, from);
    for (let i = 0; i < open.length; i += size) yield await transactionsOf(this.db, open.slice(i, i + size));
    const window = { from: from - (this.options.lookbackDays ?? 7) * DAY_MS, to: from, createdBefore: from };
    let last: { finalizedAt: number; paymentId: string } | null = null;
    for (;;) {
      const page = await changeablePage(this.db, channel, window, last, size);
      if (page.length > 0) yield page;
      if (page.length < size) break;
      const end = page.at(-1)!;
      last = { finalizedAt: end.finalized_at, paymentId: end.payment_id };
    }
  }

  /**
   * A transaction whose provider record differs from Paygate's: what moved money is booked through
   * the outcomes, then what still differs and was not kept aside already opens its exception.
   * Answers how many exceptions this run opened.
   */
  private async settle(
    channel: ReconcileChannel,
    runId: number,
    t: ReconcileTxn,
    record: ProviderRecord,
    moved: boolean,
  ): Promise<number> {
    let now = t;
    if (moved) {
      const [row] = await findTransactions(this.db, [t.payment_id]);
      if (row) await book(this.outcomes, row, record);
      [now = t] = await withPaidAfterFailed(this.db, channel, await transactionsOf(this.db, [t.payment_id]));
    }
    let opened = 0;
    for (const f of compareWith(now, record)) {
      const refs = f.paymentId ? [f.reference, f.paymentId] : [f.reference];
      if (await alreadyKept(this.db, channel, refs)) continue;
      if (await openDifference(this.db, runId, { channel, ...f }, this.now())) opened++;
    }
    return opened;
  }

  private reader(channel: ReconcileChannel): (t: ReconcileTxn) => Promise<ProviderRecord> {
    if (channel === 'cashfree') {
      const cashfree = this.channels.cashfree;
      if (!cashfree) throw new Error('cashfree is not configured');
      return async (t) => ({
        kind: 'transfer',
        transfer: await cashfree.transferRecord(transferIdOf(t.payment_id, t.transfer_attempt)),
      });
    }
    const setu = this.channels.setu;
    if (!setu) throw new Error('setu is not configured');
    return async (t) =>
      // A pay-in whose QR was never opened, or a refund Setu has not named yet, has nothing at Setu to compare.
      t.channel_txn_id === ''
        ? t.kind === 'refund'
          ? { kind: 'refund', refund: null }
          : { kind: 'payments', payments: [] }
        : t.kind === 'refund'
          ? { kind: 'refund', refund: await setu.refunds.refundRecord(t.channel_txn_id) }
          : { kind: 'payments', payments: await setu.paymentHistory(t.channel_txn_id) };
  }

  /** A read tried again when the channel did not answer it (a 429, a 5xx, a timeout); a refusal is final. */
  private async tries<T>(fn: () => Promise<T>): Promise<T> {
    const tries = this.options.readTries ?? 3;
    for (let i = 1; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof ChannelFailure) || err.kind === 'rejected' || i >= tries) throw err;
        await new Promise((r) => setTimeout(r, (this.options.retryMs ?? 500) * 2 ** (i - 1)));
      }
    }
  }
}

async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}

/**
 * Whether a difference is one in which money moved (or a fact Paygate lacks, a bank reference it
 * never had): a status the provider holds that Paygate has not booked. An amount or a bank reference
 * that disagrees moved nothing Paygate can book; it is the operator's to look at.
 */
function movedMoney(f: Found): boolean {
  return f.field === 'status' || (f.field === 'utr' && f.paygateValue === '');
}

/** The differences between what Paygate recorded and what the provider holds. */
function compareWith(t: ReconcileTxn, record: ProviderRecord): Found[] {
  if (record.kind === 'transfer') return compareTransfer(t, record.transfer);
  if (record.kind === 'payments') return comparePayments(t, record.payments);
  // A refund Setu has no id for yet (its send's outcome unknown) has nothing at Setu to compare.
  if (t.channel_txn_id === '') return [];
  return compareRefund(t, record.refund);
}
