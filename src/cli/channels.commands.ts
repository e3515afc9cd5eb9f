/** `channels check`: the live channels' credentials. */
import { notificationReachWarning } from '../outbound/public-url.ts';
import { liveChannels } from '../services.ts';
import { table, type CommandSpec } from './command.ts';

export const CHANNEL_COMMANDS: Record<string, CommandSpec> = {
  'channels check': {
    summary: "try each configured live channel's credentials (Setu login and API, Cashfree API)",
    options: {},
    async run({ config, out }) {
      const { setu, cashfree } = liveChannels(config);
      const channels = [setu, cashfree].filter((c) => c !== null);
      if (channels.length === 0) {
        out({ channels: [] }, 'no live channel is configured (see README, Going live)');
        return 1;
      }
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
      // Credentials that work are not enough: the providers must also reach this gateway.
      const unreachable = notificationReachWarning(config);
      const warnings = unreachable ? [unreachable] : [];
      out(
        { channels: results, warnings },
        table(
          ['CHANNEL', 'RESULT', 'DETAIL'],
          results.map((r) => [r.channel, r.ok ? 'ok' : 'FAILED', r.detail]),
        ) + warnings.map((w) => `\nwarning: ${w}`).join(''),
      );
      return results.every((r) => r.ok) ? 0 : 1;
    },
  },
};
