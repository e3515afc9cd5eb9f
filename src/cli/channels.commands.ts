/** `channels …`: the live channels' credentials and what they reported that did not fit. */
import { liveChannels } from '../services.ts';
import { formatAmount, toRupees } from '../money.ts';
import { listExceptions } from '../live/exceptions.repository.ts';
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
      out(
        { channels: results },
        table(
          ['CHANNEL', 'RESULT', 'DETAIL'],
          results.map((r) => [r.channel, r.ok ? 'ok' : 'FAILED', r.detail]),
        ),
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
                e.amount === null ? '-' : formatAmount(e.amount),
                e.detail,
              ]),
            )
          : 'no channel exceptions',
      );
      return 0;
    },
  },
};
