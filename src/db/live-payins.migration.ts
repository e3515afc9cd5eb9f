/** Migration 0007_live_payins, listed in `migration-provider.ts`. */
import type { Migration } from 'kysely';

/**
 * Operators watch when each channel last sent a verified notification (found by provider and time),
 * and see an amount a provider sent that could not be read as the provider's text.
 */
export function livePayins(): Migration {
  return {
    async up(db) {
      await db.schema
        .createIndex('channel_events_provider_received')
        .on('channel_events')
        .columns(['provider', 'received_at'])
        .execute();
      // What a provider sent as an amount that could not be read exactly (the amount is then null).
      await db.schema.alterTable('channel_exceptions').addColumn('amount_text', 'text').execute();
    },
  };
}
