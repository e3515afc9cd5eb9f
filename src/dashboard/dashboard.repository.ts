/**
 * SQL of the dashboard: users, sessions, failed sign-ins, the audit log, and the reads behind its
 * pages. A `merchantId` of null means every merchant (an operator).
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type {
  Flow,
  MerchantStatus,
  SessionTable,
  Tables,
  TransactionKind,
  TransactionStatus,
  UserTable,
} from '../db/schema.ts';
import { DAY_MS, IST_OFFSET_MS } from '../ist.ts';
import { failedDeliveryIds } from './attention.repository.ts';

type Db = Kysely<Tables>;

export async function insertUser(db: Db, user: UserTable): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function findUserByEmail(db: Db, email: string): Promise<UserTable | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function insertSession(db: Db, session: SessionTable): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

export type SessionUser = SessionTable &
  Pick<UserTable, 'email' | 'role' | 'merchant_id' | 'disabled_at'> & {
    /** The status of the user's merchant; null for an operator. */
    merchant_status: MerchantStatus | null;
    merchant_name: string | null;
  };

export async function findSession(db: Db, tokenHash: string): Promise<SessionUser | undefined> {
  return db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .leftJoin('merchants', 'merchants.id', 'users.merchant_id')
    .select([
      'sessions.token_hash',
      'sessions.user_id',
      'sessions.csrf_token',
      'sessions.created_at',
      'sessions.last_seen_at',
      'users.email',
      'users.role',
      'users.merchant_id',
      'users.disabled_at',
      'merchants.status as merchant_status',
      'merchants.name as merchant_name',
    ])
    .where('sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function touchSession(db: Db, tokenHash: string, at: number): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: at }).where('token_hash', '=', tokenHash).execute();
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute();
}

/**
 * Sessions idle since before `idleBefore`, or signed in before `signedInBefore`, are gone for good;
 * deleting them keeps the table small.
 */
export async function deleteEndedSessions(db: Db, idleBefore: number, signedInBefore: number): Promise<void> {
  await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('last_seen_at', '<', idleBefore), eb('created_at', '<', signedInBefore)]))
    .execute();
}

