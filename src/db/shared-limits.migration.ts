/**
 * The providers' call limits are the whole cluster's (CONTRACT §10): on PostgreSQL the processes
 * take their turns to call a provider from one row per provider (`channel-turns.ts`), which also
 * holds the provider's pause after a 429 and its back-off while it answers every call with 5xx.
 * SQLite serves one process, whose limiter stays in memory; the table is made there too, unused.
 * A transaction's reads that failed in a row are counted (`read_failures`), so that each is read
 * again after a wait that doubles, whichever process reads it.
 */
import { type Kysely, type Migration } from 'kysely';

export function sharedLimits(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('channel_limits')
        .addColumn('channel', 'text', (c) => c.primaryKey())
        .addColumn('next_turn_at', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('paused_until', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('backoff_ms', 'double precision', (c) => c.notNull().defaultTo(0))
        .addColumn('backoff_at', 'double precision', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('transactions')
        .addColumn('read_failures', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
