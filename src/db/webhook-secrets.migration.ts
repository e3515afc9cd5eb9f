/**
 * Migration 0009: Standard Webhooks beside the seed's token (CONTRACT §7). A merchant keeps its
 * previous webhook secret, and until when it still signs, after a rotation; each delivery carries
 * the `webhook-id` of the event it delivers, so that a retry and a resend repeat it.
 */
import { sql, type Migration } from 'kysely';

export function webhookSecrets(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('merchants').addColumn('previous_webhook_secret', 'text').execute();
      await db.schema.alterTable('merchants').addColumn('previous_secret_until', 'bigint').execute();
      await db.schema
        .alterTable('callback_deliveries')
        .addColumn('event_id', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      // Deliveries made before: the resends of an event (same transaction, same body) take the
      // id of its first delivery, as new resends do.
      await sql`update callback_deliveries set event_id = 'msg_' || substr((
          select d.id from callback_deliveries as d
          where d.payment_id = callback_deliveries.payment_id and d.body = callback_deliveries.body
          order by d.created_at, d.id limit 1
        ), 5)`.execute(db);
    },
  };
}
