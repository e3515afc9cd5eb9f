/** `reconcile`: compares a day of live transactions with what Setu and Cashfree hold (CONTRACT §13). */
import { AppError } from '../errors.ts';
import { buildServices } from '../services.ts';
import { badDate, istYesterday } from '../ist.ts';
import {
  RECONCILE_CHANNELS,
  ReconcileService,
  type ReconcileChannel,
} from '../reconcile/reconcile.service.ts';
import { table, UsageError, withDatabase, type CommandSpec } from './command.ts';

export const RECONCILE_COMMANDS: Record<string, CommandSpec> = {
  reconcile: {
    summary:
      "compare an IST day's live transactions (and those still open) with the providers; each difference opens an exception",
    options: {
      date: { type: 'string', value: 'YYYY-MM-DD', help: 'the IST day (default yesterday)' },
      channel: { type: 'string', value: 'NAME', help: 'setu or cashfree (default every configured channel)' },
    },
    async run({ config, flags, out }) {
      // Everything is checked before the database or a provider is touched.
      const now = Date.now();
      const date = typeof flags.date === 'string' ? flags.date : istYesterday(now);
      const problem = badDate(date, now);
      if (problem) throw new UsageError(problem);
      const on = { setu: config.setu, cashfree: config.cashfree };
      const asked = flags.channel;
      let channels: ReconcileChannel[];
      if (typeof asked === 'string') {
        if (!(RECONCILE_CHANNELS as readonly string[]).includes(asked))
          throw new UsageError(`--channel must be setu or cashfree, got "${asked}"`);
        if (!on[asked as ReconcileChannel])
          throw new AppError(
            'LIVE_CHANNEL_NOT_CONFIGURED',
            `--channel ${asked}: ${asked} is not configured (its settings are not set)`,
          );
        channels = [asked as ReconcileChannel];
      } else {
        channels = RECONCILE_CHANNELS.filter((c) => on[c] !== null);
        if (channels.length === 0)
          throw new AppError(
            'LIVE_CHANNEL_NOT_CONFIGURED',
            'no live channel is configured: there is nothing to reconcile',
          );
      }
      const runs = await withDatabase(config, async (d) => {
        // The services' own channels and outcomes: what moved money is booked as the gateway books it.
        const services = buildServices(config, d);
        const { setu, cashfree } = services;
        try {
          const service = new ReconcileService(d.db, { setu, cashfree }, services.outcomes, {
            lookbackDays: config.reconcileLookbackDays,
          });
          const done = [];
          for (const c of channels) done.push(await service.run(date, c, 'cli'));
          return done;
        } finally {
          await Promise.all([setu?.http.close(), cashfree?.http.close()]);
        }
      });
      out(
        { runs },
        table(
          ['DATE', 'CHANNEL', 'CHECKED', 'MATCHED', 'MISMATCHED', 'UNREADABLE'],
          runs.map((r) => [
            r.date,
            r.channel,
            String(r.checked),
            String(r.matched),
            String(r.mismatched),
            String(r.unreadable),
          ]),
        ),
      );
      return 0;
    },
  },
};
