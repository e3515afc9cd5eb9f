/** SQL for exceptions: what a channel reported that no status change covers, and how each was resolved. */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { ChannelExceptionTable, ExceptionHolds, Tables } from '../db/schema.ts';

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
  /** A refund paid after Paygate recorded it FAILED: the merchant owes it back (`external:receivable`). */
  | 'refund_after_failed'
  /** The channel reports FAILED for a payout or refund recorded SUCCESS (or SUCCESS for a refund of suspense recorded FAILED). */
  | 'status_mismatch'
  /** A refund from suspense recorded SUCCESS that the channel reports FAILED: its money is back in suspense. */
  | 'refund_returned'
  /** The provider refused Paygate's own account (credentials, IP allow-list, 2FA): payouts wait. */
  | 'channel_account'
  | 'low_balance'
  /** A customer disputes a pay-in (the `disputes` row beside it); a lost one may leave a debt. */
  | 'dispute'
  /** More than 60 notifications with a bad signature in a minute at one provider's endpoint (one while open). */
  | 'signature_failures'
  /** Live transactions open and no verified notification from their channel for NOTIFICATION_SILENCE_S (one while open). */
  | 'channel_silent'
  /** A verified notification that could not be applied after its tries: stored, kept for the operator. */
  | 'notification_failed';

/** The kinds that are one per provider while open: a new one opens only after the last was resolved. */
export type AlarmKind = 'signature_failures' | 'channel_silent';

/**
 * The kinds that are one while open (CONTRACT §10): however often their cause is seen, one exception
 * of a kind, provider and reference is open at a time, and once it is resolved the next occurrence
 * opens a new one. Resolving frees the key: the reference of a resolved one gains `#id`.
 */
export const ONE_WHILE_OPEN: ReadonlySet<string> = new Set([
  'channel_account',
  'low_balance',
  'channel_silent',
  'signature_failures',
]);

export interface NewException {
  kind: ExceptionKind;
  provider: string;
  paymentId: string | null;
  /** The merchant it concerns, when one is known. */
  merchantId?: string | null;
  currency?: string;
  /** What makes it one exception (the provider's payment or transfer id, or the payment_id). */
  reference: string;
  amount: number | null;
  /** The provider's text of an amount that could not be read (`amount` is then null). */
  amountText?: string | null;
  detail: string;
  /** The money it holds from the start (`amount` of it), if any. */
  holds?: ExceptionHolds | null;
}

/**
 * Records an exception once: the same kind, provider and reference again changes nothing. The id of
 * the exception when this call opened it, else null.
 */
