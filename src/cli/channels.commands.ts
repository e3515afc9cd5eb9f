/** `channels check`: the live channels' credentials, and how long each has sent no notification. */
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { ChannelSilence, type Silence } from '../live/silence.ts';
import { notificationReachWarning } from '../outbound/public-url.ts';
import { liveChannels } from '../services.ts';
import { istJson, table, withDatabase, type CommandSpec } from './command.ts';

/**
 * Each channel's silence (`ChannelSilence`), read from the database, or null when it cannot
 * be read (the credentials are still checked, and a warning says so).
 */
async function silences(config: Config, channels: string[]): Promise<Map<string, Silence> | null> {
  try {
    const rows = await withDatabase(config, (database) =>
      new ChannelSilence(database.db, channels, config.notificationSilenceS * 1000, Date.now).read(),
    );
    return new Map(rows.map((r) => [r.channel, r]));
  } catch {
    return null;
  }
}

export const CHANNEL_COMMANDS: Record<string, CommandSpec> = {
  'channels check': {
    summary: "try each configured live channel's credentials (Setu login and API, Cashfree API)",
    options: {},
    async run({ config, out }) {
      const { setu, cashfree } = liveChannels(config);
      const channels = [setu, cashfree].filter((c) => c !== null);
      if (channels.length === 0)
        throw new AppError(
          'LIVE_CHANNEL_NOT_CONFIGURED',
          'no live channel is configured: there is nothing to check (see docs/going-live.md)',
        );
      const results = await Promise.all(
        channels.map(async (c) => {
          try {
            return { channel: c.name, ok: true, detail: await c.check() };
          } catch (err) {
            return { channel: c.name, ok: false, detail: (err as Error).message };
          }
        }),
      );
      for (const c of channels) await c.http.close();
      const silence = await silences(
        config,
        channels.map((c) => c.name),
      );
      const checked = results.map((r) => {
        const s = silence?.get(r.channel);
        const last = s?.lastAt ?? null;
        return {
          ...r,
          last_notification_at: istJson(last),
          silence_s: s?.silenceS ?? null,
          silent: s?.silent ?? false,
        };
      });
      // Credentials that work are not enough: the providers must also reach this gateway.
      const unreachable = notificationReachWarning(config);
      const warnings = [
        ...(unreachable ? [unreachable] : []),
        ...(silence ? [] : ["the database could not be read: the channels' silence is not known"]),
        ...checked
          .filter((c) => c.silent)
          .map(
            (c) =>
              `${c.channel} has sent no verified notification for ${c.silence_s} s while its transactions wait (NOTIFICATION_SILENCE_S ${config.notificationSilenceS})`,
          ),
      ];
      out(
        { channels: checked, warnings },
        table(
          ['CHANNEL', 'RESULT', 'SILENCE', 'DETAIL'],
          checked.map((r) => [
            r.channel,
            r.ok ? 'ok' : 'FAILED',
            r.silence_s === null ? '-' : `${r.silence_s} s${r.silent ? ' (silent)' : ''}`,
            r.detail,
          ]),
        ) + warnings.map((w) => `\nwarning: ${w}`).join(''),
      );
      return results.every((r) => r.ok) ? 0 : 1;
    },
  },
};
