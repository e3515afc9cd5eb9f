/** SQL for refunds: the pay-ins they draw on, with what each has refunded so far. */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables, WalletTable } from '../db/schema.ts';
import { balancesOf, walletsToLock, type WalletKey } from '../wallet/wallet.repository.ts';
import { namedPaymentIds, type TransactionRow } from '../transactions/transactions.repository.ts';

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

export type RefundedPayin = Pick<TransactionRow, (typeof REFUNDED_PAYIN_COLUMNS)[number]>;

/** A pay-in as a refund reads it, with what its refunds that are not FAILED add up to (paise). */
export type RefundablePayin = RefundedPayin & { refunded: number };

/** The pay-ins' own rows, as a refund reads them, without their refunds. */
export async function readPayins(db: Kysely<Tables>, paymentIds: string[]): Promise<RefundedPayin[]> {
  const named = namedPaymentIds(db, paymentIds);
  return named ? payinsQuery(db, named).execute() : [];
}

function payinsQuery(db: Kysely<Tables>, named: RawBuilder<string>) {
  return db
    .selectFrom('transactions')
    .select(REFUNDED_PAYIN_COLUMNS)
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
 * What the refunds of each named pay-in that are not FAILED add up to: a sum per pay-in, each
 * through the `refund_of` index (grouping the refunds of all the pay-ins at once lets the planner
 * read the whole index when its statistics say there are few refunds).
 */
function refundedQuery(named: RawBuilder<string>) {
  return sql<Refunded>`select ids.named_payment_id as refund_of,
      (select cast(coalesce(sum(r.amount), 0) as text) from transactions as r
        where r.refund_of = ids.named_payment_id and r.status <> 'FAILED') as total
    from ${named} as ids`;
}

/** The refunds of a pay-in, oldest first. */
export async function refundsOf(db: Kysely<Tables>, paymentId: string) {
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('refund_of', '=', paymentId)
    .orderBy('created_at')
    .orderBy('payment_id')
    .execute();
}
