/**
 * Migration 0024_console_attention, listed in `migration-provider.ts`: what the console reads of a
 * merchant's troubles. The callbacks that failed every attempt, per merchant, through a partial index
 * that holds only failed deliveries (a delivery is written pending and enters it only when it fails,
 * so the callback path's writes barely touch it); and the exceptions that name a merchant.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function consoleAttention(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('callback_deliveries_failed')
        .on('callback_deliveries')
        .columns(['merchant_id', 'payment_id'])
        .where(sql.ref('status'), '=', 'failed')
        .execute();
      await db.schema
        .createIndex('channel_exceptions_merchant')
        .on('channel_exceptions')
        .columns(['merchant_id', 'id'])
        .execute();
    },
  };
}
