/** Migration 0007_live_payins, listed in `migration-provider.ts`. */
import type { Migration } from 'kysely';

/** Operators watch when each channel last sent a verified notification: found by provider and time. */
export function livePayins(): Migration {
  return {
    async up(db) {
      await db.schema
        .createIndex('channel_events_provider_received')
        .on('channel_events')
        .columns(['provider', 'received_at'])
        .execute();
    },
  };
}
