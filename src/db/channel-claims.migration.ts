/**
 * The worker claims each channel's due transactions on its own (`transaction.worker.ts`), so that a
 * backlog on one channel (a provider's rate limit) never holds back another's. The index its claims
 * read holds the open transactions only, by channel and due time: a claim reads its channel's
 * earliest due rows in order and stops at its limit. It replaces the index on (status,
 * next_action_at), which held every transaction, final ones too, and served only the one claim.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export function channelClaims(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('transactions_next_action').execute();
      await sql`create index transactions_due on transactions (channel, next_action_at)
        where status in ('PENDING', 'PROCESSING')`.execute(db);
    },
  };
}
