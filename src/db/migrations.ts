/**
 * The one set of migrations for SQLite and PostgreSQL. Each is written with kysely's schema
 * builder; the only dialect difference is how an auto-increment key is spelled.
 */
import { sql, type ColumnDefinitionBuilder, type Kysely, type Migration } from 'kysely';
import type { DatabaseKind } from './kind.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

function initial(kind: DatabaseKind): Migration {
  const serial = kind === 'postgres' ? 'bigserial' : 'integer';
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('merchants')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test', 'live')`))
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
        .addColumn('callback_url', 'text')
        .addColumn('vpa', 'text', (c) => c.notNull())
        .addColumn('webhook_secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('key_prefix', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_merchant').on('api_keys').column('merchant_id').execute();

      await db.schema
        .createTable('wallets')
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('available', 'bigint', (c) =>
          c
            .notNull()
            .defaultTo(0)
            .check(sql`available >= 0`),
        )
        .addColumn('held', 'bigint', (c) =>
          c
            .notNull()
            .defaultTo(0)
            .check(sql`held >= 0`),
        )
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('wallets_pk', ['merchant_id', 'currency'])
        .execute();

      await db.schema
        .createTable('ledger_entries')
        .addColumn('id', serial, (c) =>
          kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('journal_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('account', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('payment_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('ledger_entries_journal')
        .on('ledger_entries')
        .column('journal_id')
        .execute();
      await db.schema
        .createIndex('ledger_entries_wallet')
        .on('ledger_entries')
        .columns(['merchant_id', 'currency', 'account'])
        .execute();

      await db.schema
        .createTable('transactions')
        .addColumn('payment_id', 'text', (c) => c.primaryKey())
        .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('payin', 'payout')`))
        .addColumn('flow', 'text', (c) => c.notNull())
        .addColumn('merchant_order_no', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('PENDING', 'PROCESSING', 'SUCCESS', 'FAILED')`),
        )
        .addColumn('utr', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('channel_txn_id', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('user_name', 'text')
        .addColumn('user_phone', 'text')
        .addColumn('user_email', 'text')
        .addColumn('callback_url', 'text')
        .addColumn('redirect_url', 'text')
        .addColumn('receiver_name', 'text')
        .addColumn('receiver_account_no', 'text')
        .addColumn('receiver_ifsc', 'text')
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('response_json', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('next_action_at', 'bigint')
        .addColumn('lease_until', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('finalized_at', 'bigint')
        .addUniqueConstraint('transactions_order_no', ['merchant_id', 'kind', 'merchant_order_no'])
        .execute();
      await db.schema
        .createIndex('transactions_expiry')
        .on('transactions')
        .columns(['status', 'expires_at'])
        .execute();
      await db.schema
        .createIndex('transactions_next_action')
        .on('transactions')
        .columns(['status', 'next_action_at'])
        .execute();

      await db.schema
        .createTable('transaction_events')
        .addColumn('id', serial, (c) =>
          kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('payment_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('transaction_events_payment')
        .on('transaction_events')
        .column('payment_id')
        .execute();

      await db.schema
        .createTable('callback_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('payment_id', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) =>
          c.notNull().check(sql`status in ('pending', 'delivered', 'failed')`),
        )
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint')
        .addColumn('lease_until', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addColumn('delivered_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('callback_deliveries_due')
        .on('callback_deliveries')
        .columns(['status', 'next_attempt_at'])
        .execute();
      await db.schema
        .createIndex('callback_deliveries_payment')
        .on('callback_deliveries')
        .column('payment_id')
        .execute();

      await db.schema
        .createTable('callback_attempts')
        .addColumn('id', serial, (c) =>
          kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        .addColumn('attempt_no', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('http_status', 'integer')
        .addColumn('error_kind', 'text')
        .addColumn('response_snippet', 'text')
        .execute();
      await db.schema
        .createIndex('callback_attempts_delivery')
        .on('callback_attempts')
        .column('delivery_id')
        .execute();
    },
  };
}

/** Live channels: what a channel handed out and was sent, its notifications and its exceptions. */
function liveChannels(kind: DatabaseKind): Migration {
  const serial = kind === 'postgres' ? 'bigserial' : 'integer';
  return {
    async up(db: AnyDb) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('transactions').addColumn('upi_intent', 'text').execute();
      await db.schema
        .alterTable('transactions')
        .addColumn('submit_attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('transactions').addColumn('reversed_at', 'bigint').execute();

      await db.schema
        .createTable('channel_events')
        .addColumn('id', serial, (c) =>
          kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('payment_id', 'text')
        .addColumn('reference', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'applied')`))
        .addColumn('next_action_at', 'bigint')
        .addColumn('lease_until', 'bigint')
        .addColumn('received_at', 'bigint', (c) => c.notNull())
        .addColumn('applied_at', 'bigint')
        .addUniqueConstraint('channel_events_event', ['provider', 'event_id'])
        .execute();
      await db.schema
        .createIndex('channel_events_due')
        .on('channel_events')
        .columns(['state', 'next_action_at'])
        .execute();
      await db.schema
        .createIndex('channel_events_payment')
        .on('channel_events')
        .column('payment_id')
        .execute();

      await db.schema
        .createTable('channel_exceptions')
        .addColumn('id', serial, (c) =>
          kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('payment_id', 'text')
        .addColumn('reference', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint')
        .addColumn('detail', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('channel_exceptions_one', ['kind', 'provider', 'reference'])
        .execute();
    },
  };
}

/** The dashboard: users, sessions, the audit log, and the indexes its lists and searches use. */
function dashboard(kind: DatabaseKind): Migration {
  const serial = kind === 'postgres' ? 'bigserial' : 'integer';
  const id = (c: ColumnDefinitionBuilder) =>
    kind === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement();
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('merchant', 'operator')`))
        .addColumn('merchant_id', 'text', (c) => c.references('merchants.id'))
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addCheckConstraint('users_merchant', sql`(role = 'merchant') = (merchant_id is not null)`)
        .execute();

      await db.schema
        .createTable('sessions')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();

      await db.schema
        .createTable('sign_in_failures')
        .addColumn('id', serial, id)
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('sign_in_failures_scope')
        .on('sign_in_failures')
        .columns(['scope', 'at'])
        .execute();

      await db.schema
        .createTable('audit_actions')
        .addColumn('id', serial, id)
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('merchant_id', 'text')
        .addColumn('detail', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('audit_actions_merchant')
        .on('audit_actions')
        .columns(['merchant_id', 'id'])
        .execute();

      // The transactions list: newest first, by merchant or across all, and by kind and status
      // (with the amount, so that an amount range is checked in the index, not row by row).
      await db.schema
        .createIndex('transactions_merchant_created')
        .on('transactions')
        .columns(['merchant_id', 'created_at', 'payment_id'])
        .execute();
      await db.schema
        .createIndex('transactions_merchant_kind_status')
        .on('transactions')
        .columns(['merchant_id', 'kind', 'status', 'created_at', 'payment_id', 'amount'])
        .execute();
      await db.schema
        .createIndex('transactions_created')
        .on('transactions')
        .columns(['created_at', 'payment_id'])
        .execute();
      await db.schema.createIndex('transactions_utr').on('transactions').column('utr').execute();
    },
  };
}

/**
 * The clean-up on each sign-in (idle sessions, failures out of the window) finds its rows by time;
 * a form that moves money is taken once (`forms_taken`: its one-time id, and when).
 */
function dashboardHardening(): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('sessions_last_seen').on('sessions').column('last_seen_at').execute();
      await db.schema.createIndex('sign_in_failures_at').on('sign_in_failures').column('at').execute();
      await db.schema
        .createTable('forms_taken')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('forms_taken_at').on('forms_taken').column('at').execute();
    },
  };
}

/** The owner of a claim's lease (`claim.ts`), so that a claim whose answer was lost can be given back. */
function outageRecovery(): Migration {
  return {
    async up(db) {
      for (const table of ['transactions', 'callback_deliveries'])
        await db.schema.alterTable(table).addColumn('lease_owner', 'text').execute();
    },
  };
}

/**
 * The console's list index leads with (merchant, status, kind) instead of (merchant, kind, status):
 * it serves the same lists, and no longer matches the two leading columns of the order-number key,
 * with which PostgreSQL's planner found it equally cheap for a replay's lookup before the table had
 * statistics (docs/performance.md, Query plans).
 */
function hotPathPlans(): Migration {
  return {
    async up(db) {
      await db.schema
        .createIndex('transactions_merchant_status_kind')
        .on('transactions')
        .columns(['merchant_id', 'status', 'kind', 'created_at', 'payment_id', 'amount'])
        .execute();
      await db.schema.dropIndex('transactions_merchant_kind_status').execute();
    },
  };
}

/** The migrations written in this file, by name (`migration-provider.ts` adds the others). */
export function coreMigrations(kind: DatabaseKind): Record<string, Migration> {
  return {
    '0001_initial': initial(kind),
    '0002_live_channels': liveChannels(kind),
    '0003_dashboard': dashboard(kind),
    '0004_dashboard_hardening': dashboardHardening(),
    '0005_hot_path_plans': hotPathPlans(),
    '0010_outage_recovery': outageRecovery(),
  };
}
