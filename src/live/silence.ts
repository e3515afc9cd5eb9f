/**
 * When a channel's notifications stop (CONTRACT §10, "Intake that cannot be starved"): a provider
 * that disabled the webhook URL, or signs with another secret, leaves pay-ins and payouts to be
 * found by polling. Per channel: how long since its last verified notification (every verified
 * notification is stored), and whether it is silent: pay-ins or payouts of it are open, and none
 * has arrived for NOTIFICATION_SILENCE_S since the later of its last notification and the oldest of
 * them (a quiet channel with nothing open is not silent, and neither is one whose first open
 * transaction is younger than the setting). A silent channel opens one `channel_silent` exception
 * while one is open, whichever process looks.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { recordAlarm } from '../exceptions/exceptions.repository.ts';
import { oldestAwaitingNotice } from '../transactions/transaction-claims.repository.ts';
import { lastNotifications } from './notifications.repository.ts';

/** How often a process looks, at most (and twice per NOTIFICATION_SILENCE_S when that is shorter). */
const CHECK_EVERY_MS = 60_000;

/** One channel's silence. */
export interface Silence {
  channel: string;
  /** Its last verified notification (epoch ms), or null when none ever came. */
  lastAt: number | null;
  /** Seconds since then (since its oldest open pay-in or payout when none came), or null when neither is known. */
  silenceS: number | null;
  /** Whether it is silent while transactions wait on it (an exception opens). */
  silent: boolean;
}

export class ChannelSilence {
  private checkedAt = -Infinity;

  /** `channels`: the configured live channels; `silenceMs`: NOTIFICATION_SILENCE_S in ms. */
  constructor(
    private readonly db: Kysely<Tables>,
    readonly channels: readonly string[],
    readonly silenceMs: number,
    private readonly now: () => number,
  ) {}

  /** Each channel's silence now. */
  async read(): Promise<Silence[]> {
    const at = this.now();
    const last = await lastNotifications(this.db, this.channels);
    return Promise.all(
      last.map(async ({ provider, at: lastAt }) => {
        const awaiting = await oldestAwaitingNotice(this.db, provider);
        const since = lastAt ?? awaiting;
        const quietFrom = awaiting === null ? null : Math.max(lastAt ?? awaiting, awaiting);
        return {
          channel: provider,
          lastAt,
          silenceS: since === null ? null : Math.max(0, Math.floor((at - since) / 1000)),
          silent: quietFrom !== null && at - quietFrom >= this.silenceMs,
        };
      }),
    );
  }

  /** Opens a `channel_silent` exception for each silent channel that has none open; answers how many opened. */
  async check(): Promise<number> {
    this.checkedAt = this.now();
    let opened = 0;
    for (const s of await this.read()) {
      if (!s.silent) continue;
      const id = await recordAlarm(
        this.db,
        {
          kind: 'channel_silent',
          provider: s.channel,
          detail: `no verified notification from ${s.channel} for ${s.silenceS ?? 0} s while its pay-ins or payouts are open (NOTIFICATION_SILENCE_S ${this.silenceMs / 1000}): check the webhook URL and secret at the provider`,
        },
        this.now(),
      );
      if (id !== null) opened++;
    }
    return opened;
  }

  /** `check`, when a process has not looked for a while (the worker asks after each round). */
  async checkWhenDue(): Promise<void> {
    if (this.channels.length === 0) return;
    if (this.now() - this.checkedAt < Math.min(CHECK_EVERY_MS, this.silenceMs / 2)) return;
    await this.check();
  }
}
