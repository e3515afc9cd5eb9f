/** `channels exceptions` and `exceptions resolve`: what needs an operator, and resolving it (CONTRACT §13). */
import { AppError } from '../errors.ts';
import { ACTIONS, NOTE_MAX, type ResolveAction } from '../exceptions/exceptions.service.ts';
import {
  exceptionAmountText,
  listExceptions,
  type ExceptionRow,
} from '../exceptions/exceptions.repository.ts';
import { formatAmount, toRupees } from '../money.ts';
import { buildServices } from '../services.ts';
import {
  CommandRefusal,
  istJson,
  istText,
  required,
  table,
  UsageError,
  withDatabase,
  type CommandSpec,
} from './command.ts';

/** An exception as the CLI prints it in JSON. */
export function exceptionJson(e: ExceptionRow) {
  return {
    id: e.id,
    kind: e.kind,
    channel: e.provider,
    payment_id: e.payment_id,
    merchant_id: e.merchant_id,
    reference: e.reference,
    amount: e.amount === null ? null : toRupees(e.amount),
    // Set when the provider sent an amount that could not be read (amount is then null).
    amount_unreadable: e.amount_text,
    currency: e.currency,
    holds: e.holds,
    outstanding: toRupees(e.outstanding),
    refund_id: e.refund_id,
    detail: e.detail,
    status: e.resolved_at === null ? 'open' : 'resolved',
    created_at: istJson(e.created_at),
    resolved_at: istJson(e.resolved_at),
    resolved_by: e.resolved_by,
    resolution: e.resolution,
    note: e.note,
  };
}

export const EXCEPTION_COMMANDS: Record<string, CommandSpec> = {
  'channels exceptions': {
    summary:
      'the latest 100 exceptions, open ones first: late or unmatched payments, mismatches, reversals, stuck, debts',
    options: { open: { type: 'boolean', help: 'only those not resolved yet' } },
    async run({ config, flags, out }) {
      const exceptions = await withDatabase(config, (d) => listExceptions(d.db, 100, flags.open === true));
      out(
        { exceptions: exceptions.map(exceptionJson) },
        exceptions.length
          ? table(
              ['ID', 'STATUS', 'CREATED', 'KIND', 'CHANNEL', 'PAYMENT_ID', 'AMOUNT', 'HOLDS', 'DETAIL'],
              exceptions.map((e) => [
                String(e.id),
                e.resolved_at === null ? (e.refund_id ? 'refunding' : 'open') : `resolved:${e.resolution}`,
                istText(e.created_at),
                e.kind,
                e.provider,
                e.payment_id ?? '-',
                exceptionAmountText(e, formatAmount),
                e.holds ? `${e.holds} ${formatAmount(e.outstanding)}` : '-',
                e.detail,
              ]),
            )
          : flags.open === true
            ? 'no open exceptions'
            : 'no channel exceptions',
      );
      return 0;
    },
  },
  'exceptions resolve': {
    args: 'ID',
    summary:
      'resolve an exception: refund or credit money in suspense, debit a debt, dismiss with a note, or record a dispute won or lost',
    options: {
      action: { type: 'string', value: ACTIONS.join('|'), help: 'what to do', required: true },
      merchant: {
        type: 'string',
        value: 'ID',
        help: 'credit: the merchant to credit (default: the exception’s); refund: whose records keep the refund of money paid to no merchant',
      },
      note: { type: 'string', value: 'TEXT', help: 'why (required to dismiss), up to 500 characters' },
    },
    positionals: 1,
    async run({ config, flags, positionals, out, actor }) {
      const text = positionals[0] ?? '';
      const id = /^[1-9]\d{0,15}$/.test(text) ? Number(text) : NaN;
      if (!Number.isSafeInteger(id))
        throw new UsageError(`exceptions resolve needs an exception ID, not "${text}"`);
      const action = required(flags, 'action');
      if (!(ACTIONS as readonly string[]).includes(action))
        throw new UsageError(`--action must be one of ${ACTIONS.join(', ')}`);
      const note = (flags.note as string | undefined)?.trim() || null;
      if (note !== null && (note.length > NOTE_MAX || note.includes('\u0000')))
        throw new UsageError(`--note must be at most ${NOTE_MAX} characters`);
      if (action === 'dismiss' && note === null)
        throw new UsageError('a note is required to dismiss: --note TEXT');
      const merchantId = (flags.merchant as string | undefined) ?? null;
      const resolved = await withDatabase(config, async (d) => {
        const services = buildServices(config, d);
        if (!(await services.exceptions.get(id)))
          throw new CommandRefusal('NOT_FOUND', `there is no exception ${id}`);
        if (merchantId !== null) await services.merchants.get(merchantId);
        return services.exceptions.resolve(id, {
          action: action as ResolveAction,
          merchantId,
          note,
          actor,
        });
      }).catch((err: unknown) => {
        // The input is checked above: what the service still refuses is the exception's state (the
        // action does not fit what it holds, or its merchant must be named).
        if (err instanceof AppError && err.errorCode === 'BAD_REQUEST')
          throw new CommandRefusal('INVALID_STATE', err.message);
        throw err;
      });
      out(
        {
          exception: exceptionJson(resolved.exception),
          changed: resolved.changed,
          message: resolved.message,
        },
        `exception ${id}: ${resolved.message}`,
      );
      return 0;
    },
  },
};
