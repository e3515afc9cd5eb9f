/**
 * A per-process limit on the calls to one provider: calls start evenly spaced, one every
 * `1000 / maxPerSecond` ms at most, so no second holds more than `maxPerSecond` of them wherever
 * it is measured from (a burst of a second's calls at once would let a provider's own window,
 * a few ms off ours, see up to twice the limit). A 429 pauses every call to that provider for as
 * long as the provider asked (`Retry-After`, else Cashfree's `x-ratelimit-retry`, else a backoff
 * that doubles from 1 s to a minute). A call waits for its turn; nothing is dropped. One throttle
 * per provider, shared by all of that provider's requests (`ChannelHttp`).
 */

/** The longest pause a provider's answer can ask for: a wrong header must not stop payouts for a day. */
const MAX_PAUSE_MS = 300_000;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

export class Throttle {
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
  private backoffMs = FIRST_BACKOFF_MS;

  constructor(
    readonly maxPerSecond: number,
    private readonly now: () => number = Date.now,
    /** Waits `ms` on the clock `now` reads. */
    private readonly sleep: (ms: number) => Promise<void> = (ms) =>
      new Promise((resolve) => setTimeout(resolve, ms)),
  ) {
    if (!(maxPerSecond >= 1)) throw new Error('a throttle needs a rate of at least 1 a second');
    this.gapMs = 1000 / maxPerSecond;
    this.began = new Float64Array(Math.floor(maxPerSecond)).fill(-Infinity);
  }

  /**
   * Resolves true when the caller may start its call; false at once, with no turn taken, when its
   * turn would come after `notAfter` (a call that could not be sent in time takes no other's turn).
   */
  async take(notAfter = Infinity): Promise<boolean> {
    for (;;) {
      const now = this.now();
      const at = Math.max(now, this.nextTurn, this.pausedUntil);
      if (at > notAfter) return false;
      this.nextTurn = at + this.gapMs;
      if (at > now) await this.sleep(Math.ceil(at - now));
      // A 429 that came while this call waited for its turn holds it back too.
      if (this.pausedUntil <= this.now()) {
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
    const pause = retryAfterMs ?? this.backoffMs;
    if (retryAfterMs === null) this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + Math.min(pause, MAX_PAUSE_MS));
  }

  /** The provider answered something else: the next 429 without a header backs off from the start again. */
  passed(): void {
    this.backoffMs = FIRST_BACKOFF_MS;
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