export async function recordException(
  db: Kysely<Tables>,
  e: NewException,
  at: number,
): Promise<number | null> {
  const holds = e.holds && e.amount !== null && e.amount > 0 ? e.holds : null;
  const row = await db
    .insertInto('channel_exceptions')
    .values({
      kind: e.kind,
      provider: e.provider,
      payment_id: e.paymentId,
      merchant_id: e.merchantId ?? null,
      currency: e.currency ?? 'INR',
      reference: e.reference,
      amount: e.amount,
      amount_text: e.amountText ?? null,
      detail: e.detail,
      created_at: at,
      holds,
      outstanding: holds ? e.amount! : 0,
      refund_id: null,
      resolved_at: null,
      resolved_by: null,
      resolution: null,
      note: null,
    })
    .onConflict((oc) => oc.columns(['kind', 'provider', 'reference']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

/**
 * Opens an alarm of `kind` for `provider` unless one is open (the unique index over open alarms
 * decides, whichever process asks): its id when this call opened it, else null. Each is its own
 * exception (its reference is when it opened), so one resolved does not keep the next from opening.
 */
export async function recordAlarm(
  db: Kysely<Tables>,
  alarm: { kind: AlarmKind; provider: string; detail: string },
  at: number,
): Promise<number | null> {
  const row = await db
    .insertInto('channel_exceptions')
    .values({
      kind: alarm.kind,
      provider: alarm.provider,
      payment_id: null,
      merchant_id: null,
      reference: `${alarm.kind}@${new Date(at).toISOString()}`,
      amount: null,
      amount_text: null,
      detail: alarm.detail.slice(0, 1000),
      created_at: at,
      holds: null,
      refund_id: null,
      resolved_at: null,
      resolved_by: null,
      resolution: null,
      note: null,
    })
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

/** Whether an alarm of `kind` is open for `provider`. */
export async function alarmOpen(db: Kysely<Tables>, kind: AlarmKind, provider: string): Promise<boolean> {
  const row = await db
    .selectFrom('channel_exceptions')
    .select('id')
    .where('kind', '=', kind)
    .where('provider', '=', provider)
    .where('resolved_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export type ExceptionRow = Omit<Selectable<ChannelExceptionTable>, 'id'> & { id: number };

function toRow(r: Selectable<ChannelExceptionTable>): ExceptionRow {
  const freed = `#${r.id}`;
  return {
    ...r,
    // A resolved one-while-open exception shows the reference it had while open.
    reference: r.reference.endsWith(freed) ? r.reference.slice(0, -freed.length) : r.reference,
    id: Number(r.id),
    amount: r.amount === null ? null : Number(r.amount),
    outstanding: Number(r.outstanding),
    created_at: Number(r.created_at),
    resolved_at: r.resolved_at === null ? null : Number(r.resolved_at),
  };
}

/** The latest exceptions: open ones first, newest first within each part; only open ones with `openOnly`. */
export async function listExceptions(
  db: Kysely<Tables>,
  limit: number,
  openOnly = false,
): Promise<ExceptionRow[]> {
  const open = await db
    .selectFrom('channel_exceptions')
    .selectAll()
    .where('resolved_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const resolved =
    openOnly || open.length >= limit
      ? []
      : await db
          .selectFrom('channel_exceptions')
          .selectAll()
          .where('resolved_at', 'is not', null)
          .orderBy('id', 'desc')
          .limit(limit - open.length)
          .execute();
  return [...open, ...resolved].map(toRow);
}

export async function findException(db: Kysely<Tables>, id: number): Promise<ExceptionRow | undefined> {
  const row = await db.selectFrom('channel_exceptions').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/** The exception of this kind, provider and reference (what makes it one), locked as `lockException` locks it. */
export async function lockExceptionOf(
  tx: Kysely<Tables>,
  key: Pick<NewException, 'kind' | 'provider' | 'reference'>,
): Promise<ExceptionRow | undefined> {
  const row = await tx
    .updateTable('channel_exceptions')
    .set((eb) => ({ kind: eb.ref('kind') }))
    .where('kind', '=', key.kind)
    .where('provider', '=', key.provider)
    .where('reference', '=', key.reference)
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/**
 * The exception, locked for an update within the caller's transaction: an update that changes
 * nothing, so that the first statement writes (SQLite's write lock is taken at once, never upgraded
 * from a read) and PostgreSQL holds the row until the transaction ends.
 */
export async function lockException(tx: Kysely<Tables>, id: number): Promise<ExceptionRow | undefined> {
  const row = await tx
    .updateTable('channel_exceptions')
    .set((eb) => ({ kind: eb.ref('kind') }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ? toRow(row) : undefined;
}

/**
 * Changes an exception's money and resolution fields. Resolving one of a kind that is one while
 * open frees its key, so that the next occurrence of its cause opens a new one.
 */
export async function updateException(
  tx: Kysely<Tables>,
  id: number,
  set: Partial<
    Pick<
      ExceptionRow,
      | 'outstanding'
      | 'refund_id'
      | 'resolved_at'
      | 'resolved_by'
      | 'resolution'
      | 'note'
      | 'merchant_id'
      | 'holds'
    >
  >,
): Promise<void> {
  const freed = set.resolved_at != null && {
    reference: sql<string>`case when kind in (${sql.join([...ONE_WHILE_OPEN])}) and resolved_at is null
        then reference || ${`#${id}`} else reference end`,
  };
  await tx
    .updateTable('channel_exceptions')
    .set({ ...set, ...freed })
    .where('id', '=', id)
    .execute();
}

/**
 * The open exception of a kind that is one while open, for this provider and reference: the one
 * open now, locked for the caller's transaction, or one opened now. Answers its id. An exception
 * resolved meanwhile (its key freed) is not the open one: a new one opens.
 */
export async function openException(db: Kysely<Tables>, e: NewException, at: number): Promise<number> {
  if (!ONE_WHILE_OPEN.has(e.kind)) throw new Error(`${e.kind} exceptions are not one while open`);
  // Each turn finds it open, or opens it; a turn fails only when another resolved it in between.
  for (let turn = 1; ; turn++) {
    const opened = await recordException(db, e, at);
    if (opened !== null) return opened;
    const open = await db
      .updateTable('channel_exceptions')
      .set((eb) => ({ kind: eb.ref('kind') }))
      .where('kind', '=', e.kind)
      .where('provider', '=', e.provider)
      .where('reference', '=', e.reference)
      .where('resolved_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (open) return Number(open.id);
    if (turn >= 5) throw new Error(`no open ${e.kind} exception could be found or opened`);
  }
}

/** The exceptions whose refunds from suspense these are (one per refund). */
export async function exceptionsOfRefunds(tx: Kysely<Tables>, refundIds: string[]): Promise<ExceptionRow[]> {
  if (refundIds.length === 0) return [];
  const rows = await tx
    .selectFrom('channel_exceptions')
    .selectAll()
    .where('refund_id', 'in', refundIds)
    .execute();
  return rows.map(toRow);
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

/** How many open exceptions of each kind there are. */
export async function countOpenExceptions(db: Kysely<Tables>): Promise<{ kind: string; count: number }[]> {
  const rows = await db
    .selectFrom('channel_exceptions')
    .select(['kind', sql<number>`count(*)`.as('count')])
    .where('resolved_at', 'is', null)
    .groupBy('kind')
    .execute();
  return rows.map((r) => ({ kind: r.kind, count: Number(r.count) }));
}

/** What the open exceptions hold, per kind of money and currency, in paise (as text: exact past 2^53). */
export async function outstandingSums(
  db: Kysely<Tables>,
): Promise<{ holds: string; currency: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('channel_exceptions')
    .select(['holds', 'currency', sql<string>`cast(sum(outstanding) as text)`.as('total')])
    .where('holds', 'is not', null)
    .where('resolved_at', 'is', null)
    .groupBy(['holds', 'currency'])
    .execute();
  return rows.map((r) => ({ holds: r.holds!, currency: r.currency, total: BigInt(r.total) }));
}

/**
 * What the exceptions that held money ever took in (open or resolved), per kind of money and
 * currency. A dispute's debt is not its amount: the disputes check it (`src/disputes/`).
 */
export async function heldSums(
  db: Kysely<Tables>,
): Promise<{ holds: string; currency: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('channel_exceptions')
    .select(['holds', 'currency', sql<string>`cast(sum(amount) as text)`.as('total')])
    .where('holds', 'is not', null)
    .where('kind', '<>', 'dispute')
    .groupBy(['holds', 'currency'])
    .execute();
  return rows.map((r) => ({ holds: r.holds!, currency: r.currency, total: BigInt(r.total) }));
}

/** An exception's amount for people: rupees, "unreadable (the provider's text)", or "-" when none was reported. */
export function exceptionAmountText(
  e: Pick<ExceptionRow, 'amount' | 'amount_text'>,
  format: (paise: number) => string,
): string {
  if (e.amount !== null) return format(e.amount);
  return e.amount_text === null ? '-' : `unreadable (${e.amount_text})`;
}
