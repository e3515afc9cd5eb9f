/**
 * What every call to a provider passes through (`ChannelHttp`): a turn before it starts, and word
 * of how it was answered after. `Throttle` keeps one process's turns in memory (SQLite: one
 * process serves the database); `SharedThrottle` takes the whole cluster's from PostgreSQL.
 */
import { FAILING_AFTER, FIRST_BACKOFF_MS as FIRST_FAILING_MS } from '../db/channel-turns.ts';

export interface CallGate {
  /**
   * True when the caller may start its call; else why not, with no turn taken: `claim` when its
   * turn would come after `notAfter`, `backoff` when the provider fails every call and its turn
   * would come later than one back-off from now.
   */
  take(notAfter?: number): Promise<Turn>;
  /** The provider answered 429 (`retryAfterMs` as it asked, or null). */
  limited(retryAfterMs: number | null): void;
  /** The provider answered (anything but a 429 or a 5xx). */
  passed(): void;
  /** The provider answered 5xx, or did not answer. */
  failed(): void;
  /** The provider's back-off now (ms between calls while it fails them all; 0 when it answers). */
  backoffMs(): Promise<number>;
}

export type Turn = true | 'claim' | 'backoff';

/** The cap of a provider's back-off: CHANNEL_POLL_MS (1 s to a minute), so calls resume within a poll interval of its recovery. */
export function backoffCapMs(pollMs: number): number {
  return Math.min(Math.max(pollMs, 1000), 60_000);
}

/**
 * A per-process limit on the calls to one provider: calls start evenly spaced, one every
 * `1000 / maxPerSecond` ms at most, so no second holds more than `maxPerSecond` of them wherever
 * it is measured from (a burst of a second's calls at once would let a provider's own window,
 * a few ms off ours, see up to twice the limit). A 429 pauses every call to that provider for as
 * long as the provider asked (`Retry-After`, else Cashfree's `x-ratelimit-retry`, else a backoff
 * that doubles from 1 s to a minute). A call waits for its turn; nothing is dropped. One throttle
 * per provider, shared by all of that provider's requests (`ChannelHttp`). While the provider
 * fails every call (FAILING_AFTER in a row, 5xx or no answer), its calls back off as a whole: one
 * call (a probe) a back-off after the one before, the back-off doubling from 1 s (at most once a
 * back-off, so calls already on their way do not double it again) to `capMs`; the first answer
 * ends it.
 */

/** The longest pause a provider's answer can ask for: a wrong header must not stop payouts for a day. */
const MAX_PAUSE_MS = 300_000;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

export class Throttle implements CallGate {
  /** The time between two calls' turns, ms. */
  private readonly gapMs: number;
  /** The earliest turn the next call can have. */
  private nextTurn = -Infinity;
  /**
   * When the last `maxPerSecond` calls really started. A caller whose timer fired late (a busy
   * event loop) starts after its turn, and the calls reserved after it were spaced from the turn,
   * not from the late start: without this check they could crowd one second past the limit.
   */
  private readonly began: Float64Array;
  private beganHead = 0;
  private pausedUntil = 0;
  private limitedMs = FIRST_BACKOFF_MS;
  /** Calls failed in a row; the back-off while the provider fails them all (0: none), when it last changed, and how often it did. */
  private failures = 0;
  private failingMs = 0;
  private failingAt = 0;
  private failingChanges = 0;

  constructor(
    readonly maxPerSecond: number,
    private readonly now: () => number = Date.now,
    /** Waits `ms` on the clock `now` reads. */
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
    /** The longest back-off while the provider fails every call (`backoffCapMs`). */
    private readonly capMs = 60_000,
  ) {
    if (!(maxPerSecond >= 1)) throw new Error('a throttle needs a rate of at least 1 a second');
    this.gapMs = 1000 / maxPerSecond;
    this.began = new Float64Array(Math.floor(maxPerSecond)).fill(-Infinity);
  }

  /**
   * Resolves true when the caller may start its call; at once, with no turn taken, `claim` when its
   * turn would come after `notAfter` (a call that could not be sent in time takes no other's turn),
   * `backoff` when the provider fails every call and the next probe is already someone's.
   */
  async take(notAfter = Infinity): Promise<Turn> {
    for (;;) {
      const now = this.now();
      const at = Math.max(now, this.nextTurn, this.pausedUntil);
      if (at > notAfter) return 'claim';
      if (this.failingMs > 0 && at > now + this.failingMs) return 'backoff';
      // While the provider fails every call, each turn is a probe, a back-off after the one before.
      this.nextTurn = at + (this.failingMs > 0 ? this.failingMs : this.gapMs);
      const changes = this.failingChanges;
      if (at > now) await this.sleep(Math.ceil(at - now));
      // A 429, or a back-off begun or doubled, while this call waited for its turn holds it back too.
      if (this.pausedUntil <= this.now() && (changes === this.failingChanges || this.failingMs === 0)) {
        await this.begin();
        return true;
      }
    }
  }

  /** Starts the call once fewer than `maxPerSecond` really started in the last second. */
  private async begin(): Promise<void> {
    for (;;) {
      const now = this.now();
      const free = this.began[this.beganHead]! + 1000;
      if (now >= free) {
        this.began[this.beganHead] = now;
        this.beganHead = (this.beganHead + 1) % this.began.length;
        return;
      }
      await this.sleep(Math.ceil(free - now));
    }
  }

  /** The provider answered 429: every call waits `retryAfterMs` (or the next backoff step when it did not say). */
  limited(retryAfterMs: number | null): void {
    const pause = retryAfterMs ?? this.limitedMs;
    if (retryAfterMs === null) this.limitedMs = Math.min(this.limitedMs * 2, MAX_BACKOFF_MS);
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + Math.min(pause, MAX_PAUSE_MS));
  }

  /**
   * The provider answered something else: the next 429 without a header backs off from the start
   * again, and a back-off of failures ends: the next call may go now.
   */
  passed(): void {
    this.limitedMs = FIRST_BACKOFF_MS;
    this.failures = 0;
    if (this.failingMs === 0) return;
    this.failingMs = 0;
    this.nextTurn = Math.min(this.nextTurn, this.now());
  }

  /** The provider answered 5xx or nothing: FAILING_AFTER in a row begin its back-off, a probe's failure doubles it. */
  failed(): void {
    const now = this.now();
    this.failures++;
    let next = this.failingMs;
    if (this.failures < FAILING_AFTER) return;
    if (next === 0) next = Math.min(FIRST_FAILING_MS, this.capMs);
    else if (now - this.failingAt >= next) next = Math.min(next * 2, this.capMs);
    if (next === this.failingMs) return;
    this.failingMs = next;
    this.failingAt = now;
    this.failingChanges++;
    this.nextTurn = Math.max(this.nextTurn, now + next);
  }

  async backoffMs(): Promise<number> {
    return this.failingMs;
  }
}

/**
 * How long a 429 asks the caller to wait, in ms: `Retry-After` (seconds or an HTTP date), else
 * `x-ratelimit-retry` (seconds, Cashfree's), else null.
 */
export function retryAfterMs(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | null {
  const first = (name: string) => {
    const v = headers[name];
    return (Array.isArray(v) ? v[0] : v)?.trim() ?? '';
  };
  const retryAfter = first('retry-after');
  if (/^\d{1,9}$/.test(retryAfter)) return Number(retryAfter) * 1000;
  if (retryAfter) {
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(at - now, 0);
  }
  const cashfree = first('x-ratelimit-retry');
  if (/^\d{1,9}$/.test(cashfree) && Number(cashfree) > 0) return Number(cashfree) * 1000;
  return null;
}
