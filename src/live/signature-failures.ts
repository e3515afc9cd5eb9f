/**
 * Notifications whose signature failed, counted per provider endpoint apart from failed API keys
 * (CONTRACT §10, "Intake that cannot be starved"): they are refused with 401 and never limit
 * anyone, since a limiter in front of the endpoint would refuse the provider's own notifications
 * as well (behind a load balancer every post comes from one address). More than
 * `SIGNATURE_FAILURES_PER_MINUTE` within any minute in this process open a `signature_failures`
 * exception, one while open: forged posts, or a webhook secret that is not the provider's.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { recordAlarm } from '../exceptions/exceptions.repository.ts';

export const SIGNATURE_FAILURES_PER_MINUTE = 60;
const MINUTE_MS = 60_000;

interface Endpoint {
  /** When the last failures came, oldest first (at most one more than the limit). */
  times: number[];
  /** No alarm is asked for before then (one was opened, or found open, not long ago). */
  quietUntil: number;
}

export class SignatureFailures {
  private readonly endpoints = new Map<string, Endpoint>();

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly now: () => number,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /**
   * Counts one failure at `provider`'s endpoint from `address`. The alarm is written after the
   * answer, at most once a minute per endpoint, so that a flood of forgeries costs no more than that.
   */
  failed(provider: string, address: string): Promise<void> {
    const at = this.now();
    let e = this.endpoints.get(provider);
    if (!e) this.endpoints.set(provider, (e = { times: [], quietUntil: 0 }));
    e.times.push(at);
    if (e.times.length > SIGNATURE_FAILURES_PER_MINUTE + 1) e.times.shift();
    const over = e.times.length > SIGNATURE_FAILURES_PER_MINUTE && at - e.times[0]! < MINUTE_MS;
    if (!over || at < e.quietUntil) return Promise.resolve();
    e.quietUntil = at + MINUTE_MS;
    const endpoint = e;
    return recordAlarm(
      this.db,
      {
        kind: 'signature_failures',
        provider,
        detail: `more than ${SIGNATURE_FAILURES_PER_MINUTE} notifications with a bad signature within a minute at /channels/${provider}/notifications (the last from ${address}): forged posts, or a webhook secret that is not the provider's`,
      },
      at,
    ).then(
      () => undefined,
      (err: unknown) => {
        endpoint.quietUntil = 0;
        this.onError(err);
      },
    );
  }
}
