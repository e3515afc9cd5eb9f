/**
 * A per-process limit on the calls to one provider: at most `maxPerSecond` calls start in any
 * second, spaced evenly, and a 429 pauses every call to that provider for as long as the provider
 * asked (`Retry-After`, else Cashfree's `x-ratelimit-retry`, else a backoff that doubles from 1 s
 * to a minute). A call waits for its turn; nothing is dropped. One throttle per provider, shared by
 * all of that provider's requests (`ChannelHttp`).
 */

/** The longest pause a provider's answer can ask for: a wrong header must not stop payouts for a day. */
const MAX_PAUSE_MS = 300_000;
const FIRST_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

export class Throttle {
  private readonly intervalMs: number;
  /** When the next call may start (epoch ms). */
  private next = 0;
  private pausedUntil = 0;
  private backoffMs = FIRST_BACKOFF_MS;

  constructor(
    readonly maxPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(maxPerSecond > 0)) throw new Error('a throttle needs a positive rate');
    this.intervalMs = 1000 / maxPerSecond;
  }

  /** Resolves when the caller may start its call. */
  async take(): Promise<void> {
    for (;;) {
      const now = this.now();
      const at = Math.max(now, this.next, this.pausedUntil);
      this.next = at + this.intervalMs;
      if (at <= now) return;
      await new Promise((r) => setTimeout(r, Math.ceil(at - now)));
      // A 429 that came while this call waited for its turn holds it back too.
      if (this.pausedUntil <= this.now()) return;
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
