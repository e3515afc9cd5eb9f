/** `channels …`: the live channels' credentials and what they reported that did not fit. */
import { notificationReachWarning } from '../live/public-url.ts';
import { liveChannels } from '../services.ts';
import { formatAmount, toRupees } from '../money.ts';
import { exceptionAmountText, listExceptions } from '../live/exceptions.repository.ts';
import { table, withDatabase, type CommandSpec } from './command.ts';

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
  'channels exceptions': {
    summary:
      'the latest 100 channel exceptions: amount mismatches, late payments, unknown references, reversals, stuck',
    options: {},
    async run({ config, out }) {
      const exceptions = await withDatabase(config, (d) => listExceptions(d.db, 100));
      out(
        {
          exceptions: exceptions.map((e) => ({
            id: e.id,
            kind: e.kind,
            channel: e.provider,
            payment_id: e.payment_id,
            reference: e.reference,
            amount: e.amount === null ? null : toRupees(e.amount),
            // Set when the provider sent an amount that could not be read (amount is then null).
            amount_unreadable: e.amount_text,
            detail: e.detail,
            created_at: new Date(e.created_at).toISOString(),
          })),
        },
        exceptions.length
          ? table(
              ['CREATED_AT', 'KIND', 'CHANNEL', 'PAYMENT_ID', 'AMOUNT', 'DETAIL'],
              exceptions.map((e) => [
                new Date(e.created_at).toISOString(),
                e.kind,
                e.provider,
                e.payment_id ?? '-',
                exceptionAmountText(e, formatAmount),
                e.detail,
              ]),
            )
          : 'no channel exceptions',
      );
      return 0;
    },
  },
};
