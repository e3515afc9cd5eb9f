/** SQL for reconciliation: the transactions a run reads, its runs, the differences it found, the daily lease. */
import { sql, type Kysely } from 'kysely';
import type {
  ReconcileMismatchTable,
  ReconcileRunTable,
  Tables,
  TransactionKind,
  TransactionStatus,
} from '../db/schema.ts';
import { openTransaction } from '../transactions/transaction-claims.repository.ts';
import { compare } from '../transactions/transactions.repository.ts';

/** What a run compares of a transaction. */
export interface ReconcileTxn {
  payment_id: string;
  kind: TransactionKind;
  amount: number;
  status: TransactionStatus;
  utr: string;
  channel_txn_id: string;
  reversed_at: number | null;
  created_at: number;
  /** A payout's current transfer (`transferIdOf`); 1 for the rest. */
  transfer_attempt: number;
  /**
   * A payout recorded FAILED that Paygate has seen the provider pay after all (its
   * `payout_after_failed` exception) and not seen reversed since: the money is out, as after SUCCESS.
   */
  paid_after_failed: boolean;
}

const TXN_COLUMNS = [
  'payment_id',
  'kind',
  'amount',
  'status',
  'utr',
  'channel_txn_id',
  'reversed_at',
  'created_at',
  'transfer_attempt',
] as const;

function txnOf(r: Omit<ReconcileTxn, 'paid_after_failed'>): ReconcileTxn {
  return {
    ...r,
    paid_after_failed: false,
    amount: Number(r.amount),
    created_at: Number(r.created_at),
    transfer_attempt: Number(r.transfer_attempt),
    reversed_at: r.reversed_at === null ? null : Number(r.reversed_at),
  };
}

/**
 * `rows` with `paid_after_failed` read: one query for the page's FAILED payouts, through the
 * exceptions' unique (kind, provider, reference).
 */
export async function withPaidAfterFailed(
  db: Kysely<Tables>,
  channel: string,
  rows: ReconcileTxn[],
): Promise<ReconcileTxn[]> {
  const failed = rows.filter((r) => r.kind === 'payout' && r.status === 'FAILED').map((r) => r.payment_id);
  if (failed.length === 0) return rows;
  const seen = await db
    .selectFrom('channel_exceptions')
    .select(['kind', 'reference'])
    .where('kind', 'in', ['payout_after_failed', 'reversal_after_failed'])
    .where('provider', '=', channel)
    .where('reference', 'in', failed)
    .execute();
  const paid = new Set(seen.filter((e) => e.kind === 'payout_after_failed').map((e) => e.reference));
  for (const e of seen) if (e.kind === 'reversal_after_failed') paid.delete(e.reference);
  return paid.size === 0
    ? rows
    : rows.map((r) => (paid.has(r.payment_id) ? { ...r, paid_after_failed: true } : r));
}

/**
 * A page of a channel's transactions created in [from, to), in (created_at, payment_id) order after
 * `after`. One lower bound on created_at, the cursor's when there is one: given two, the databases
 * seek by one of them and may walk every entry before the cursor again on every page.
 */
export async function createdPage(
  db: Kysely<Tables>,
  channel: string,
  from: number,
  to: number,
  after: { createdAt: number; paymentId: string } | null,
  limit: number,
): Promise<ReconcileTxn[]> {
  let q = db
    .selectFrom('transactions')
    .select(TXN_COLUMNS)
    .where('channel', '=', channel)
    .where('created_at', '>=', after ? after.createdAt : from)
    .where('created_at', '<', to);
  // Past the cursor: created_at is at least its own here, so a later one or the same with a later id.
  if (after)
    q = q.where((eb) =>
      eb.or([eb('created_at', '>', after.createdAt), eb('payment_id', '>', after.paymentId)]),
    );
  const rows = await q.orderBy('created_at').orderBy('payment_id').limit(limit).execute();
  return rows.map(txnOf);
}

/**
 * The payment_ids of a channel's transactions created before `before` and still not final, in
 * order. Read through the index on the open transactions by channel (`transactions_due`), which
 * holds few rows: with an ORDER BY, a LIMIT or a range on created_at, the databases would rather
 * walk the primary key or the channel's index of every transaction.
 */
export async function openIds(db: Kysely<Tables>, channel: string, before: number): Promise<string[]> {
  const rows = await db
    .selectFrom('transactions')
    .select(['payment_id', 'created_at'])
    .where('channel', '=', channel)
    .where(openTransaction())
    .execute();
  return rows
    .filter((r) => Number(r.created_at) < before)
    .map((r) => r.payment_id)
    .sort(compare);
}

