/**
 * The limit on the calls to one provider from the whole cluster (CONTRACT §10: several processes
 * on one PostgreSQL share it; the provider never sees more). Turns come from the database
 * (`db/channel-turns.ts`), a few at a time: a process waiting to call takes the next turns for
 * what it has waiting, at most a tenth of a second's worth in one statement, and takes more only
 * once its last turn is near (LOOKAHEAD_MS), so that a pause or a back-off reaches every process's
 * calls within that time, and the turns of all processes interleave one gap apart. A call starts
 * at its turn, measured on the database's clock and carried to this process's through the time
 * the statement took. One that wakes more than a little late (a busy event loop) takes a new turn
 * rather than crowd the calls after it: no second, wherever it is measured from, holds more than
 * the limit's turns (`SPACING`). The provider's 429 pause and its back-off while it fails every call are
 * the cluster's too (`CallGate`).
 */
import type { TurnGrant, TurnStore } from '../db/channel-turns.ts';
import { backoffCapMs, Throttle, type CallGate, type Turn } from './throttle.ts';

/**
 * Turns are spaced 2 % wider than the limit: the limit's turns then span 20 ms more than a second,
 * whatever the limit, and a call may start up to LATE_MS after its turn (a busy event loop) with
 * no second, wherever it is measured from, holding more than the limit's calls. The network's and
 * the timers' jitter (a call that arrives a little early or late) stay within a call or two.
 */
const SPACING = 1.02;
/** How late a call may start after its turn: within the 20 ms the spacing leaves, less a millisecond for the clocks. */
const LATE_MS = 1000 * (SPACING - 1) - 1;
/** How far ahead of its calls a process holds turns, at least (twice the database's answer time when that is longer). */
const LOOKAHEAD_MS = 100;
/**
 * The most a first turn is set after the database's now, for the time its answer takes to come
 * back: the cluster's turns before it go unused, so one slow answer must not leave a hole in them.
 */
const MAX_LEAD_MS = LOOKAHEAD_MS;
/** The longest pause a provider's answer can ask for: a wrong header must not stop payouts for a day. */
const MAX_PAUSE_MS = 300_000;
const FIRST_LIMITED_MS = 1000;
const MAX_LIMITED_MS = 60_000;

interface Waiter {
  notAfter: number;
  resolve(turn: Turn): void;
  reject(err: unknown): void;
}

export class SharedThrottle implements CallGate {
  private readonly gapMs: number;
  /** Turns taken in one statement at most: a tenth of a second's worth. */
  private readonly block: number;
  private readonly waiting: Waiter[] = [];
  private taking = false;
  /** This process's clock when its last turn comes. */
  private lastTurn = -Infinity;
  /** A pause or back-off this process has heard of, on its clock. */
  private pausedUntil = 0;
  /** Whether the provider was failing calls when last heard of: an answer then ends it for the cluster. */
  private failing = false;
  /** The provider's back-off when last heard of (0: none). */
  private backingOff = 0;
  private limitedMs = FIRST_LIMITED_MS;
  /** How long the database takes to give turns, lately (ms). */
  private roundTripMs = 1;
  /** This process's clock minus the database's, from the quickest answer lately, and that answer's time. */
  private offset = 0;
  private offsetRoundTrip = Infinity;
  private offsetAt = 0;

