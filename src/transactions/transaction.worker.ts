/**
 * The background worker for transactions that wait on time: pay-ins that expire, payouts to be
 * handed to their channel, payouts whose outcome is due. It claims due rows with a lease (so that
 * several processes on one PostgreSQL never work on the same row), calls the channel outside any
 * database transaction, and records what came back. A payout left PENDING or PROCESSING by a
 * process that stopped is claimed again once its lease has run out.
 */
import type { Database } from '../db/database.ts';
import type { Channel } from '../channels/channel.ts';
import { claimDue, markProcessing, reschedule, type TransactionRow } from './transactions.repository.ts';
import type { SettlementService } from './settlement.service.ts';

export interface WorkerLogger {
  error(obj: object, msg: string): void;
}

const LEASE_MS = 30_000;
const BATCH = 100;

export class TransactionWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(
    private readonly database: Database,
    private readonly channels: (name: string) => Channel | undefined,
    private readonly settlement: SettlementService,
    private readonly options: { pollMs: number; now?: () => number; logger: WorkerLogger },
  ) {}

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
        rows = await claimDue(this.database.db, this.database.kind, this.now, LEASE_MS, BATCH);
      } catch (err) {
        this.options.logger.error({ err }, 'claiming due transactions failed');
        return handled;
      }
      await Promise.all(rows.map((row) => this.handle(row)));
      handled += rows.length;
      if (rows.length < BATCH || this.stopped) return handled;
    }
  }

  private async handle(row: TransactionRow): Promise<void> {
    try {
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
        const next = this.now + channel.payoutPollMs;
        await markProcessing(this.database.db, row.payment_id, channelTxnId, next, this.now);
        this.wake(next);
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
      this.options.logger.error({ err, payment_id: row.payment_id }, 'transaction worker step failed');
      await reschedule(this.database.db, row.payment_id, this.now + this.options.pollMs).catch(() => {});
    }
  }
}
