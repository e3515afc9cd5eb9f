/** SQL for wallets and ledger entries. Every balance change goes through these statements. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { insertRecords, jsonRecords } from '../db/json-records.ts';
import type { Tables, WalletTable } from '../db/schema.ts';

export interface LedgerLine {
  account: string;
  amount: number;
}

export interface Journal {
  journalId: string;
  kind: string;
  merchantId: string;
  currency: string;
  paymentId: string | null;
  lines: LedgerLine[];
}

/**
 * Writes one journal's entries (a top-up, a pay-in, a payout's outcome). A journal has two or three
 * lines, so the statement has only a few texts and binds its values directly: settlement measured
 * faster so than through the JSON parameter of `insertJournals` (git log), which is for batches.
 */
export async function insertJournal(db: Kysely<Tables>, journal: Journal, at: number): Promise<void> {
  await db
    .insertInto('ledger_entries')
    .values(entriesOf([journal], at))
    .execute();
}

function entriesOf(journals: Journal[], at: number) {
  return journals.flatMap((journal) =>
    journal.lines.map((line) => ({
      journal_id: journal.journalId,
      kind: journal.kind,
      merchant_id: journal.merchantId,
      currency: journal.currency,
      account: line.account,
      amount: line.amount,
      payment_id: journal.paymentId,
      created_at: at,
    })),
  );
}

const ENTRY_COLUMNS = {
  journal_id: 'text',
  kind: 'text',
  merchant_id: 'text',
  currency: 'text',
  account: 'text',
  amount: 'bigint',
  payment_id: 'text',
  created_at: 'bigint',
} as const;

/** Writes the entries of several journals in one statement. */
export async function insertJournals(db: Kysely<Tables>, journals: Journal[], at: number): Promise<void> {
  if (journals.length === 0) return;
  const entries = entriesOf(journals, at);
  await insertRecords(db, 'ledger_entries', entries, ENTRY_COLUMNS).execute(db);
}

export interface WalletKey {
  merchantId: string;
  currency: string;
}

/** The map key of a wallet in the functions below. */
export function walletKey(w: WalletKey): string {
  return `${w.merchantId}\u0000${w.currency}`;
}

/**
 * The available balances of wallets, read for an update within the caller's transaction: on
 * PostgreSQL the rows stay locked until that transaction ends, taken in one fixed order (merchant,
 * currency) so that transactions locking several wallets never deadlock; on SQLite the transaction
 * already holds the database's one write lock. A wallet that does not exist yet has 0.
 */
export async function lockAvailable(
  db: Kysely<Tables>,
  locks: Pick<Database, 'lockRows'>,
  wallets: WalletKey[],
): Promise<Map<string, number>> {
  if (wallets.length === 0) return new Map();
  return balancesOf(await locks.lockRows(walletsToLock(db, wallets), 'wait').execute());
}

/** The selection `lockAvailable` locks: the wallets' rows, in the order they are locked in. */
export function walletsToLock(db: Kysely<Tables>, wallets: WalletKey[]) {
  return db
    .selectFrom('wallets')
    .select(['merchant_id', 'currency', 'available'])
    .where('merchant_id', 'in', [...new Set(wallets.map((w) => w.merchantId))])
    .where('currency', 'in', [...new Set(wallets.map((w) => w.currency))])
    .orderBy('merchant_id')
    .orderBy('currency');
}

/** Available balances by `walletKey`, from rows of `walletsToLock`. */
export function balancesOf(
  rows: readonly Pick<WalletTable, 'merchant_id' | 'currency' | 'available'>[],
): Map<string, number> {
  const balances = new Map<string, number>();
  for (const r of rows)
    balances.set(walletKey({ merchantId: r.merchant_id, currency: r.currency }), r.available);
  return balances;
}

/**
 * Moves each wallet's `amount` from available to held, in one statement, only where available
 * covers it. Returns how many wallets were updated (all of them, unless a balance fell short).
 */
export async function moveToHeldMany(
  db: Kysely<Tables>,
  moves: (WalletKey & { amount: number })[],
  at: number,
): Promise<number> {
  if (moves.length === 0) return 0;
  const rows = moves.map((m) => ({
    move_merchant: m.merchantId,
    move_currency: m.currency,
    amount: m.amount,
  }));
  const columns = { move_merchant: 'text', move_currency: 'text', amount: 'bigint' } as const;
  const result = await sql<{ merchant_id: string }>`
    update wallets as w
    set available = available - v.amount, held = held + v.amount, updated_at = ${at}
    from ${jsonRecords(db, rows, columns)} as v
    where w.merchant_id = v.move_merchant and w.currency = v.move_currency and w.available >= v.amount
    returning merchant_id`.execute(db);
  return result.rows.length;
}

