/** SQL for refunds: the pay-ins they draw on, with what each has refunded so far. */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables, WalletTable } from '../db/schema.ts';
import { balancesOf, walletsToLock, type WalletKey } from '../wallet/wallet.repository.ts';
import { namedPaymentIds, type TransactionRow } from '../transactions/transactions.repository.ts';
import { REFUND_ID_PREFIX } from '../ids.ts';

/** What a refund is checked against and copies from the pay-in it returns. */
export const REFUNDED_PAYIN_COLUMNS = [
  'payment_id',
  'kind',
  'merchant_id',
  'status',
  'amount',
  'currency',
  'channel',
  'user_name',
  'user_phone',
  'user_email',
  'callback_url',
  'channel_payment_id',
  'channel_payment_txn_id',
] as const;

export type RefundedPayin = Pick<TransactionRow, (typeof REFUNDED_PAYIN_COLUMNS)[number]> & {
  /** Whether a customer's dispute of it is open (true or 1; the databases differ): it cannot be refunded. */
  disputed: boolean | number;
};

/** A pay-in as a refund reads it, with what its refunds that are not FAILED add up to (paise). */
export type RefundablePayin = RefundedPayin & { refunded: number };

/** The pay-ins' own rows, as a refund reads them, without their refunds. */
export async function readPayins(db: Kysely<Tables>, paymentIds: string[]): Promise<RefundedPayin[]> {
  const named = namedPaymentIds(db, paymentIds);
  return named ? payinsQuery(db, named).execute() : [];
}

/** The pay-ins' rows, each with whether a dispute of it is open (the `disputes` index on `payin_id`, `0022_disputes`). */
function payinsQuery(db: Kysely<Tables>, named: RawBuilder<string>) {
  const disputed = sql<boolean>`exists (select 1 from disputes d
    where d.payin_id = transactions.payment_id and d.status = 'open')`;
  return db
    .selectFrom('transactions')
    .select(REFUNDED_PAYIN_COLUMNS)
    .select(disputed.as('disputed'))
    .where('payment_id', 'in', named)
    .where('kind', '=', 'payin');
}

/**
 * PostgreSQL: the wallets that refunds draw on, locked as `lockAvailable` locks them, with the
 * pay-ins of `paymentIds` and what their refunds that are not FAILED add up to, in one statement:
 * each statement of a refund batch is a round trip that every request of the batch waits out, and
 * this one makes a refund batch as many as a payout batch.
 *
 * That statement's snapshot is taken before its lock is granted: when the lock had to wait for
 * another transaction, that transaction may have added refunds since, or settled a pay-in. Every
 * transaction that changes what a pay-in's refunds add up to also updates its wallet (a refund's
 * hold, the release of a FAILED one), as a pay-in's settlement does (its credit). So the statement
 * also reads each wallet's version (`xmin`) as locked and as its snapshot saw it; when the two
 * differ, the pay-ins and their sums are read again in statements of their own, whose snapshots
 * follow the lock.
 */
export async function lockWithPayins(
  tx: Kysely<Tables>,
  wallets: WalletKey[],
  paymentIds: string[],
): Promise<{ balances: Map<string, number>; payins: RefundedPayin[]; refunded: Map<string, number> }> {
  if (wallets.length === 0) return { balances: new Map(), payins: [], refunded: new Map() };
  const named = namedPaymentIds(tx, paymentIds);
  const locked = walletsToLock(tx, wallets)
    .select([
      sql<string>`wallets.xmin::text`.as('locked_version'),
      sql<string>`(select seen.xmin::text from wallets as seen
        where seen.merchant_id = wallets.merchant_id and seen.currency = wallets.currency)`.as(
        'seen_version',
      ),
    ])
    .forUpdate();
  type Locked = Pick<WalletTable, 'merchant_id' | 'currency' | 'available'> & {
    locked_version: string;
    seen_version: string;
  };
  const payins = named
    ? sql`(select coalesce(json_agg(p), '[]') from (${payinsQuery(tx, named)}) as p)`
    : sql`'[]'::json`;
  const sums = named
    ? sql`(select coalesce(json_agg(s), '[]') from (${refundedQuery(named)}) as s)`
    : sql`'[]'::json`;
  const { rows } = await sql<{ wallets: Locked[]; payins: RefundedPayin[]; refunded: Refunded[] }>`
    with locked as materialized (${locked})
    select (select coalesce(json_agg(locked), '[]') from locked) as wallets,
      ${payins} as payins, ${sums} as refunded`.execute(tx);
  const { wallets: lockedRows = [], payins: found = [], refunded: seen = [] } = rows[0] ?? {};
  const balances = balancesOf(lockedRows);
  if (lockedRows.some((w) => w.locked_version !== w.seen_version))
    return { balances, payins: await readPayins(tx, paymentIds), refunded: await refundedOf(tx, paymentIds) };
  return { balances, payins: found, refunded: totalsOf(seen) };
}

