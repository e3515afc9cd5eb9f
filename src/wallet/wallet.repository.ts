/** SQL for wallets and ledger entries. Every balance change goes through these statements. */
import { sql, type Kysely } from 'kysely';
import type { DatabaseKind } from '../db/database.ts';
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

export async function insertJournal(db: Kysely<Tables>, journal: Journal, at: number): Promise<void> {
  await insertJournals(db, [journal], at);
}

/** Writes the entries of several journals in one statement. */
export async function insertJournals(db: Kysely<Tables>, journals: Journal[], at: number): Promise<void> {
  if (journals.length === 0) return;
  await db
    .insertInto('ledger_entries')
    .values(
      journals.flatMap((journal) =>
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
      ),
    )
    .execute();
}

/**
 * The available balance of a wallet, read for an update within the caller's transaction: on
 * PostgreSQL the row stays locked until that transaction ends; on SQLite the transaction already
 * holds the database's one write lock. 0 when the wallet does not exist yet.
 */
export async function lockAvailable(
  db: Kysely<Tables>,
  kind: DatabaseKind,
  merchantId: string,
  currency: string,
): Promise<number> {
  const query = db
    .selectFrom('wallets')
    .select('available')
    .where('merchant_id', '=', merchantId)
    .where('currency', '=', currency);
  const row = await (kind === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  return row?.available ?? 0;
}

/** Adds to `available`, creating the wallet on first use. */
export async function addAvailable(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  at: number,
): Promise<void> {
  await db
    .insertInto('wallets')
    .values({ merchant_id: merchantId, currency, available: amount, held: 0, updated_at: at })
    .onConflict((oc) =>
      oc.columns(['merchant_id', 'currency']).doUpdateSet({
        available: sql`wallets.available + excluded.available`,
        updated_at: sql`excluded.updated_at`,
      }),
    )
    .execute();
}

/**
 * Moves `amount` from available to held only if available covers it: one conditional update,
 * so no interleaving of concurrent payouts can overdraw. Returns false when it does not cover it.
 */
export async function moveToHeld(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  at: number,
): Promise<boolean> {
  const result = await db
    .updateTable('wallets')
    .set({
      available: sql`available - ${amount}`,
      held: sql`held + ${amount}`,
      updated_at: at,
    })
    .where('merchant_id', '=', merchantId)
    .where('currency', '=', currency)
    .where('available', '>=', amount)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Takes `amount` out of held, and puts it back into available when `toAvailable`. */
export async function releaseHeld(
  db: Kysely<Tables>,
  merchantId: string,
  currency: string,
  amount: number,
  toAvailable: boolean,
  at: number,
): Promise<void> {
  const result = await db
    .updateTable('wallets')
    .set({
      held: sql`held - ${amount}`,
      available: toAvailable ? sql`available + ${amount}` : sql`available`,
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

export async function listWallets(db: Kysely<Tables>): Promise<WalletTable[]> {
  return db.selectFrom('wallets').selectAll().orderBy('merchant_id').orderBy('currency').execute();
}

/** Journals whose entries do not add up to zero. */
export async function unbalancedJournals(
  db: Kysely<Tables>,
): Promise<{ journal_id: string; total: number }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['journal_id', (eb) => eb.fn.sum<number | string>('amount').as('total')])
    .groupBy('journal_id')
    .having((eb) => eb.fn.sum('amount'), '<>', 0)
    .execute();
  return rows.map((r) => ({ journal_id: r.journal_id, total: Number(r.total) }));
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
): Promise<{ merchant_id: string; currency: string; account: string; total: number }[]> {
  const rows = await db
    .selectFrom('ledger_entries')
    .select(['merchant_id', 'currency', 'account', (eb) => eb.fn.sum<number | string>('amount').as('total')])
    .where('account', 'in', ['available', 'held'])
    .groupBy(['merchant_id', 'currency', 'account'])
    .execute();
  return rows.map((r) => ({ ...r, total: Number(r.total) }));
}
