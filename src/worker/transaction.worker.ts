/**
 * The background worker for transactions that wait on time: pay-ins that expire, payouts and
 * refunds to be handed to their channel, payouts and refunds whose outcome is due. It is a kind of
 * work of the claim loop (`claim-loop.ts`): it claims due rows with a lease (so that several
 * processes on one PostgreSQL never work on the same row), runs each kind's step (`payin.step.ts`,
 * `payout.step.ts`, `refund.step.ts`), which calls the channel outside any database transaction,
 * and records what came back. A payout left PENDING or PROCESSING by a process that stopped is
 * claimed again once its lease has run out.
 *
 * Promptness: a payout created here wakes it at once (`created`); one created by a process whose
 * worker is not running wakes it through LISTEN/NOTIFY on PostgreSQL. While the database is
 * unavailable it looks again every RECOVERY_CHECK_MS at most, and the database's return
 * (`Database.onAvailable`, or the LISTEN connection restored) wakes it at once. A row whose step
 * failed for the outage is given back then, instead of staying leased until its lease runs out.
 */
import type { Database } from '../db/database.ts';
import { ChannelFailure, type Channel } from '../channels/channel.ts';
import type { ChannelOutcomes } from '../live/outcomes.ts';
import type { NotificationService } from '../live/notifications.service.ts';
import type { ChannelSilence } from '../live/silence.ts';
import { deleteOpening, OPENING, type TransactionRow } from '../transactions/transactions.repository.ts';
import { failedRead, retryDelay, type WorkerLogger } from './worker-support.ts';
import { clearReadFailures, rescheduleFailedRead } from '../transactions/read-failures.repository.ts';
import {
  claimDueTransactions,
  giveBackTransactions,
  markProcessing,
  openChannels,
  type Accepted,
  reschedule,
  rescheduleMany,
  reschedulePending,
  type Rescheduled,
} from '../transactions/transaction-claims.repository.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import { isUnavailableError } from '../db/errors.ts';
import { listenForWork, notifyWork } from './work-signal.ts';
import type { FinalityService } from '../finality/finality.service.ts';
import { ClaimLoop, type ClaimWork } from './claim-loop.ts';
import { payinStep } from './payin.step.ts';
import { payoutStep } from './payout.step.ts';
import { refundStep } from './refund.step.ts';
import type { StepDeps } from './step.ts';

const BATCH = 100;
/** How often the channels of open transactions are looked for (those this process has not configured). */
const OTHER_CHANNELS_MS = 60_000;
/** How long after a wake-up a round waits while rows are in hand, so that the wake-ups within it share one look. */
const NUDGE_MS = 20;

/** What the transaction worker is built with, besides the database, its channels and finality. */
export interface TransactionWorkerOptions {
  pollMs: number;
  now?: () => number;
  logger: WorkerLogger;
  outcomes: ChannelOutcomes;
  /** Applies stored channel notifications that their request did not. */
  notifications: NotificationService;
  /** Opens a `channel_silent` exception for a live channel whose notifications stopped (looked at after rounds). */
  silence?: ChannelSilence;
  /** The channels whose transactions it works on (each is claimed on its own). */
  channelNames: readonly string[];
  /** CHANNEL_STUCK_AFTER_S in ms: a live transaction not final after it is an exception. */
  stuckAfterMs: number;
  /**
   * How long a claimed transaction is this process's: longer than one step may take (three
   * channel calls at most: a read, a submission, a read). Another process takes it up after.
   */
  leaseMs: number;
  /** CHANNEL_RESEND_AFTER_S in ms: the least wait after an unknown send of a refund whose channel may take it twice. */
  resendAfterMs?: number;
}

/** The transaction worker of one process; `app.ts` builds it, the server starts and stops it. */
export class TransactionWorker {
  private readonly loop: ClaimLoop<TransactionRow>;
  private readonly processing = new BatchQueue<Accepted, void>((batch) => this.recordAccepted(batch));
  /** Pay-ins and payouts asked about with no outcome yet, given back together (one statement for many). */
  private readonly polled = new BatchQueue<Rescheduled, void>(async (batch) => {
    await rescheduleMany(this.database.db, batch);
    return batch.map(() => undefined);
  });
  private notificationsLookedAt = 0;
  /** Rows claimed here whose step failed while the database was down: given back when it is back. */
  private readonly held = new Map<string, { lease: number; nextActionAt: number | null }>();
  /** Channels that open transactions name and this process has not configured; when last looked for. */
  private otherChannels: string[] = [];
  private otherChannelsAt = -Infinity;

