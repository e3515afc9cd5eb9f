/** `refund …`: refunding a pay-in from the command line, through the API's path (contract §12). */
import { buildServices } from '../services.ts';
import { formatAmount, parseAmountText } from '../money.ts';
import { toRefundStatus } from '../refunds/refund-status.ts';
import type { RefundResponse } from '../refunds/refunds.schemas.ts';
import { audit, required, UsageError, withDatabase, type CommandSpec } from './command.ts';

/** A refund number: 1 to 36 printable characters, not only spaces (as the API checks it). */
const REFUND_NO = /^(?=.*\S)[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]{1,36}$/u;

export const REFUND_COMMANDS: Record<string, CommandSpec> = {
  'refund create': {
    summary: 'refund all or part of a SUCCESS pay-in, held from its merchant’s available balance',
    options: {
      payment: { type: 'string', value: 'ID', help: 'the pay-in to refund', required: true },
      amount: { type: 'string', value: 'AMOUNT', help: 'rupees, at most 2 decimals', required: true },
      'refund-no': {
        type: 'string',
        value: 'NO',
        help: 'the merchant_refund_no, 1 to 36 characters (one is made when none is given)',
      },
      reason: { type: 'string', value: 'TEXT', help: 'up to 100 characters' },
    },
    async run({ config, flags, out, actor }) {
      const paymentId = required(flags, 'payment');
      const amount = parseAmountText(required(flags, 'amount'));
      if (amount === null || amount <= 0)
        throw new UsageError('--amount must be a positive amount with at most 2 decimals, such as 100.00');
      const refundNo = flags['refund-no'] as string | undefined;
      if (refundNo !== undefined && !REFUND_NO.test(refundNo))
        throw new UsageError('--refund-no must be 1 to 36 printable characters');
      const reason = flags.reason as string | undefined;
      if (reason !== undefined && (reason.length > 100 || reason.includes('\u0000')))
        throw new UsageError('--reason must be at most 100 characters');
      const created = await withDatabase(config, async (d) => {
        const answer = await buildServices(config, d).refunds.createOnBehalf(undefined, {
          paymentId,
          amount,
          refundNo,
          reason,
        });
        const body: RefundResponse =
          typeof answer.body === 'string' ? (JSON.parse(answer.body) as RefundResponse) : answer.body;
        if (!answer.replayed) {
          const payin = await d.db
            .selectFrom('transactions')
            .select('merchant_id')
            .where('payment_id', '=', paymentId)
            .executeTakeFirst();
          await audit(
            d,
            actor,
            'refund',
            payin?.merchant_id ?? null,
            `refund ${body.refund_id} of ${formatAmount(amount)} ${body.currency} for ${paymentId}`,
          );
        }
        return { ...body, replayed: answer.replayed };
      });
      out(
        { ...created },
        `${created.replayed ? 'already created' : 'created'} refund ${created.refund_id} (${created.merchant_refund_no}) of ${created.amount} ${created.currency} for ${created.payment_id}: ${created.status}`,
      );
      return 0;
    },
  },
  'refund show': {
    args: 'REFUND_ID',
    summary: "a refund's status, its channel's refund id and, when refused, the reason",
    options: {},
    positionals: 1,
    async run({ config, positionals, out }) {
      const refundId = positionals[0];
      if (!refundId) throw new UsageError('refund show needs a REFUND_ID');
      const row = await withDatabase(config, async (d) =>
        buildServices(config, d).refunds.find(undefined, refundId),
      );
      const refund = {
        ...toRefundStatus(row),
        channel: row.channel,
        channel_txn_id: row.channel_txn_id,
        failure_reason: row.failure_reason,
      };
      const provider = refund.channel_txn_id ? `; ${refund.channel} refund ${refund.channel_txn_id}` : '';
      const refused = refund.failure_reason ? ` (${refund.failure_reason})` : '';
      out(
        refund,
        `refund ${refund.refund_id} (${refund.merchant_refund_no}) of ${refund.money.amount} ${refund.money.currency} for ${refund.payment_id}: ${refund.status}${refused}${refund.utr ? `, utr ${refund.utr}` : ''}${provider}`,
      );
      return 0;
    },
  },
};
