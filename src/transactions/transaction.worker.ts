/**
 * The background worker for transactions that wait on time: pay-ins that expire, payouts to be
 * handed to their channel, payouts whose outcome is due. It claims due rows with a lease (so that
 * several processes on one PostgreSQL never work on the same row), calls the channel outside any
 * database transaction, and records what came back. A payout left PENDING or PROCESSING by a
 * process that stopped is claimed again once its lease has run out.
 */
import type { Database } from '../db/database.ts';
import type { Channel } from '../channels/channel.ts';
import {
  claimDueTransactions,
  deleteOpening,
  markProcessing,
  OPENING,
  reschedule,
  type TransactionRow,
} from './transactions.repository.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import { OutageLog } from '../db/outage-log.ts';
import type { SettlementService } from './settlement.service.ts';

export interface WorkerLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

const LEASE_MS = 30_000;
const BATCH = 100;

/** A payout its channel accepted, to be recorded as PROCESSING. */
interface Submitted {
  paymentId: string;
  channelTxnId: string;
  nextActionAt: number;
}

export class TransactionWorker {
  private readonly processing = new BatchQueue<Submitted, void>((batch) => this.recordSubmitted(batch));
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private readonly storeDown: OutageLog;

  constructor(
    private readonly database: Database,
    private readonly channels: (name: string) => Channel | undefined,
    private readonly settlement: SettlementService,
    private readonly options: { pollMs: number; now?: () => number; logger: WorkerLogger },
  ) {
    this.storeDown = new OutageLog(options.logger, 'transaction worker');
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Looks for due work now (and again at `at`, when given). */
  wake(at?: number): void {
    if (this.stopped) return;
    if (at !== undefined && at > this.now) {
      setTimeout(() => this.wake(), at - this.now + 5).unref();
      return;
    }
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .then(() => undefined)
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        } else {
          this.schedule(this.options.pollMs);
        }
      });
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), ms);
    this.timer.unref();
  }

  /** Works through everything due now. Returns how many rows it handled. */
  async drain(): Promise<number> {
    let handled = 0;
    for (;;) {
      let rows: TransactionRow[];
      try {
        rows = await claimDueTransactions(this.database, this.now, LEASE_MS, BATCH);
        this.storeDown.ok();
      } catch (err) {
        // Tried again at the next poll: a database that is down is not hammered.
        this.storeDown.failed(err, 'claiming due transactions failed');
        return handled;
      }
      await Promise.all(rows.map((row) => this.handle(row)));
      handled += rows.length;
      if (rows.length < BATCH || this.stopped) return handled;
    }
  }

  /**
   * Records payouts their channel accepted as PROCESSING, in one database transaction for all
   * that were accepted while the previous such transaction ran (one commit for many payouts).
   */
  private async recordSubmitted(submitted: Submitted[]): Promise<void[]> {
    const at = this.now;
    await this.database.db.transaction().execute(async (tx) => {
      for (const s of submitted) await markProcessing(tx, s.paymentId, s.channelTxnId, s.nextActionAt, at);
    });
    // Payouts recorded together were submitted together, so their outcomes fall due close
    // together: a look at the first and at the last due time finds them all.
    const due = submitted.map((s) => s.nextActionAt);
    const [first, last] = [Math.min(...due), Math.max(...due)];
    this.wake(first);
    if (last > first) this.wake(last);
    return submitted.map(() => undefined);
  }

  private async handle(row: TransactionRow): Promise<void> {
    try {
      if (row.kind === 'payin' && row.response_json === OPENING) {
        // Its channel call never came back to be recorded (the process stopped): nobody was given
        // this pay-in, so it is removed and its order number is free again. No callback.
        await deleteOpening(this.database.db, row.payment_id);
        return;
      }
      if (row.kind === 'payin') {
        await this.settlement.settle(
          row.payment_id,
          { status: 'FAILED', utr: '', channelTxnId: '' },
          'expiry',
        );
        return;
      }
      const channel = this.channels(row.channel);
      if (!channel) throw new Error(`channel ${row.channel} is not configured`);
      const submission = {
        paymentId: row.payment_id,
        amount: row.amount,
        currency: row.currency,
        receiver: {
          name: row.receiver_name ?? '',
          accountNo: row.receiver_account_no ?? '',
          ifsc: row.receiver_ifsc ?? '',
        },
      };
      if (row.status === 'PENDING') {
        const { channelTxnId } = await channel.submitPayout(submission);
        // Recorded as soon as the channel accepted it, not at the end of the round: a slow call
        // for another payout must not keep this one PENDING while its lease runs down.
        await this.processing.submit({
          paymentId: row.payment_id,
          channelTxnId,
          nextActionAt: this.now + channel.payoutPollMs,
        });
        return;
      }
      const outcome = await channel.payoutOutcome({
        ...submission,
        channelTxnId: row.channel_txn_id,
        // markProcessing stamps updated_at with the submission time; rescheduling leaves it alone.
        submittedAt: row.updated_at,
      });
      if (outcome) await this.settlement.settle(row.payment_id, outcome, `channel:${channel.name}`);
      else
        await reschedule(this.database.db, row.payment_id, this.now + Math.max(channel.payoutPollMs, 1000));
    } catch (err) {
      this.storeDown.failed(err, 'transaction worker step failed', { payment_id: row.payment_id });
      await reschedule(this.database.db, row.payment_id, this.now + this.options.pollMs).catch(() => {});
    }
  }
}
