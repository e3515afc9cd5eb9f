/**
 * Migration 0020_intake, listed in `migration-provider.ts`: notifications that cannot be starved or
 * jammed (CONTRACT §10). A stored notification may end `failed` (it could not be applied after a
 * bounded number of tries: an exception says so) and counts its tries; a body whose bytes the text
 * columns cannot hold exactly (a 0x00 byte, bytes that are not UTF-8) keeps them in `raw_base64`.
 * The state's CHECK constraint gains `failed`: PostgreSQL replaces the constraint; SQLite cannot
 * alter one, so the table is rebuilt from its own stored definition (as `refunds.migration.ts`
 * does). The alarms that are one while open (`signature_failures`, `channel_silent`) are kept so by
 * a unique index over the open ones, whichever process opens them.
 */
import { sql, type Kysely, type Migration } from 'kysely';
import type { DatabaseKind } from './kind.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const OLD_CHECK = "state in ('pending', 'applied')";
const NEW_CHECK = "state in ('pending', 'applied', 'failed')";

async function widenStatePostgres(db: AnyDb): Promise<void> {
  await sql`alter table channel_events drop constraint channel_events_state_check`.execute(db);
  await sql`alter table channel_events add constraint channel_events_state_check check (${sql.raw(NEW_CHECK)})`.execute(
    db,
  );
}

/** SQLite's documented way to change a constraint: a new table from the old definition, the rows copied over. */
async function widenStateSqlite(tx: AnyDb): Promise<void> {
  const table = await sql<{ sql: string }>`
      select sql from sqlite_master where type = 'table' and name = 'channel_events'`.execute(tx);
  const definition = table.rows[0]?.sql ?? '';
  if (!definition.includes(OLD_CHECK)) throw new Error('channel_events: state constraint not found');
  const renamed = definition
    .replace(/^create table "?channel_events"?/i, 'create table "channel_events_intake"')
    .replace(OLD_CHECK, NEW_CHECK);
  const indexes = await sql<{ sql: string }>`
      select sql from sqlite_master
      where type = 'index' and tbl_name = 'channel_events' and sql is not null`.execute(tx);
  await sql.raw(renamed).execute(tx);
  await sql`insert into channel_events_intake select * from channel_events`.execute(tx);
  await sql`drop table channel_events`.execute(tx);
  await sql`alter table channel_events_intake rename to channel_events`.execute(tx);
  for (const index of indexes.rows) await sql.raw(index.sql).execute(tx);
}

export function intake(kind: DatabaseKind): Migration {
  return {
    async up(db: AnyDb) {
      if (kind === 'postgres') await widenStatePostgres(db);
      else await widenStateSqlite(db);
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('channel_events').addColumn('raw_base64', 'text').execute();
      await db.schema
        .alterTable('channel_events')
        .addColumn('apply_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`create unique index channel_exceptions_open_alarm on channel_exceptions (kind, provider)
        where resolved_at is null and kind in ('signature_failures', 'channel_silent')`.execute(db);
    },
  };
}
