/** SQL for the transaction worker's claims and the schedule of a transaction's next step. */
import { sql, type Kysely } from 'kysely';
import { claimDue, giveBack, isOpen, type Claim, type WorkTable } from '../db/claim.ts';
import { jsonRecords } from '../db/json-records.ts';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { compare, type TransactionRow } from './transactions.repository.ts';

/** Transactions wait on time: pay-in expiry, payout submission, asking for a payout's outcome. */
const DUE_TRANSACTIONS: WorkTable<'transactions'> = {
  table: 'transactions',
  key: 'payment_id',
  open: ['PENDING', 'PROCESSING'],
  dueAt: 'next_action_at',
  // Each time a PENDING payout or refund is taken up to be sent: above one, an earlier attempt may have reached its channel.
  alsoSet: {
    submit_attempts: sql`submit_attempts + case when kind <> 'payin' and status = 'PENDING' then 1 else 0 end`,
    // A PENDING payout or refund whose last claim was never given back (its process stopped, or
    // could not write): that step may have sent it, at the latest when its lease ran out. Dated so,
    // it is not sent again before that send can no longer arrive (`notFoundWait`).
    updated_at: sql`case when kind <> 'payin' and status = 'PENDING' and lease_until is not null then lease_until else updated_at end`,
  },
};

/**
 * Claims `channel`'s transactions whose next action is due, for `leaseMs`, earliest due first
 * (the index on the open transactions by channel and due time, `channel-claims.migration.ts`).
 */
export function claimDueTransactions(
  database: Pick<Database, 'db' | 'lockRows'>,
  channel: string,
  now: number,
  leaseMs: number,
  limit: number,
  owner?: string,
  inHand: readonly string[] = [],
): Promise<TransactionRow[]> {
  return claimDue(database, DUE_TRANSACTIONS, now, leaseMs, limit, owner, inHand, {
    column: 'channel',
    value: channel,
  });
}

/**
 * `status in ('PENDING', 'PROCESSING')` as the partial index on the open transactions is written,
 * so that a statement with it can read that index (`transactions_due`, by channel).
 */
export function openTransaction() {
  return isOpen(DUE_TRANSACTIONS);
}

/** The channels that open transactions name. */
export async function openChannels(db: Kysely<Tables>): Promise<string[]> {
  const rows = await db
    .selectFrom('transactions')
    .select('channel')
    .distinct()
    .where(openTransaction())
    .execute();
  return rows.map((r) => r.channel);
}

/**
 * When the oldest open pay-in or payout of `channel` was created, or null when none is open: the
 * transactions a channel's notifications are awaited for (refunds are read, not notified).
 */
