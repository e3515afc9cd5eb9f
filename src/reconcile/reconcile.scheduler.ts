/**
 * The daily reconciliation at RECONCILE_AT (IST), in one process of a cluster: each process looks
 * at that moment (a timer set for it) and every tick; once the time has passed, each channel's run
 * of the day before is taken by whoever claims its lease row first. The holder renews the lease
 * between pages; a process that dies mid-run lets it lapse, and the next process to look runs the
 * channel again (differences found already are not opened twice), so the day is reconciled exactly
 * once to the end.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { istDate, istTimeOn, istYesterday } from '../ist.ts';
import { claimLease, finishLease, renewLease } from './reconcile.repository.ts';
import { RunAbandoned, type ReconcileService } from './reconcile.service.ts';

interface Logger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface SchedulerOptions {
  /** RECONCILE_AT as minutes after IST midnight. */
  atMinutes: number;
  now?: () => number;
  /** How often a process looks whether a run is due. */
  tickMs?: number;
  /** How long a claim holds without renewal; a dead holder's run is taken up after it. */
  leaseMs?: number;
  /** This process's name in the lease row. */
  holder?: string;
  logger?: Logger;
}

export class ReconcileScheduler {
  readonly holder: string;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private atTimer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopping = false;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly service: ReconcileService,
    private readonly options: SchedulerOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.holder = options.holder ?? randomUUID();
  }

  start(): void {
    if (this.timer || this.service.configured().length === 0) return;
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? 30_000);
    this.timer.unref();
    this.armAt();
    void this.tick();
  }

  /** Looks again at the next RECONCILE_AT, to the millisecond rather than at the next tick. */
  private armAt(): void {
    if (this.stopping) return;
    const now = this.now();
    let at = istTimeOn(istDate(now), this.options.atMinutes);
    if (at <= now) at += 86_400_000;
    this.atTimer = setTimeout(() => {
      // A timer a millisecond early finds the run not due yet and is set again for the same moment.
      void this.tick();
      this.armAt();
    }, at - now);
    this.atTimer.unref();
  }

  /** Stops looking; a run in progress stops at its next page and its lease lapses for another process. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    if (this.atTimer) clearTimeout(this.atTimer);
    this.timer = null;
    this.atTimer = null;
    await this.running;
  }

  /** One look: runs each channel whose run of yesterday is due and not taken. Never two at once here. */
  tick(): Promise<void> {
    this.running ??= this.due().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async due(): Promise<void> {
    const now = this.now();
    if (now < istTimeOn(istDate(now), this.options.atMinutes)) return;
    const date = istYesterday(now);
    const leaseMs = this.options.leaseMs ?? 120_000;
    for (const channel of this.service.configured()) {
      try {
        const claimed = await claimLease(
          this.db,
          date,
          channel,
          this.holder,
          this.now(),
          this.now() + leaseMs,
        );
        if (!claimed) continue;
        const keepGoing = async () => {
          if (this.stopping) throw new RunAbandoned('the process is stopping');
          if (!(await renewLease(this.db, date, channel, this.holder, this.now() + leaseMs)))
            throw new RunAbandoned(`the reconcile lease of ${channel} ${date} was taken over`);
        };
        const run = await this.service.run(date, channel, 'schedule', keepGoing);
        await finishLease(this.db, date, channel, this.holder, this.now());
        this.options.logger?.info({ run }, 'reconciliation done');
      } catch (err) {
        // The lease lapses and another look (here or in another process) runs the channel again.
        this.options.logger?.error({ err, channel, date }, 'reconciliation stopped');
      }
    }
  }
}
