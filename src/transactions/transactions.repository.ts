/** SQL for pay-in and payout records (one table; `kind` keeps them apart). */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { insertRecords, jsonRecords } from '../db/json-records.ts';
import type { Database } from '../db/database.ts';
import type { Tables, TransactionKind, TransactionStatus, TransactionTable } from '../db/schema.ts';
import type { StatusView } from '../db/status-reads.ts';
import { isPaymentId } from '../ids.ts';

export type TransactionRow = TransactionTable;

/**
 * Every payment_id is 32 characters [A-Za-z0-9] (`newPaymentId`). Anything else names no transaction,
 * and is answered without a query: PostgreSQL would refuse some strings (U+0000) with an error.
 */

/**
 * Inserts several new transactions in one statement, skipping any whose order number its merchant
 * already used. Returns the payment_ids that were inserted.
 */
export async function insertTransactions(db: Kysely<Tables>, rows: TransactionRow[]): Promise<Set<string>> {
  // Rows go in in the order of the unique key, so that two processes inserting the same order
  // numbers in different orders (a client retrying through two servers) cannot deadlock on
  // PostgreSQL: each waits for the other's entry in the same order instead.
  const ordered = [...rows].sort((a, b) =>
    a.merchant_id === b.merchant_id
      ? compare(a.merchant_order_no, b.merchant_order_no)
      : compare(a.merchant_id, b.merchant_id),
  );
  // `where true` tells SQLite's parser that `on conflict` is the upsert clause, not a join's.
  const inserted = await sql<{ payment_id: string }>`
    ${insertRecords(db, 'transactions', ordered, TRANSACTION_COLUMNS)} where true
    on conflict (merchant_id, kind, merchant_order_no) do nothing
    returning payment_id`.execute(db);
  return new Set(inserted.rows.map((r) => r.payment_id));
}

/** Every column of `transactions`, with its PostgreSQL type. */
export const TRANSACTION_COLUMNS = {
  payment_id: 'text',
  merchant_id: 'text',
  kind: 'text',
  flow: 'text',
  merchant_order_no: 'text',
  amount: 'bigint',
  currency: 'text',
  status: 'text',
  utr: 'text',
  channel_txn_id: 'text',
  channel: 'text',
  user_name: 'text',
  user_phone: 'text',
  user_email: 'text',
  callback_url: 'text',
  redirect_url: 'text',
  receiver_name: 'text',
  receiver_account_no: 'text',
  receiver_ifsc: 'text',
  request_hash: 'text',
  response_json: 'text',
  expires_at: 'bigint',
  next_action_at: 'bigint',
  lease_until: 'bigint',
  created_at: 'bigint',
  updated_at: 'bigint',
  finalized_at: 'bigint',
  upi_intent: 'text',
  submit_attempts: 'bigint',
  reversed_at: 'bigint',
  refund_of: 'text',
  reason: 'text',
  not_found_at: 'bigint',
  read_failures: 'bigint',
  channel_payment_id: 'text',
  channel_payment_txn_id: 'text',
  failure_reason: 'text',
  exception_id: 'bigint',
  transfer_attempt: 'bigint',
} as const satisfies Record<keyof TransactionTable, 'text' | 'bigint'>;

export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The `response_json` of a pay-in recorded before its channel answered: nobody has been given its
 * payment_id, nothing may pay, list or settle it, and a repeat of its order waits for the answer.
 */
export const OPENING = '';