  constructor(
    private readonly database: Database,
    private readonly channels: (name: string) => Channel | undefined,
    private readonly finality: FinalityService,
    private readonly options: TransactionWorkerOptions,
  ) {
    this.loop = new ClaimLoop(database, this.work());
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /**
   * A payout or refund was committed: taken up here at once, or, when this worker is not running (a process
   * stopping, one that runs no worker), by the workers of the other processes on PostgreSQL.
   */
  created(): void {
    if (this.loop.running) this.loop.wake();
    else this.loop.tellOthers();
  }

  /** Looks for due work now (or at `at`, when given). */
  wake(at?: number): void {
    if (at === undefined) this.loop.wake();
    else this.loop.wakeAt(at);
  }

  /** Works through what is due now, once, and waits for its steps; returns how many rows it claimed. */
  drain(): Promise<number> {
    return this.loop.drain();
  }

  /**
   * Transactions as the claim loop's work. Each channel's due rows are claimed on their own,
   * earliest due first, and at most BATCH of a channel's rows are in hand at once: a backlog on one
   * channel (tens of thousands of pay-ins waiting on a provider's rate limit) never holds back
   * another channel's payouts. More of a channel's rows are claimed as soon as half of those in hand
   * are done, so that its throttle always has the next calls waiting (a batch finished to its
   * slowest call before the next was claimed left every rate limit's second a claim and a call's
   * time short); while a channel's hands are full, the others are looked at again when a payout or
   * refund is created, and every poll interval. A row in hand is not claimed again here, even once
   * its lease has run out: its step may still be reading or sending it.
   */
  private work(): ClaimWork<TransactionRow> {
    const { database, options } = this;
    return {
      name: 'transaction worker',
      logger: options.logger,
      now: () => this.now,
      pollMs: options.pollMs,
      leaseMs: options.leaseMs,
      signal: { listen: (onSignal) => listenForWork(database, onSignal), notify: () => notifyWork(database) },
      gatherMs: NUDGE_MS,
      messages: {
        claim: 'claiming due transactions failed',
        giveBack: 'giving back transactions claimed before an outage failed',
        notify: 'notifying other workers of a payout failed',
      },
      partitions: () => this.channelsToClaim(),
      room: (held) => (held > BATCH / 2 ? 0 : BATCH - held),
      refill: (room, more) => more && room > 0,
      only: (channel) => ({ column: 'channel', value: channel }),
      claim: (channel, room, claim, expired) =>
        claimDueTransactions(database, channel, claim.now, options.leaseMs, room, claim.owner, expired),
      giveBack: (lost) => giveBackTransactions(database, lost),
      giveBackHeld: () => this.giveBackHeld(),
      key: (row) => row.payment_id,
      leaseUntil: (row) => row.lease_until,
      handle: (row) => this.handle(row),
      afterRound: async () => {
        await this.applyNotifications();
        await this.watchSilence();
      },
    };
  }

  /**
   * Stored notifications wait only after a failure or a crash: looked for once a poll interval, not
   * on every wake-up (a busy gateway wakes the worker for every payout it creates).
   */
  private async applyNotifications(): Promise<void> {
    if (this.now - this.notificationsLookedAt < this.options.pollMs) return;
    this.notificationsLookedAt = this.now;
    try {
      while ((await this.options.notifications.applyDue(BATCH)) === BATCH && this.loop.running);
    } catch (err) {
      this.loop.outage.failed(err, 'applying stored channel notifications failed');
    }
  }

  /** Whether a live channel's notifications stopped while its transactions wait (`ChannelSilence`). */
  private async watchSilence(): Promise<void> {
    try {
      await this.options.silence?.checkWhenDue();
    } catch (err) {
      this.loop.outage.failed(err, 'looking for silent channels failed');
    }
  }

  /**
   * The configured channels, and any other channel that open transactions name (looked for once
   * every OTHER_CHANNELS_MS): a process claims those too, so that a pay-in whose opening its process
   * left behind is removed, and the others are reported ("not configured") and tried again later.
   */
  private async channelsToClaim(): Promise<readonly string[]> {
    if (this.now - this.otherChannelsAt >= OTHER_CHANNELS_MS) {
      try {
        const open = await openChannels(this.database.db);
        this.otherChannels = open.filter((c) => !this.options.channelNames.includes(c));
        this.otherChannelsAt = this.now;
      } catch (err) {
        this.loop.outage.failed(err, 'looking for the channels of open transactions failed');
      }
    }
    return [...this.options.channelNames, ...this.otherChannels];
  }

  /**
   * Gives back the rows held since the outage, to be claimed again at once: each only while its
   * lease is still the one this worker took (after it, another process may have claimed the row).
   */
  private async giveBackHeld(): Promise<void> {
    for (const [paymentId, { lease, nextActionAt }] of this.held) {
      await reschedule(this.database.db, paymentId, nextActionAt ?? this.now, lease);
      this.held.delete(paymentId);
    }
  }

  /**
   * Records payouts their channel accepted as PROCESSING, in one statement for all that were
   * accepted while the previous one ran (one commit for many payouts).
   */
  private async recordAccepted(accepted: Accepted[]): Promise<void[]> {
    const at = this.now;
    await markProcessing(this.database.db, accepted, at);
    // Payouts recorded together were submitted together, so their outcomes fall due close
    // together: a look at the first and at the last due time finds them all.
    const due = accepted.map((s) => s.nextActionAt);
    const [first, last] = [Math.min(...due), Math.max(...due)];
    this.wake(first);
    if (last > first) this.wake(last);
    return accepted.map(() => undefined);
  }

  private async handle(row: TransactionRow): Promise<void> {
    // Whether this step made a send of a PENDING payout that its channel may have acted on.
    const step = { sent: false };
    try {
      if (row.kind === 'payin' && row.response_json === OPENING) {
        // Its channel call never came back to be recorded (the process stopped): nobody was given
        // this pay-in, so it is removed and its order number is free again. No callback.
        await deleteOpening(this.database.db, row.payment_id);
        return;
      }
      const channel = this.channels(row.channel);
      if (!channel) throw new Error(`channel ${row.channel} is not configured`);
      const ageMs = this.now - row.created_at;
      if (channel.live && ageMs >= this.options.stuckAfterMs)
        await this.options.outcomes.stuck(row, ageMs / 1000);
      const deps = this.deps(row, channel);
      if (row.kind === 'payin') await payinStep(row, channel, deps);
      else if (row.kind === 'refund') await refundStep(row, channel, step, deps);
      else await payoutStep(row, channel, step, deps);
      // Its reads failed before and this step did not: the next failure waits from the start.
      if (row.read_failures > 0) await clearReadFailures(this.database.db, row.payment_id);
    } catch (err) {
      await this.failed(row, err, step);
    }
  }

  /** What the step of `row`, on `channel`, is given. */
  private deps(row: TransactionRow, channel: Channel): StepDeps {
    const { database, options } = this;
    const now = () => this.now;
    return {
      database,
      finality: this.finality,
      outcomes: options.outcomes,
      now,
      stuckAfterMs: options.stuckAfterMs,
      // Read when a payout or refund is handed over: CHANNEL_POLL_MS is the gap between the two
      // reads that allow a second send.
      get send() {
        const readGap = channel.pollDelayMs(row.kind, 0);
        // CHANNEL_RESEND_AFTER_S is the wait before another send of a refund the channel may take
        // twice, whether its unknown send was answered (a 5xx) or not.
        const inTransitMs = resendWaits(row, channel)
          ? (options.resendAfterMs ?? channel.inTransitMs)
          : channel.inTransitMs;
        return { db: database.db, now, readGap, inTransitMs, leaseMs: options.leaseMs };
      },
      accepted: (a) => this.processing.submit(a),
      pollAgain: (r) => this.polled.submit(r),
    };
  }

  /** Whether an unknown send of `row` waits CHANNEL_RESEND_AFTER_S before another (`resendWaits`). */
  private resendWaits(row: TransactionRow): boolean {
    const channel = this.channels(row.channel);
    return channel !== undefined && resendWaits(row, channel);
  }

  /**
   * A step failed: the channel's failure is logged and the row asked about again with back-off, any
   * other failure is the database's or a bug. A PENDING payout or refund keeps its count of sends
   * right: one not made is taken back.
   */
  private async failed(row: TransactionRow, err: unknown, step: { sent: boolean }): Promise<void> {
    const failure = err instanceof ChannelFailure ? err : null;
    const log = {
      payment_id: row.payment_id,
      channel: row.channel,
      ...(failure && { kind: failure.kind, code: failure.code }),
    };
    if (failure) this.options.logger.warn(log, 'channel call failed; trying again later');
    else this.loop.outage.failed(err, 'transaction worker step failed', log);
    const nextActionAt = this.now + retryDelay(row, failure, this.now, this.options.pollMs);
    const pending = row.kind !== 'payin' && row.status === 'PENDING';
    await (
      pending
        ? reschedulePending(this.database.db, row.payment_id, nextActionAt, {
            unsent: !step.sent,
            attempt: row.transfer_attempt,
            // A send that may have arrived needs two new reads; one unanswered may arrive later, and
            // one that a channel may take twice dates the wait before another, however it ended.
            ...(step.sent && {
              notFoundAt: null,
              ...((failure?.unanswered || (failure?.kind === 'unknown' && this.resendWaits(row))) && {
                sentAt: this.now,
              }),
            }),
          })
        : failedRead(row, failure, this.now)
          ? rescheduleFailedRead(this.database.db, row.payment_id, nextActionAt, row.read_failures + 1)
          : reschedule(this.database.db, row.payment_id, nextActionAt)
    ).catch((again: unknown) => {
      // A step that failed for the outage is taken up again once the database is back (its count
      // of sends as the claim left it); one that sent keeps its lease, which dates that send.
      if (isUnavailableError(again) && row.lease_until !== null && !step.sent)
        this.held.set(row.payment_id, {
          lease: row.lease_until,
          nextActionAt: failure ? nextActionAt : null,
        });
      else
        this.options.logger.error(
          { ...log, err: again },
          'rescheduling a transaction failed; it is taken up again when its lease runs out',
        );
    });
  }
}

/**
 * Whether a send of `row` whose outcome is unknown is followed by CHANNEL_RESEND_AFTER_S of reads
 * before another send: a refund on a channel that may take the same refund twice.
 */
function resendWaits(row: TransactionRow, channel: Channel): boolean {
  return row.kind === 'refund' && channel.refunds !== undefined && !channel.refunds.uniqueReferences;
}
