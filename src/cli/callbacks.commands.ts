/** `callbacks …`: the deliveries of signed callbacks, and sending one again. */
import { buildServices } from '../services.ts';
import { DELIVERY_STATUSES } from '../callbacks/callbacks.service.ts';
import type { DeliveryStatus } from '../db/schema.ts';
import {
  audit,
  istText,
  table,
  UsageError,
  withDatabase,
  withIstDates,
  type CommandSpec,
} from './command.ts';

export const CALLBACK_COMMANDS: Record<string, CommandSpec> = {
  'callbacks list': {
    summary: 'the latest 100 callback deliveries, with their attempts',
    options: { status: { type: 'string', value: 'STATUS', help: 'pending, delivered or failed' } },
    async run({ config, flags, out }) {
      const status = flags.status as string | undefined;
      if (status !== undefined && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
        throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      }
      const deliveries = await withDatabase(config, async (d) => {
        const callbacks = buildServices(config, d).callbacks;
        const list = await callbacks.list({ status: status as DeliveryStatus | undefined });
        return Promise.all(
          list.map(async (c) => ({
            ...withIstDates(c, ['next_attempt_at', 'created_at', 'delivered_at']),
            attempt_log: (await callbacks.attempts(c.delivery_id)).map((a) =>
              withIstDates(a, ['started_at']),
            ),
          })),
        );
      });
      out(
        { deliveries },
        deliveries.length
          ? table(
              ['DELIVERY_ID', 'PAYMENT_ID', 'STATUS', 'ATTEMPTS', 'URL'],
              deliveries.map((c) => [
                c.delivery_id,
                c.payment_id,
                c.status,
                `${c.attempts}/${c.max_attempts}`,
                c.url,
              ]),
            ) +
              // Each delivery's attempt log: time, HTTP status or error kind, latency.
              deliveries
                .filter((c) => c.attempt_log.length > 0)
                .map(
                  (c) =>
                    `\n\n${c.delivery_id}\n` +
                    table(
                      ['  #', 'STARTED', 'RESULT', 'LATENCY'],
                      c.attempt_log.map((a) => [
                        `  ${a.attempt}`,
                        istText(a.started_at),
                        String(a.http_status ?? a.error ?? ''),
                        `${a.latency_ms} ms`,
                      ]),
                    ),
                )
                .join('')
          : 'no callback deliveries',
      );
      return 0;
    },
  },
  'callbacks resend': {
    args: 'ID',
    summary: "send a final pay-in's, payout's or refund's callback again (a payment_id or refund_id)",
    options: {},
    positionals: 1,
    async run({ config, positionals, out, actor }) {
      const paymentId = positionals[0];
      if (!paymentId) throw new UsageError('callbacks resend needs an ID (a payment_id or refund_id)');
      const r = await withDatabase(config, async (d) => {
        const queued = await buildServices(config, d).callbacks.resend(paymentId);
        const txn = await d.db
          .selectFrom('transactions')
          .select('merchant_id')
          .where('payment_id', '=', paymentId)
          .executeTakeFirst();
        await audit(d, actor, 'resend', txn?.merchant_id ?? null, `resent the callback of ${paymentId}`);
        return queued;
      });
      out({ ...r }, `queued ${r.delivery_id} for ${r.refund_id ?? r.payment_id}`);
      return 0;
    },
  },
};
