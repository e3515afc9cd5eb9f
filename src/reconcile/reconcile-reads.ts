/**
 * SQL for what a reconciliation run reads of Paygate's transactions: the day's, those still open, those
 * final in the lookback that the provider can still change, each page from its cursor.
 */
import { sql, type Kysely } from 'kysely';
import type { Tables, TransactionKind, TransactionStatus } from '../db/schema.ts';
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
 * `rows` with `paid_after_failed` read (within the lookback, which runs from when the payout became
 * FAILED: a payment after all first seen later than that is not followed for its reversal): one query for the page's FAILED payouts, through the
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
    .select(['kind', 'reference', 'holds'])
    .where('kind', 'in', ['payout_after_failed', 'reversal_after_failed'])
    .where('provider', '=', channel)
    .where('reference', 'in', failed)
    .execute();
  // Paid after FAILED and owed (a SUCCESS seen after a REVERSED holds nothing: the money came back).
  const paid = new Set(
    seen.filter((e) => e.kind === 'payout_after_failed' && e.holds === 'receivable').map((e) => e.reference),
  );
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
