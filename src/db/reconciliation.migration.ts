/**
 * Reconciliation: each run per IST day and channel, each difference found (one per channel, provider
 * reference, field and provider's value, whichever run sees it first), and the lease that lets one
 * process of a cluster run the day's reconciliation of a channel.
 */
import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely';
import type { DatabaseKind } from './kind.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export function reconciliation(kind: DatabaseKind): Migration {
  const serial = kind === 'postgres' ? 'bigserial' : 'integer';
  const id = (c: ColumnDefinitionBuilder) =>
    kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('reconcile_runs')
        .addColumn('id', serial, id)
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('finished_at', 'bigint')
        .addColumn('checked', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('matched', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('mismatched', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('unreadable', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('reconcile_runs_date')
        .on('reconcile_runs')
        .columns(['date', 'id'])
        .execute();

      await db.schema
        .createTable('reconcile_mismatches')
        .addColumn('id', serial, id)
        .addColumn('run_id', 'bigint', (c) => c.notNull().references('reconcile_runs.id'))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('reference', 'text', (c) => c.notNull())
        .addColumn('field', 'text', (c) => c.notNull())
        .addColumn('provider_value', 'text', (c) => c.notNull())
        .addColumn('paygate_value', 'text', (c) => c.notNull())
        .addColumn('payment_id', 'text')
        .addColumn('exception_id', 'bigint', (c) => c.notNull().references('channel_exceptions.id'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('reconcile_mismatches_one', ['channel', 'reference', 'field', 'provider_value'])
        .execute();
      await db.schema
        .createIndex('reconcile_mismatches_run')
        .on('reconcile_mismatches')
        .columns(['run_id', 'id'])
        .execute();

      await db.schema
        .createTable('reconcile_leases')
        .addColumn('date', 'text', (c) => c.notNull())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('lease_until', 'bigint', (c) => c.notNull())
        .addColumn('done_at', 'bigint')
        .addPrimaryKeyConstraint('reconcile_leases_pk', ['date', 'channel'])
        .execute();

      // A day's transactions of a channel, and those of any day still open.
      await db.schema
        .createIndex('transactions_channel_created')
        .on('transactions')
        .columns(['channel', 'created_at', 'payment_id'])
        .execute();
      await db.schema
        .createIndex('transactions_channel_status')
        .on('transactions')
        .columns(['channel', 'status', 'payment_id'])
        .execute();
    },
  };
}