/**
 * A page of a channel's transactions that became final in [from, to) and that the provider can still
 * change (CONTRACT §13): a payout not reversed (after SUCCESS a reversal; after FAILED a payment
 * after all, and that payment's reversal), a refund (a late SUCCESS or FAILED), a pay-in FAILED (a
 * late payment). Those created at or after `createdBefore` are left out:
 * a run reads them as the day's own. In (finalized_at, payment_id) order after `after`, through the
 * index of when each became final, from the cursor: one lower bound on finalized_at (as in
 * `createdPage`), and the index's own condition on the channel written out, as a bound channel does
 * not show a planner that the row is in that partial index (SQLite then sorted every row of the
 * channel created before the day, 2 s a page at 800,000 rows).
 */
export async function changeablePage(
  db: Kysely<Tables>,
  channel: string,
  window: { from: number; to: number; createdBefore: number },
  after: { finalizedAt: number; paymentId: string } | null,
  limit: number,
): Promise<(ReconcileTxn & { finalized_at: number })[]> {
  let q = db
    .selectFrom('transactions')
    .select([...TXN_COLUMNS, 'finalized_at'])
    .where('channel', '=', channel)
    .where(sql<boolean>`${sql.ref('channel')} <> 'sandbox'`)
    .where('finalized_at', 'is not', null)
    .where('finalized_at', '>=', after ? after.finalizedAt : window.from)
    .where('finalized_at', '<', window.to)
    .where('created_at', '<', window.createdBefore)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'payout'), eb('reversed_at', 'is', null)]),
        eb('kind', '=', 'refund'),
        eb.and([eb('kind', '=', 'payin'), eb('status', '=', 'FAILED')]),
      ]),
    );
  if (after)
    q = q.where((eb) =>
      eb.or([eb('finalized_at', '>', after.finalizedAt), eb('payment_id', '>', after.paymentId)]),
    );
  const rows = await q.orderBy('finalized_at').orderBy('payment_id').limit(limit).execute();
  return rows.map((r) => ({ ...txnOf(r), finalized_at: Number(r.finalized_at) }));
}

/** The transactions of `paymentIds`, by payment_id. */
export async function transactionsOf(db: Kysely<Tables>, paymentIds: string[]): Promise<ReconcileTxn[]> {
  if (paymentIds.length === 0) return [];
  const rows = await db
    .selectFrom('transactions')
    .select(TXN_COLUMNS)
    .where('payment_id', 'in', paymentIds)
    .orderBy('payment_id')
    .execute();
  return rows.map(txnOf);
}

/**
 * Whether Paygate already kept this provider's payment or transfer aside when it saw it (an amount
 * that did not fit, a payment after a final status, a payout paid after FAILED): reconciliation
 * found nothing Paygate did not see.
 */
export async function alreadyKept(
  db: Kysely<Tables>,
  channel: string,
  references: string[],
): Promise<boolean> {
  const row = await db
    .selectFrom('channel_exceptions')
    .select('id')
    .where('provider', '=', channel)
    .where('reference', 'in', references)
    .where('kind', 'in', KEPT_ASIDE)
    .executeTakeFirst();
  return row !== undefined;
}

const KEPT_ASIDE = [
  'reversal',
  'amount_mismatch',
  'payment_after_final',
  'unknown_reference',
  'payout_after_failed',
  'reversal_after_failed',
  'refund_after_failed',
  'status_mismatch',
];