/** Records a sign-in attempt as a failure in each scope (until its password is found right). Returns the rows' ids. */
export async function recordFailures(db: Db, scopes: string[], at: number): Promise<number[]> {
  const rows = await db
    .insertInto('sign_in_failures')
    .values(scopes.map((scope) => ({ scope, at })))
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

/** Takes back an attempt recorded by `recordFailures` (it was refused, or its password was right). */
export async function forgetFailures(db: Db, ids: number[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('sign_in_failures').where('id', 'in', ids).execute();
}

/** Failed sign-ins of `scope` since `since`, oldest first (their times say when the limit lifts). */
export async function failuresSince(db: Db, scope: string, since: number): Promise<number[]> {
  const rows = await db
    .selectFrom('sign_in_failures')
    .select('at')
    .where('scope', '=', scope)
    .where('at', '>=', since)
    .orderBy('at')
    .execute();
  return rows.map((r) => r.at);
}

/** How many failed sign-ins `scope` has had since `since`. */
export async function countFailuresSince(db: Db, scope: string, since: number): Promise<number> {
  const row = await db
    .selectFrom('sign_in_failures')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('scope', '=', scope)
    .where('at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function clearFailures(db: Db, scope: string, before: number | null = null): Promise<void> {
  let q = db.deleteFrom('sign_in_failures').where('scope', '=', scope);
  if (before !== null) q = q.where('at', '<', before);
  await q.execute();
}

export async function deleteOldFailures(db: Db, before: number): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('at', '<', before).execute();
}

/** Takes a form's one-time id: true the first time, false for a form posted again. Ids older than `forgetBefore` are dropped. */
export async function takeForm(db: Db, id: string, at: number, forgetBefore: number): Promise<boolean> {
  await db.deleteFrom('forms_taken').where('at', '<', forgetBefore).execute();
  const taken = await db
    .insertInto('forms_taken')
    .values({ id, at })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return taken !== undefined;
}

export interface TransactionFilter {
  merchantId: string | null;
  kind?: TransactionKind;
  flow?: Flow;
  status?: TransactionStatus;
  /** Created at or after, epoch ms. */
  from?: number;
  /** Created before, epoch ms. */
  to?: number;
  /** Paise, inclusive. */
  minAmount?: number;
  maxAmount?: number;
  /** A payment_id, merchant_order_no or utr, matched exactly. */
  search?: string;
  /** Only transactions whose callback failed every attempt (`failedDeliveryIds`). */
  deliveryFailed?: boolean;
}

/** Where a page of the list ends: the next page starts after this row. */
export interface ListCursor {
  createdAt: number;
  paymentId: string;
}

export const LIST_COLUMNS = [
  'payment_id',
  'merchant_id',
  'kind',
  'flow',
  'merchant_order_no',
  'amount',
  'currency',
  'status',
  'utr',
  'created_at',
  'finalized_at',
  'failure_reason',
] as const;

export type ListRow = Pick<Tables['transactions'], (typeof LIST_COLUMNS)[number]>;

/**
 * The payment_ids a search term names: as a payment_id, a UTR, or a merchant_order_no. Each is an
 * index lookup (the order number through the (merchant_id, kind, merchant_order_no) key, for every
 * merchant in view), so a search costs the same at any table size.
 */
async function searchIds(db: Db, merchantId: string | null, term: string): Promise<string[]> {
  const scoped = <O>(q: SelectQueryBuilder<Tables, 'transactions', O>) =>
    merchantId === null ? q : q.where('merchant_id', '=', merchantId);
  const base = db.selectFrom('transactions').select('payment_id');
  const [byId, byUtr, byOrder] = await Promise.all([
    scoped(base.where('payment_id', '=', term)).execute(),
    scoped(base.where('utr', '=', term))
      .limit(1000)
      .execute(),
    base
      .where(
        'merchant_id',
        'in',
        merchantId === null ? db.selectFrom('merchants').select('id') : [merchantId],
      )
      .where('kind', 'in', ['payin', 'payout', 'refund'])
      .where('merchant_order_no', '=', term)
      .limit(1000)
      .execute(),
  ]);
  return [...new Set([...byId, ...byUtr, ...byOrder].map((r) => r.payment_id))];
}

/** One page of transactions matching `filter`, newest first, after `cursor`. */
export async function listTransactions(
  db: Db,
  filter: TransactionFilter,
  cursor: ListCursor | null,
  limit: number,
): Promise<ListRow[]> {
  let q = db.selectFrom('transactions').select(LIST_COLUMNS);
  if (filter.search !== undefined) {
    const ids = filter.search === '' ? [] : await searchIds(db, filter.merchantId, filter.search);
    if (ids.length === 0) return [];
    q = q.where('payment_id', 'in', ids);
  }
  if (filter.merchantId !== null) q = q.where('merchant_id', '=', filter.merchantId);
  if (filter.kind) q = q.where('kind', '=', filter.kind);
  if (filter.flow) q = q.where('flow', '=', filter.flow);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.deliveryFailed) q = q.where('payment_id', 'in', failedDeliveryIds(db, filter.merchantId));
  if (filter.from !== undefined) q = q.where('created_at', '>=', filter.from);
  // Past the first page the cursor bounds the scan; SQLite would otherwise pick one of the two
  // bounds and, given `to`, read every entry from `to` down to the cursor.
  if (filter.to !== undefined && !(cursor && cursor.createdAt < filter.to))
    q = q.where('created_at', '<', filter.to);
  if (filter.minAmount !== undefined) q = q.where('amount', '>=', filter.minAmount);
  if (filter.maxAmount !== undefined) q = q.where('amount', '<=', filter.maxAmount);
  if (cursor)
    q = q.where((eb) =>
      eb(eb.refTuple('created_at', 'payment_id'), '<', eb.tuple(cursor.createdAt, cursor.paymentId)),
    );
  return q.orderBy('created_at', 'desc').orderBy('payment_id', 'desc').limit(limit).execute();
}

export interface DayStats {
  /** Days since the epoch, in IST. */
  day: number;
  kind: TransactionKind;
  succeeded: number;
  failed: number;
  /** Paise of the transactions that succeeded. */
  volume: number;
}

/** IST is UTC+05:30 all year. */

/** Final transactions in one currency created since `since`, by IST day and kind. */
export async function dailyStats(
  db: Db,
  merchantId: string | null,
  currency: string,
  since: number,
): Promise<DayStats[]> {
  // Integer division on both databases; literals, not parameters, so that PostgreSQL sees the
  // grouped expression and the selected one as the same.
  const day = sql<number>`(created_at + ${sql.lit(IST_OFFSET_MS)}) / ${sql.lit(DAY_MS)}`;
  let q = db
    .selectFrom('transactions')
    .select([
      day.as('day'),
      'kind',
      sql<number>`sum(case when status = 'SUCCESS' then 1 else 0 end)`.as('succeeded'),
      sql<number>`sum(case when status = 'FAILED' then 1 else 0 end)`.as('failed'),
      sql<number>`sum(case when status = 'SUCCESS' then amount else 0 end)`.as('volume'),
    ])
    .where('created_at', '>=', since)
    .where('currency', '=', currency);
  if (merchantId !== null) q = q.where('merchant_id', '=', merchantId);
  const rows = await q.groupBy([day, 'kind']).execute();
  return rows.map((r) => ({
    day: Number(r.day),
    kind: r.kind,
    succeeded: Number(r.succeeded),
    failed: Number(r.failed),
    volume: Number(r.volume),
  }));
}

export async function walletsOf(
  db: Db,
  merchantId: string | null,
): Promise<{ currency: string; available: number; held: number }[]> {
  let q = db
    .selectFrom('wallets')
    .select(['currency', sql<number>`sum(available)`.as('available'), sql<number>`sum(held)`.as('held')]);
  if (merchantId !== null) q = q.where('merchant_id', '=', merchantId);
  const rows = await q.groupBy('currency').orderBy('currency').execute();
  return rows.map((r) => ({ currency: r.currency, available: Number(r.available), held: Number(r.held) }));
}

export interface LedgerRow {
  id: number;
  journal_id: string;
  kind: string;
  currency: string;
  amount: number;
  payment_id: string | null;
  created_at: number;
  /** The account's balance just after this entry. */
  balance: number;
}

/**
 * One merchant's entries of one wallet account, newest first, each with the balance just after
 * it: the wallet's balance now less every later entry (summed in the database, so the figure is
 * the ledger's own at any depth of the list).
 */
export async function ledgerPage(
  db: Db,
  wallet: { merchantId: string; currency: string; account: 'available' | 'held' },
  beforeId: number | null,
  limit: number,
): Promise<LedgerRow[]> {
  // One snapshot for the balance and the entries, so that a payment settling meanwhile cannot
  // put the figures out of step (on SQLite a transaction is one snapshot whatever its level).
  const [walletRow, laterTotal, rows] = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const ofWallet = tx
        .selectFrom('ledger_entries')
        .where('merchant_id', '=', wallet.merchantId)
        .where('currency', '=', wallet.currency)
        .where('account', '=', wallet.account);
      const w = await tx
        .selectFrom('wallets')
        .select(['available', 'held'])
        .where('merchant_id', '=', wallet.merchantId)
        .where('currency', '=', wallet.currency)
        .executeTakeFirst();
      const later =
        beforeId === null
          ? 0
          : (
              await ofWallet
                .select(sql<number>`coalesce(sum(amount), 0)`.as('total'))
                .where('id', '>=', beforeId)
                .executeTakeFirstOrThrow()
            ).total;
      const page = await ofWallet
        .select(['id', 'journal_id', 'kind', 'currency', 'amount', 'payment_id', 'created_at'])
        .$if(beforeId !== null, (q) => q.where('id', '<', beforeId!))
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return [w, later, page] as const;
    });
  let balance = (walletRow ? walletRow[wallet.account] : 0) - Number(laterTotal);
  return rows.map((r) => {
    const row = { ...r, id: Number(r.id), balance };
    balance -= r.amount;
    return row;
  });
}

export async function journalOf(db: Db, paymentId: string) {
  return db
    .selectFrom('ledger_entries')
    .select(['id', 'journal_id', 'kind', 'account', 'amount', 'currency', 'created_at'])
    .where('payment_id', '=', paymentId)
    .orderBy('id')
    .execute();
}

export async function eventsOf(db: Db, paymentId: string) {
  const [statuses, channel] = await Promise.all([
    db
      .selectFrom('transaction_events')
      .select(['status', 'source', 'created_at'])
      .where('payment_id', '=', paymentId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('channel_events')
      .select(['provider', 'type', 'received_at', 'state'])
      .where('payment_id', '=', paymentId)
      .orderBy('id')
      .execute(),
  ]);
  return { statuses, channel };
}