/** Records the channel's answer to an opening pay-in. False when it is no longer opening. */
export async function recordOpened(
  db: Kysely<Tables>,
  paymentId: string,
  opened: {
    responseJson: string;
    channelTxnId: string;
    upiIntent: string | null;
    expiresAt: number;
    nextActionAt: number;
  },
): Promise<boolean> {
  const result = await db
    .updateTable('transactions')
    .set({
      response_json: opened.responseJson,
      channel_txn_id: opened.channelTxnId,
      upi_intent: opened.upiIntent,
      expires_at: opened.expiresAt,
      next_action_at: opened.nextActionAt,
    })
    .where('payment_id', '=', paymentId)
    .where('response_json', '=', OPENING)
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Removes a pay-in whose opening failed or was abandoned, freeing its order number. */
export async function deleteOpening(db: Kysely<Tables>, paymentId: string): Promise<void> {
  await db
    .deleteFrom('transactions')
    .where('payment_id', '=', paymentId)
    .where('response_json', '=', OPENING)
    .where('status', '=', 'PENDING')
    .execute();
}

/** Removes transactions written earlier in the same database transaction (a batch's refusals). */
export async function deleteTransactions(db: Kysely<Tables>, paymentIds: string[]): Promise<void> {
  if (paymentIds.length > 0)
    await db.deleteFrom('transactions').where('payment_id', 'in', paymentIds).execute();
}

export async function findByOrderNo(
  db: Kysely<Tables>,
  merchantId: string,
  kind: TransactionKind,
  orderNo: string,
): Promise<Pick<TransactionRow, 'payment_id' | 'request_hash' | 'response_json'> | undefined> {
  return db
    .selectFrom('transactions')
    .select(['payment_id', 'request_hash', 'response_json'])
    .where('merchant_id', '=', merchantId)
    .where('kind', '=', kind)
    .where('merchant_order_no', '=', orderNo)
    .executeTakeFirst();
}

/** A merchant's order number of one kind: the key of `findByOrderNos`. */
export interface OrderKey {
  merchantId: string;
  kind: TransactionKind;
  orderNo: string;
}

export type OrderRow = Pick<TransactionRow, 'payment_id' | 'request_hash' | 'response_json'>;

const ORDER_KEY_COLUMNS = { key_merchant_id: 'text', key_kind: 'text', key_order_no: 'text' } as const;

/** `findByOrderNo` for several keys in one statement, whatever their number; in the keys' order. */
export async function findByOrderNos(
  db: Kysely<Tables>,
  keys: OrderKey[],
): Promise<(OrderRow | undefined)[]> {
  if (keys.length === 0) return [];
  const rows = keys.map((k) => ({
    key_merchant_id: k.merchantId,
    key_kind: k.kind,
    key_order_no: k.orderNo,
  }));
  const found = await sql<OrderRow & Pick<TransactionRow, 'merchant_id' | 'kind' | 'merchant_order_no'>>`
    select t.payment_id, t.request_hash, t.response_json, t.merchant_id, t.kind, t.merchant_order_no
    from ${jsonRecords(db, rows, ORDER_KEY_COLUMNS)} as k
    join transactions as t
      on t.merchant_id = k.key_merchant_id and t.kind = k.key_kind and t.merchant_order_no = k.key_order_no`.execute(
    db,
  );
  const byKey = new Map(
    found.rows.map((r) => [
      orderKey({ merchantId: r.merchant_id, kind: r.kind, orderNo: r.merchant_order_no }),
      r,
    ]),
  );
  return keys.map((k) => {
    const r = byKey.get(orderKey(k));
    return r && { payment_id: r.payment_id, request_hash: r.request_hash, response_json: r.response_json };
  });
}

function orderKey(k: OrderKey): string {
  return `${k.merchantId}\u0000${k.kind}\u0000${k.orderNo}`;
}

export async function findTransaction(
  db: Kysely<Tables>,
  paymentId: string,
): Promise<TransactionRow | undefined> {
  if (!isPaymentId(paymentId)) return undefined;
  return db.selectFrom('transactions').selectAll().where('payment_id', '=', paymentId).executeTakeFirst();
}

/** A channel's pay-ins with this bank reference (through the index on `utr`). */
export async function payinsByUtr(
  db: Kysely<Tables>,
  channel: string,
  utr: string,
): Promise<TransactionRow[]> {
  if (utr === '') return [];
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('utr', '=', utr)
    .where('kind', '=', 'payin')
    .where('channel', '=', channel)
    .execute();
}

const NAMED_COLUMNS = { named_payment_id: 'text' } as const;

/**
 * `(select named_payment_id from …)`: the payment_ids among `paymentIds` as one parameter, so that a
 * statement's text is the same for one or a hundred; null when none of them is a payment_id.
 */
export function namedPaymentIds(db: Kysely<Tables>, paymentIds: string[]): RawBuilder<string> | null {
  const named = [...new Set(paymentIds)]
    .filter((id) => isPaymentId(id))
    .map((id) => ({ named_payment_id: id }));
  if (named.length === 0) return null;
  return sql<string>`(select named_payment_id from ${jsonRecords(db, named, NAMED_COLUMNS)} as n)`;
}

/** The transactions of several payment_ids, in one statement whatever their number. */
export async function findTransactions(db: Kysely<Tables>, paymentIds: string[]): Promise<TransactionRow[]> {
  const named = namedPaymentIds(db, paymentIds);
  if (!named) return [];
  return db.selectFrom('transactions').selectAll().where('payment_id', 'in', named).execute();
}

/** The few columns a status query returns, for one merchant's transaction of one kind. */
export async function findStatus(
  database: Pick<Database, 'readStatus'>,
  merchantId: string,
  kind: TransactionKind,
  paymentId: string,
): Promise<StatusView | undefined> {
  if (!isPaymentId(paymentId)) return undefined;
  return database.readStatus({ paymentId, merchantId, kind });
}

/**
 * The same columns by the merchant's own order number, through the order-number key. A pay-in still
 * opening is not found: nobody has its answer yet, and its order number is free again if it fails.
 */
export async function findStatusByOrderNo(
  db: Kysely<Tables>,
  merchantId: string,
  kind: TransactionKind,
  orderNo: string,
): Promise<StatusView | undefined> {
  return db
    .selectFrom('transactions')
    .select(['status', 'amount', 'currency', 'channel_txn_id', 'utr', 'reversed_at'])
    .where('merchant_id', '=', merchantId)
    .where('kind', '=', kind)
    .where('merchant_order_no', '=', orderNo)
    .where('response_json', '<>', OPENING)
    .executeTakeFirst();
}

/** A final status for one transaction, as `markFinal` writes it. */
export interface Final {
  paymentId: string;
  status: 'SUCCESS' | 'FAILED';
  utr: string;
  /** Kept as it was when empty. */
  channelTxnId: string;
  /** The provider's payment behind a pay-in's outcome (`channel_payment_id`, `channel_payment_txn_id`); kept as it was when absent. */
  payment?: { id: string; txnId: string };
  /** The channel's reason for a failure (`failure_reason`). */
  reason?: string;
}

const FINAL_COLUMNS = {
  final_payment_id: 'text',
  final_status: 'text',
  final_utr: 'text',
  final_channel_txn_id: 'text',
  final_channel_payment_id: 'text',
  final_channel_payment_txn_id: 'text',
  final_reason: 'text',
} as const;

/** The transaction's columns, named for a RETURNING clause (SQLite allows no `t.*` there). */
const RETURNED = sql.raw(Object.keys(TRANSACTION_COLUMNS).join(', '));

/**
 * The one conditional update behind every final status: it only changes a transaction that is
 * not final yet, so a final status can never be overwritten. Several transactions in one
 * statement (each payment_id at most once). Returns the rows it updated; one already final (or
 * that does not exist) is not among them. The batch's column names differ from the table's, so
 * RETURNING names only the table's; the status test is an inequality, which no index serves, so
 * SQLite walks the batch and finds each transaction by its key.
 */
export async function markFinal(db: Kysely<Tables>, finals: Final[], at: number): Promise<TransactionRow[]> {
  if (finals.length === 0) return [];
  const rows = finals.map((f) => ({
    final_payment_id: f.paymentId,
    final_status: f.status,
    final_utr: f.utr,
    final_channel_txn_id: f.channelTxnId,
    final_channel_payment_id: f.payment?.id ?? '',
    final_channel_payment_txn_id: f.payment?.txnId ?? '',
    final_reason: f.reason ?? '',
  }));
  const result = await sql<TransactionRow>`
    update transactions
    set status = f.final_status, utr = f.final_utr,
        channel_txn_id = case when f.final_channel_txn_id <> '' then f.final_channel_txn_id else channel_txn_id end,
        channel_payment_id = case when f.final_channel_payment_id <> '' then f.final_channel_payment_id else channel_payment_id end,
        channel_payment_txn_id = case when f.final_channel_payment_txn_id <> '' then f.final_channel_payment_txn_id else channel_payment_txn_id end,
        failure_reason = case when f.final_reason <> '' then f.final_reason else failure_reason end,
        finalized_at = ${at}, updated_at = ${at}, next_action_at = null, lease_until = null
    from ${jsonRecords(db, rows, FINAL_COLUMNS)} as f
    where payment_id = f.final_payment_id and status <> 'SUCCESS' and status <> 'FAILED'
    returning ${RETURNED}`.execute(db);
  return result.rows;
}

/** Marks a successful payout reversed, once. Returns it, or undefined when it was not a SUCCESS payout or was reversed already. */
export async function markReversed(
  db: Kysely<Tables>,
  paymentId: string,
  at: number,
): Promise<TransactionRow | undefined> {
  return db
    .updateTable('transactions')
    .set({ reversed_at: at, updated_at: at })
    .where('payment_id', '=', paymentId)
    .where('kind', '=', 'payout')
    .where('status', '=', 'SUCCESS')
    .where('reversed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export interface TransactionEvent {
  paymentId: string;
  status: TransactionStatus;
  source: string;
}

const EVENT_COLUMNS = { payment_id: 'text', status: 'text', source: 'text', created_at: 'bigint' } as const;

/** Adds to the transactions' histories, in one statement. */
export async function insertEvents(
  db: Kysely<Tables>,
  events: TransactionEvent[],
  at: number,
): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => ({
    payment_id: e.paymentId,
    status: e.status,
    source: e.source,
    created_at: at,
  }));
  await insertRecords(db, 'transaction_events', rows, EVENT_COLUMNS).execute(db);
}

/** Sets a final transaction's bank reference that its channel reported late (it was "" until then). */
export async function fillUtr(db: Kysely<Tables>, paymentId: string, utr: string): Promise<void> {
  await db
    .updateTable('transactions')
    .set({ utr })
    .where('payment_id', '=', paymentId)
    .where('utr', '=', '')
    .execute();
}
