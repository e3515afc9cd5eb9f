/**
 * Forgets rotated-out webhook secrets when their overlap ends (CONTRACT §7): in every serving
 * process, a timer set for the next end deletes the old secret from the database at that moment.
 * Rotations made elsewhere (the CLI, another process) are found by looking again at least every
 * `checkMs`; one made in this process re-arms the timer at once. Signing already stops at the end
 * (`signingSecretsAt`); this makes the secret gone, not merely unused.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { forgetEndedSecrets, nextSecretEnd } from './merchants.repository.ts';

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface SecretOverlapOptions {
  now?: () => number;
  /** How often at most the scheduler looks for overlaps it was not told about. */
  checkMs?: number;
  logger?: Logger;
}

export class SecretOverlapScheduler {
  private readonly now: () => number;
  private readonly checkMs: number;
  private timer: NodeJS.Timeout | null = null;
  /** When the timer fires (epoch ms). */
  private timerAt = 0;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly options: SecretOverlapOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.checkMs = options.checkMs ?? 60_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.sweep();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** A rotation in this process: an overlap ending sooner than the timer is set for is caught at its end. */
  rotated(until: number | null): void {
    if (until !== null && (this.timer === null || until < this.timerAt)) this.arm(until - this.now());
  }

  /** Forgets every overlap that has ended, then sets the timer for the next end. Never two at once. */
  sweep(): Promise<void> {
    this.running ??= this.forget().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async forget(): Promise<void> {
    let nextEnd: number | null = null;
    try {
      const forgotten = await forgetEndedSecrets(this.db, this.now());
      if (forgotten > 0) this.options.logger?.info({ forgotten }, 'rotated-out webhook secrets deleted');
      nextEnd = await nextSecretEnd(this.db);
    } catch (err) {
      // The database is away: looked at again after checkMs.
      this.options.logger?.warn({ err: (err as Error)?.message }, 'forgetting old webhook secrets failed');
    }
    this.arm(nextEnd === null ? this.checkMs : nextEnd - this.now());
  }

  private arm(inMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(inMs, this.checkMs));
    this.timerAt = this.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.sweep();
    }, delay);
    this.timer.unref();
  }
}