  constructor(
    readonly maxPerSecond: number,
    private readonly channel: string,
    private readonly store: TurnStore,
    /** The longest back-off while the provider fails every call (`backoffCapMs`). */
    private readonly capMs: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(maxPerSecond >= 1)) throw new Error('a throttle needs a rate of at least 1 a second');
    this.gapMs = (1000 / maxPerSecond) * SPACING;
    this.block = Math.max(1, Math.ceil(maxPerSecond / 10));
  }

  take(notAfter = Infinity): Promise<Turn> {
    // While the provider backs off, this process holds one probe at a time; other calls are not sent.
    if (this.backingOff > 0 && this.lastTurn > this.now()) return Promise.resolve('backoff');
    return new Promise((resolve, reject) => {
      this.waiting.push({ notAfter, resolve, reject });
      void this.takeTurns();
    });
  }

  /** Takes turns from the database for the calls waiting, while any wait. */
  private async takeTurns(): Promise<void> {
    if (this.taking) return;
    this.taking = true;
    try {
      while (this.waiting.length > 0) {
        // Not before a pause heard of here ends, whatever the database says (it may not know it yet).
        const ahead = Math.max(LOOKAHEAD_MS, 2 * this.roundTripMs);
        const early = Math.max(this.lastTurn - ahead, this.pausedUntil) - this.now();
        if (early > 0) await sleep(early);
        this.dropExpired();
        if (this.waiting.length === 0) break;
        const asked = this.now();
        const latest = this.waiting.reduce((most, w) => Math.max(most, w.notAfter), -Infinity);
        const grant = await this.store.reserve(
          this.channel,
          Math.min(this.waiting.length, this.block),
          this.gapMs,
          Math.min(this.roundTripMs, MAX_LEAD_MS),
          latest - asked,
        );
        const answered = this.now();
        // A slow answer counts at once; a fast one lowers the estimate slowly.
        this.roundTripMs = Math.max(answered - asked, this.roundTripMs * 0.8);
        this.handOut(grant, this.clockOffset(asked, answered, grant.dbNow));
      }
    } catch (err) {
      // The database did not answer: nothing may be sent without a turn.
      for (const w of this.waiting.splice(0)) w.reject(err);
    } finally {
      this.taking = false;
    }
  }

  /**
   * This process's clock minus the database's, as the quickest answer lately puts it (as NTP
   * does): the database's now lies between the asking and the answer, so a quick answer places it
   * closely, and a slow one (a busy machine) would shift this process's turns against the others'.
   * An older estimate counts for less, by a millisecond a second.
   */
  private clockOffset(asked: number, answered: number, dbNow: number): number {
    const roundTrip = answered - asked;
    if (roundTrip <= this.offsetRoundTrip + (answered - this.offsetAt) / 1000) {
      this.offset = (asked + answered) / 2 - dbNow;
      this.offsetRoundTrip = roundTrip;
      this.offsetAt = answered;
    }
    return this.offset;
  }

  /** Callers whose claim ran out while they waited are told so: their turn would come too late. */
  private dropExpired(): void {
    const now = this.now();
    for (let i = this.waiting.length - 1; i >= 0; i--)
      if (this.waiting[i]!.notAfter < now) this.waiting.splice(i, 1)[0]!.resolve('claim');
  }

  /** Gives the turns of `grant` (on the database's clock; `offset` carries them to this process's) to the callers first in line. */
  private handOut(grant: TurnGrant, offset: number): void {
    this.hear(grant, offset);
    // No turn came within any caller's claim (the database kept it for a caller who can use it).
    const none: Turn = grant.backoffMs > 0 ? 'backoff' : 'claim';
    if (grant.count === 0) for (const w of this.waiting.splice(0)) w.resolve(none);
    for (let i = 0; i < grant.count; i++) {
      const at = grant.firstAt + i * grant.spacingMs + offset;
      this.lastTurn = Math.max(this.lastTurn, at);
      // A caller whose turn would come after its claim runs out is told at once; the turn goes to the next.
      let w = this.waiting.shift();
      while (w && at > w.notAfter) {
        w.resolve('claim');
        w = this.waiting.shift();
      }
      if (!w) return;
      void this.startAt(w, at, grant.backoffMs > 0);
    }
    // A probe a back-off away is given: the next would come later still.
    if (grant.backoffMs > 0) for (const w of this.waiting.splice(0)) w.resolve('backoff');
  }

  /** What a grant says of the provider: its pause and back-off, as this process's clock reads them. */
  private hear(grant: TurnGrant, offset: number): void {
    this.failing = grant.backoffMs > 0 || grant.failures > 0;
    this.backingOff = grant.backoffMs;
    if (grant.pausedUntil + offset > this.pausedUntil) this.pausedUntil = grant.pausedUntil + offset;
  }

  /**
   * Starts the caller at its turn, unless it woke late or its turn falls in a pause heard of since
   * (the database may have given it before the pause was written): then it waits for another.
   */
  private async startAt(w: Waiter, at: number, probe: boolean): Promise<void> {
    const early = at - this.now();
    if (early > 0) await sleep(early);
    const now = this.now();
    const heldBack = this.pausedUntil > at + LATE_MS;
    // A probe while the provider backs off is the only call of its back-off: late, it crowds nobody.
    if ((now <= at + LATE_MS || (probe && now <= w.notAfter)) && !heldBack) return w.resolve(true);
    if (w.notAfter < now) return w.resolve('claim');
    this.waiting.unshift(w);
    void this.takeTurns();
  }

  limited(retryAfterMs: number | null): void {
    const pause = Math.min(retryAfterMs ?? this.limitedMs, MAX_PAUSE_MS);
    if (retryAfterMs === null) this.limitedMs = Math.min(this.limitedMs * 2, MAX_LIMITED_MS);
    this.pauseHere(pause);
    this.store.pause(this.channel, pause).catch(() => {
      // The database did not answer: this process keeps the pause; the next turn it asks for fails anyway.
    });
  }

  passed(): void {
    this.limitedMs = FIRST_LIMITED_MS;
    if (!this.failing) return;
    this.failing = false;
    this.backingOff = 0;
    this.store.answered(this.channel, this.gapMs).catch(() => {});
  }

  failed(): void {
    this.failing = true;
    this.store
      .failed(this.channel, this.capMs)
      .then((backoff) => {
        // Begun or doubled: the turns this process holds within it wait for new ones.
        if (backoff > this.backingOff) this.pauseHere(backoff);
        this.backingOff = backoff;
      })
      .catch(() => {});
  }

  /** Turns this process holds that come within `ms` from now wait for new ones. */
  private pauseHere(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.now() + ms);
  }

  backoffMs(): Promise<number> {
    return this.store.backoffMs(this.channel);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.ceil(ms)));
}

/** The gate of a provider's calls: the cluster's turns where the database keeps them (`turns`), else this process's. */
export function callGate(
  channel: string,
  maxPerSecond: number,
  pollMs: number,
  turns: TurnStore | null,
): CallGate {
  const cap = backoffCapMs(pollMs);
  return turns
    ? new SharedThrottle(maxPerSecond, channel, turns, cap)
    : new Throttle(maxPerSecond, Date.now, undefined, cap);
}