export async function oldestAwaitingNotice(db: Kysely<Tables>, channel: string): Promise<number | null> {
  const row = await db
    .selectFrom('transactions')
    .select((eb) => eb.fn.min('created_at').as('at'))
    .where('channel', '=', channel)
    .where(openTransaction())
    .where('kind', 'in', ['payin', 'payout'])
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

/**
 * Gives back the transactions of a claim whose answer was lost. None was handed to its channel
 * by it, so a payout's or refund's submission it counted is uncounted.
 */
export function giveBackTransactions(database: Pick<Database, 'db'>, claim: Claim): Promise<void> {
  return giveBack(database, DUE_TRANSACTIONS, claim, {
    submit_attempts: sql`submit_attempts - case when kind <> 'payin' and status = 'PENDING' then 1 else 0 end`,
  });
}

/** A payout its channel accepted: the channel's id for it, and when to ask for its outcome. */
export interface Accepted {
  paymentId: string;
  channelTxnId: string;
  nextActionAt: number;
  /** The payout's transfer the channel accepted (1 when not given): a later one's row is not this acceptance's. */
  attempt?: number;
}

const ACCEPTED_COLUMNS = {
  accepted_payment_id: 'text',
  accepted_channel_txn_id: 'text',
  accepted_next_action_at: 'bigint',
  accepted_from: 'text',
  accepted_attempt: 'bigint',
} as const;

/**
 * Records that the channel accepted payouts, in one statement: only those still PENDING (a
 * notification that came first has made one final, and stays so) and not parked (a transfer failed
 * for Paygate's own account waits, due never, for its exception: `payout-transfers.repository.ts`). The status it must have comes
 * from the batch's rows, not a constant, so that SQLite finds each payout by its key instead of
 * walking the status index.
 */
export async function markProcessing(db: Kysely<Tables>, accepted: Accepted[], at: number): Promise<void> {
  if (accepted.length === 0) return;
  // In payment_id order, as `markFinal` takes its batches, so that the two lock payouts alike.
  const rows = [...accepted]
    .sort((a, b) => compare(a.paymentId, b.paymentId))
    .map((a) => ({
      accepted_payment_id: a.paymentId,
      accepted_channel_txn_id: a.channelTxnId,
      accepted_next_action_at: a.nextActionAt,
      accepted_from: 'PENDING',
      accepted_attempt: a.attempt ?? 1,
    }));
  await sql`
    update transactions
    set status = 'PROCESSING', channel_txn_id = a.accepted_channel_txn_id,
        next_action_at = a.accepted_next_action_at, lease_until = null, updated_at = ${at}
    from ${jsonRecords(db, rows, ACCEPTED_COLUMNS)} as a
    where payment_id = a.accepted_payment_id and status = a.accepted_from
      and next_action_at is not null and transfer_attempt = a.accepted_attempt`.execute(db);
}

/**
 * Gives a claimed transaction back, to be looked at again at `nextActionAt`; with `lease`, only
 * while the row still carries that lease (nobody has claimed it since).
 */
export async function reschedule(
  db: Kysely<Tables>,
  paymentId: string,
  nextActionAt: number,
  lease?: number,
): Promise<void> {
  await db
    .updateTable('transactions')
    .set({ next_action_at: nextActionAt, lease_until: null })
    .where('payment_id', '=', paymentId)
    .where('status', 'in', ['PENDING', 'PROCESSING'])
    .$if(lease !== undefined, (q) => q.where('lease_until', '=', lease!))
    .execute();
}

/** A claimed transaction to be looked at again at `nextActionAt`, while still in the status it was claimed in. */
export interface Rescheduled {
  paymentId: string;
  nextActionAt: number;
  status: string;
}

const RESCHEDULED_COLUMNS = {
  rescheduled_payment_id: 'text',
  rescheduled_next_action_at: 'bigint',
  rescheduled_status: 'text',
} as const;

/**
 * Gives claimed transactions back, each to be looked at again at its time, in one statement: the
 * pay-ins and payouts whose channel had no outcome for them yet. One that changed status since its
 * claim (a notification made it final) is left alone. The status comes from the batch's rows, as in
 * `markProcessing`, so that SQLite finds each row by its key.
 */
export async function rescheduleMany(db: Kysely<Tables>, rows: Rescheduled[]): Promise<void> {
  if (rows.length === 0) return;
  const records = [...rows]
    .sort((a, b) => compare(a.paymentId, b.paymentId))
    .map((r) => ({
      rescheduled_payment_id: r.paymentId,
      rescheduled_next_action_at: r.nextActionAt,
      rescheduled_status: r.status,
    }));
  await sql`
    update transactions
    set next_action_at = r.rescheduled_next_action_at, lease_until = null
    from ${jsonRecords(db, records, RESCHEDULED_COLUMNS)} as r
    where payment_id = r.rescheduled_payment_id and status = r.rescheduled_status`.execute(db);
}

/**
 * Gives back a PENDING payout or refund a worker claimed, to be looked at again at `nextActionAt`. `unsent`:
 * this step made no send the channel may have acted on, so the claim's count of it is taken back.
 * `notFoundAt`: when the channel was first found not to know the payout (null clears it).
 * `sentAt`: when this step's send, which got no answer, was made (kept as `updated_at`). A payout
 * parked meanwhile (due never) stays parked; with `attempt`, so does a payout sent again under its
 * next transfer meanwhile.
 */
export async function reschedulePending(
  db: Kysely<Tables>,
  paymentId: string,
  nextActionAt: number,
  change: { unsent: boolean; notFoundAt?: number | null; sentAt?: number; attempt?: number },
): Promise<void> {
  await db
    .updateTable('transactions')
    .set({
      next_action_at: nextActionAt,
      lease_until: null,
      ...(change.unsent && { submit_attempts: sql<number>`submit_attempts - 1` }),
      ...(change.notFoundAt !== undefined && { not_found_at: change.notFoundAt }),
      ...(change.sentAt !== undefined && { updated_at: change.sentAt }),
    })
    .where('payment_id', '=', paymentId)
    .where('status', '=', 'PENDING')
    .where('next_action_at', 'is not', null)
    .where('transfer_attempt', '=', change.attempt ?? 1)
    .execute();
}

const NAMED_REFUND_COLUMNS = { named_id: 'text' } as const;

/**
 * Makes the open refunds of a channel that a notification names due now, by refund_id or by the
 * channel's id for them: the worker reads them at once rather than at their next poll. A refund a
 * worker holds is left alone (its step is reading or sending it). Answers how many were made due.
 */
export async function refundsDueNow(
  db: Kysely<Tables>,
  channel: string,
  names: string[],
  now: number,
): Promise<number> {
  const ids = [...new Set(names.filter((n) => n !== '' && n.length <= 200))];
  if (ids.length === 0) return 0;
  const named = sql<string>`(select named_id from ${jsonRecords(
    db,
    ids.map((id) => ({ named_id: id })),
    NAMED_REFUND_COLUMNS,
  )} as n)`;
  const result = await db
    .updateTable('transactions')
    .set({ next_action_at: now })
    .where((eb) => eb.or([eb('payment_id', 'in', named), eb('channel_txn_id', 'in', named)]))
    .where('kind', '=', 'refund')
    .where('channel', '=', channel)
    .where('status', 'in', ['PENDING', 'PROCESSING'])
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
