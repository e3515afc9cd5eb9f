/** SQL for channel exceptions: what a channel reported that no status change covers. */
import { sql, type Kysely } from 'kysely';
import type { ChannelExceptionTable, Tables } from '../db/schema.ts';

export type ExceptionKind =
  | 'amount_mismatch'
  | 'payment_after_final'
  | 'unknown_reference'
  | 'reversal'
  | 'stuck'
  /** Reconciliation found the provider's record differs from Paygate's (CONTRACT §13). */
  | 'reconcile_mismatch'
  /** A payout paid after Paygate recorded it FAILED: the merchant owes it back (`external:receivable`). */
  | 'payout_after_failed'
  | 'reversal_after_failed'
  /** The channel reports FAILED for a payout recorded SUCCESS. */
  | 'status_mismatch'
  /** The provider refused Paygate's own account (credentials, IP allow-list, 2FA): payouts wait. */
  | 'channel_account'
  | 'low_balance';

export interface NewException {
  kind: ExceptionKind;
  provider: string;
  paymentId: string | null;
  /** What makes it one exception (the provider's payment or transfer id, or the payment_id). */
  reference: string;
  amount: number | null;
  /** The provider's text of an amount that could not be read (`amount` is then null). */
  amountText?: string | null;
  detail: string;
}

/** Records an exception once: the same kind, provider and reference again changes nothing. */
export async function recordException(db: Kysely<Tables>, e: NewException, at: number): Promise<boolean> {
  const result = await db
    .insertInto('channel_exceptions')
    .values({
      kind: e.kind,
      provider: e.provider,
      payment_id: e.paymentId,
      reference: e.reference,
      amount: e.amount,
      amount_text: e.amountText ?? null,
      detail: e.detail,
      created_at: at,
    })
    .onConflict((oc) => oc.columns(['kind', 'provider', 'reference']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export type ExceptionRow = Omit<ChannelExceptionTable, 'id'> & { id: number };

/** The latest exceptions, newest first. */
export async function listExceptions(db: Kysely<Tables>, limit: number): Promise<ExceptionRow[]> {
  const rows = await db
    .selectFrom('channel_exceptions')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), amount: r.amount === null ? null : Number(r.amount) }));
}

/** How many exceptions of each kind there are. */
export async function countExceptions(db: Kysely<Tables>): Promise<{ kind: string; count: number }[]> {
  const rows = await db
    .selectFrom('channel_exceptions')
    .select(['kind', sql<number>`count(*)`.as('count')])
    .groupBy('kind')
    .execute();
  return rows.map((r) => ({ kind: r.kind, count: Number(r.count) }));
}

/** An exception's amount for people: rupees, "unreadable (the provider's text)", or "-" when none was reported. */
export function exceptionAmountText(
  e: Pick<ExceptionRow, 'amount' | 'amount_text'>,
  format: (paise: number) => string,
): string {
  if (e.amount !== null) return format(e.amount);
  return e.amount_text === null ? '-' : `unreadable (${e.amount_text})`;
}