/**
 * What the refunds of each of `paymentIds` that are not FAILED add up to (paise), in a statement
 * of its own. Read after the lock of every wallet these pay-ins' refunds draw on (every refund of a
 * pay-in is written under its wallet's lock), it includes each refund committed before that lock.
 */
export async function refundedOf(db: Kysely<Tables>, paymentIds: string[]): Promise<Map<string, number>> {
  const named = namedPaymentIds(db, paymentIds);
  return named ? totalsOf((await refundedQuery(named).execute(db)).rows) : new Map();
}

function totalsOf(rows: readonly Refunded[]): Map<string, number> {
  return new Map(rows.map((r) => [r.refund_of, Number(r.total ?? 0)]));
}

interface Refunded {
  refund_of: string;
  /** Paise, as text: a sum is numeric in PostgreSQL. */
  total: string;
}

/**
 * Where the refunds of the pay-in `payinId` (an SQL expression) are, as rows of `transactions as
 * r`: those whose id begins with the pay-in's (`newRefundId`) are a range of the primary key next
 * to the pay-in's own entry; those made before refund ids did are found through the index that
 * holds only them (`0018_refund_ids`). The two never share a row.
 *
 * The range holds every id of the prefix followed by 12 of [0-9A-Za-z] in byte order and in any
 * collation that sorts digits before letters and compares case last (PostgreSQL's locales and
 * ICU's): from the prefix and "0" to the prefix and 13 "z".
 */
function refundsOfPayin(payinId: RawBuilder<string>): [RawBuilder<boolean>, RawBuilder<boolean>] {
  const n = sql.lit(REFUND_ID_PREFIX);
  const prefix = sql`substr(${payinId}, 1, ${n})`;
  const same = sql`substr(r.payment_id, 1, ${n}) = substr(r.refund_of, 1, ${n})`;
  const last = sql.lit('z'.repeat(32 - REFUND_ID_PREFIX + 1));
  return [
    sql`r.payment_id >= ${prefix} || '0' and r.payment_id <= ${prefix} || ${last}
      and r.refund_of = ${payinId} and ${same}`,
    sql`r.refund_of = ${payinId} and substr(r.payment_id, 1, ${n}) <> substr(r.refund_of, 1, ${n})`,
  ];
}

/** What the refunds of each named pay-in that are not FAILED add up to. */
function refundedQuery(named: RawBuilder<string>) {
  const [near, apart] = refundsOfPayin(sql<string>`ids.named_payment_id`);
  const sum = (where: RawBuilder<boolean>) =>
    sql`(select coalesce(sum(r.amount), 0) from transactions as r where ${where} and r.status <> 'FAILED')`;
  return sql<Refunded>`select ids.named_payment_id as refund_of,
      cast(${sum(near)} + ${sum(apart)} as text) as total
    from ${named} as ids`;
}

/** The refunds of a pay-in, oldest first. */
export async function refundsOf(db: Kysely<Tables>, paymentId: string): Promise<TransactionRow[]> {
  const [near, apart] = refundsOfPayin(sql<string>`${paymentId}`);
  const { rows } = await sql<TransactionRow>`select r.* from transactions as r where ${near}
    union all select r.* from transactions as r where ${apart}
    order by created_at, payment_id`.execute(db);
  return rows;
}
