/**
 * Refunds are transactions of a third kind: a refund's row names the pay-in it refunds
 * (`refund_of`) and the merchant's reason; its `merchant_order_no` holds the merchant_refund_no, so
 * the same unique key makes refund numbers unique per merchant. The kind's CHECK constraint gains
 * `refund`: PostgreSQL replaces the constraint; SQLite cannot alter one, so the table is rebuilt
 * from its own stored definition (every column and index it has, whoever added them).
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DatabaseKind } from './kind.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const OLD_CHECK = "kind in ('payin', 'payout')";
const NEW_CHECK = "kind in ('payin', 'payout', 'refund')";

async function widenKindPostgres(db: AnyDb): Promise<void> {
  await sql`alter table transactions drop constraint transactions_kind_check`.execute(db);
  await sql`alter table transactions add constraint transactions_kind_check check (${sql.raw(NEW_CHECK)})`.execute(
    db,
  );
}

/**
 * SQLite's documented way to change a constraint: a new table from the old definition, the rows
 * copied over. It runs inside the transaction `migrate` holds on SQLite (BEGIN IMMEDIATE), so a
 * failure leaves the old table as it was.
 */
async function widenKindSqlite(tx: AnyDb): Promise<void> {
  const table = await sql<{ sql: string }>`
      select sql from sqlite_master where type = 'table' and name = 'transactions'`.execute(tx);
  const definition = table.rows[0]?.sql ?? '';
  if (!definition.includes(OLD_CHECK)) throw new Error('transactions: kind constraint not found');
  const renamed = definition
    .replace(/^create table "?transactions"?/i, 'create table "transactions_refunds"')
    .replace(OLD_CHECK, NEW_CHECK);
  const indexes = await sql<{ sql: string }>`
      select sql from sqlite_master
      where type = 'index' and tbl_name = 'transactions' and sql is not null`.execute(tx);
  await sql.raw(renamed).execute(tx);
  await sql`insert into transactions_refunds select * from transactions`.execute(tx);
  await sql`drop table transactions`.execute(tx);
  await sql`alter table transactions_refunds rename to transactions`.execute(tx);
  for (const index of indexes.rows) await sql.raw(index.sql).execute(tx);
}

export function refunds(kind: DatabaseKind): Migration {
  return {
    async up(db: AnyDb) {
      if (kind === 'postgres') await widenKindPostgres(db);
      else await widenKindSqlite(db);
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('transactions').addColumn('refund_of', 'text').execute();
      await db.schema.alterTable('transactions').addColumn('reason', 'text').execute();
      // The refunds of a pay-in: what is left to refund, and the list on the pay-in's page.
      await db.schema
        .createIndex('transactions_refund_of')
        .on('transactions')
        .columns(['refund_of', 'status'])
        .where(sql.ref('refund_of'), 'is not', null)
        .execute();
    },
  };
}
