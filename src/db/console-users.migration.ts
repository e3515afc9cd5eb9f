/** Console users can be disabled: `disabled_at`, null while they may sign in (CONTRACT §11). */
import type { Migration } from 'kysely';

export function consoleUsers(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('users').addColumn('disabled_at', 'bigint').execute();
    },
  };
}
