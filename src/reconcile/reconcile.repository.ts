/** SQL for reconciliation: its runs, the differences it found, the daily lease (what a run reads: reconcile-reads.ts). */
import { sql, type Kysely } from 'kysely';
import type { ReconcileMismatchTable, ReconcileRunTable, Tables } from '../db/schema.ts';

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
