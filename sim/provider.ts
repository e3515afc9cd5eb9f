/**
 * What the simulated providers share: the world they act in (faults, the notifications they send,
 * their webhook secret, the clock, Paygate's poll interval), the `Channel` port's fixed answers, and
 * how long a change may be missing from a lagging read.
 */
import { IN_TRANSIT_MS } from '../src/channels/channel-http.ts';
import type { Faults } from './faults.ts';
import type { NoticeQueue } from './notices.ts';

/** How long a change may be missing from a lagging read. */
const LAG_MS = 30_000;

export abstract class SimProvider {
  abstract readonly name: string;
  readonly live = true;
  readonly opensRemotely = true;
  readonly inTransitMs = IN_TRANSIT_MS;
  /** Numbers the provider's own ids and references, in the order they are made. */
  protected serial = 0;

  constructor(
    protected readonly faults: Faults,
    protected readonly notices: NoticeQueue,
    protected readonly secret: string,
    protected readonly now: () => number,
    protected readonly pollMs: number,
  ) {}

  /** Whether a change made at `at` may still be missing from a lagging read. */
  protected lagging(at: number): boolean {
    return this.now() - at < LAG_MS;
  }
}