export async function startRun(
  db: Kysely<Tables>,
  run: { date: string; channel: string; trigger: 'cli' | 'schedule' },
  at: number,
): Promise<number> {
  const row = await db
    .insertInto('reconcile_runs')
    .values({ ...run, started_at: at, checked: 0, matched: 0, mismatched: 0, unreadable: 0, opened: 0 })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export interface RunCounts {
  checked: number;
  matched: number;
  mismatched: number;
  unreadable: number;
  opened: number;
}

export async function finishRun(
  db: Kysely<Tables>,
  id: number,
  counts: RunCounts,
  at: number,
): Promise<void> {
  await db
    .updateTable('reconcile_runs')
    .set({ ...counts, finished_at: at })
    .where('id', '=', id)
    .execute();
}

export interface Difference {
  channel: string;
  reference: string;
  field: 'status' | 'amount' | 'utr';
  providerValue: string;
  paygateValue: string;
  paymentId: string | null;
  /** Paise: the provider's amount when it gave one, else the transaction's. */
  amount: number | null;
}

/**
 * Opens the exception of a difference unless one was opened for the same channel, reference, field
 * and provider's value (by this run, an earlier one, or another process at the same moment): the
 * exception's unique key (kind, provider, reference) is the difference's. Answers whether it opened
 * one. The transaction writes first: on SQLite a transaction that read before writing is refused
 * outright (no busy wait) when another process wrote in between.
 */
export async function openDifference(
  db: Kysely<Tables>,
  runId: number,
  d: Difference,
  at: number,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const exception = await trx
      .insertInto('channel_exceptions')
      .values({
        kind: 'reconcile_mismatch',
        provider: d.channel,
        payment_id: d.paymentId,
        reference: `${d.reference} ${d.field}=${d.providerValue}`,
        amount: d.amount,
        detail: `reconcile: ${d.field} is ${d.providerValue || '(none)'} at ${d.channel}, ${d.paygateValue || '(none)'} in Paygate`,
        created_at: at,
      })
      .onConflict((oc) => oc.columns(['kind', 'provider', 'reference']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!exception) return false;
    await trx
      .insertInto('reconcile_mismatches')
      .values({
        run_id: runId,
        channel: d.channel,
        reference: d.reference,
        field: d.field,
        provider_value: d.providerValue,
        paygate_value: d.paygateValue,
        payment_id: d.paymentId,
        exception_id: Number(exception.id),
        created_at: at,
      })
      .execute();
    return true;
  });
}

export type RunRow = Omit<ReconcileRunTable, 'id'> & { id: number };
export type MismatchRow = Omit<ReconcileMismatchTable, 'id'> & { id: number };

function runOf(r: RunRow): RunRow {
  return {
    ...r,
    id: Number(r.id),
    started_at: Number(r.started_at),
    finished_at: r.finished_at === null ? null : Number(r.finished_at),
    checked: Number(r.checked),
    matched: Number(r.matched),
    mismatched: Number(r.mismatched),
    unreadable: Number(r.unreadable),
    opened: Number(r.opened),
  };
}

/** The latest runs, newest first, before the run `beforeId` when given. */
export async function listRuns(db: Kysely<Tables>, limit: number, beforeId?: number): Promise<RunRow[]> {
  let q = db.selectFrom('reconcile_runs').selectAll();
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(runOf);
}

export async function findRun(db: Kysely<Tables>, id: number): Promise<RunRow | null> {
  const row = await db.selectFrom('reconcile_runs').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? runOf(row) : null;
}

/** The differences a run found first, in the order it found them. */
export async function runMismatches(
  db: Kysely<Tables>,
  runId: number,
  limit: number,
): Promise<MismatchRow[]> {
  const rows = await db
    .selectFrom('reconcile_mismatches')
    .selectAll()
    .where('run_id', '=', runId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    ...r,
    id: Number(r.id),
    run_id: Number(r.run_id),
    exception_id: Number(r.exception_id),
    created_at: Number(r.created_at),
  }));
}

/**
 * Takes the day's lease of a channel for `holder` until `until`: when nobody holds it, or its holder
 * let it lapse (a process that died mid-run) and the run is not done. Answers whether it is ours.
 */
export async function claimLease(
  db: Kysely<Tables>,
  date: string,
  channel: string,
  holder: string,
  now: number,
  until: number,
): Promise<boolean> {
  await db
    .insertInto('reconcile_leases')
    .values({ date, channel, holder, lease_until: until, done_at: null })
    .onConflict((oc) =>
      oc
        .columns(['date', 'channel'])
        .doUpdateSet({ holder, lease_until: until })
        .where(sql.ref('reconcile_leases.done_at'), 'is', null)
        .where(sql.ref('reconcile_leases.lease_until'), '<', now),
    )
    .execute();
  const row = await db
    .selectFrom('reconcile_leases')
    .select(['holder', 'lease_until', 'done_at'])
    .where('date', '=', date)
    .where('channel', '=', channel)
    .executeTakeFirst();
  return row !== undefined && row.holder === holder && row.done_at === null;
}

/** Keeps the lease while the run goes on; false when it was lost (another process took it). */
export async function renewLease(
  db: Kysely<Tables>,
  date: string,
  channel: string,
  holder: string,
  until: number,
): Promise<boolean> {
  const r = await db
    .updateTable('reconcile_leases')
    .set({ lease_until: until })
    .where('date', '=', date)
    .where('channel', '=', channel)
    .where('holder', '=', holder)
    .where('done_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function finishLease(
  db: Kysely<Tables>,
  date: string,
  channel: string,
  holder: string,
  at: number,
): Promise<void> {
  await db
    .updateTable('reconcile_leases')
    .set({ done_at: at })
    .where('date', '=', date)
    .where('channel', '=', channel)
    .where('holder', '=', holder)
    .execute();
}