/** Adds to `available`, creating the wallet on first use. */
export async function addAvailable(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  at: number,
  limit: number,
): Promise<boolean> {
  if (amount > limit) return false;
  const result = await db
    .insertInto('wallets')
    .values({ merchant_id: merchantId, currency, available: amount, held: 0, updated_at: at })
    .onConflict((oc) =>
      oc
        .columns(['merchant_id', 'currency'])
        .doUpdateSet({
          available: sql`wallets.available + excluded.available`,
          updated_at: sql`excluded.updated_at`,
        })
        // Available and held together: a hold returned to available must not pass the limit either.
        .where(sql<boolean>`wallets.available + wallets.held <= ${limit} - excluded.available`),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** Adds to `held` what no balance of the merchant's covered (a lost dispute's refund that its debt pays). */
export async function addHeld(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  at: number,
): Promise<void> {
  await db
    .insertInto('wallets')
    .values({ merchant_id: merchantId, currency, available: 0, held: amount, updated_at: at })
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'currency']).doUpdateSet({
        held: sql`wallets.held + excluded.held`,
        updated_at: sql`excluded.updated_at`,
      }),
    )
    .execute();
}

/** Takes `amount` out of held, and puts `returned` of it back into available. */
export async function releaseHeld(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  returned: number,
  at: number,
): Promise<void> {
  const result = await db
    .updateTable('wallets')
    .set({
      held: sql`held - ${amount}`,
      available: returned > 0 ? sql`available + ${returned}` : sql`available`,
      updated_at: at,
    })
    .where('merchant_id', '=', merchantId)
    .where('currency', '=', currency)
    .where('held', '>=', amount)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) {
    throw new Error(`held balance of merchant ${merchantId} does not cover a release of ${amount} paise`);
  }
}

export async function findWallet(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
): Promise<WalletTable | undefined> {
  return db
    .selectFrom('wallets')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('currency', '=', currency)
    .executeTakeFirst();
}

/** Journals whose entries do not add up to zero. */
export async function unbalancedJournals(
  db: Kysely<Tables>,
): Promise<{ journal_id: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['journal_id', sql<string>`cast(sum(amount) as text)`.as('total')])
    .groupBy('journal_id')
    .having((eb) => eb.fn.sum('amount'), '<>', 0)
    .execute();
  return rows.map((r) => ({ journal_id: r.journal_id, total: BigInt(r.total) }));
}

export async function countJournals(db: Kysely<Tables>): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.count<number | string>('journal_id').distinct().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sum of entries per merchant wallet account (available, held). */
export async function walletAccountSums(
  db: Kysely<Tables>,
): Promise<{ merchant_id: string; currency: string; account: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['merchant_id', 'currency', 'account', sql<string>`cast(sum(amount) as text)`.as('total')])
    .where('account', 'in', ['available', 'held'])
    .groupBy(['merchant_id', 'currency', 'account'])
    .execute();
  return rows.map((r) => ({ ...r, total: BigInt(r.total) }));
}

/**
 * Every wallet's balances as exact integers: read as text, since a JavaScript number would round a
 * balance past 2^53 and `ledger verify` must see any drift, however it came about.
 */
export async function exactWallets(
  db: Kysely<Tables>,
): Promise<{ merchant_id: string; currency: string; available: bigint; held: bigint }[]> {
  const rows = await db
    .selectFrom('wallets')
    .select([
      'merchant_id',
      'currency',
      sql<string>`cast(available as text)`.as('available'),
      sql<string>`cast(held as text)`.as('held'),
    ])
    .orderBy('merchant_id')
    .orderBy('currency')
    .execute();
  return rows.map((r) => ({ ...r, available: BigInt(r.available), held: BigInt(r.held) }));
}

/** Takes `amount` out of `available` when it covers it; false (nothing changed) when it does not. */
export async function takeAvailable(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('wallets')
    .set({ available: sql`available - ${amount}`, updated_at: at })
    .where('merchant_id', '=', merchantId)
    .where('currency', '=', currency)
    .where('available', '>=', amount)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Sum of the entries of each external account given, per currency (as text: exact past 2^53). */
export async function externalAccountSums(
  db: Kysely<Tables>,
  accounts: string[],
): Promise<{ account: string; currency: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['account', 'currency', sql<string>`cast(sum(amount) as text)`.as('total')])
    .where('account', 'in', accounts)
    .groupBy(['account', 'currency'])
    .execute();
  return rows.map((r) => ({ ...r, total: BigInt(r.total) }));
}

/** Sum of the entries of journals of `kinds` on one account, per currency (as text: exact past 2^53). */
export async function journalKindSums(
  db: Kysely<Tables>,
  account: string,
  kinds: string[],
): Promise<{ currency: string; total: bigint }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['currency', sql<string>`cast(sum(amount) as text)`.as('total')])
    .where('account', '=', account)
    .where('kind', 'in', kinds)
    .groupBy('currency')
    .execute();
  return rows.map((r) => ({ currency: r.currency, total: BigInt(r.total) }));
}
