/**
 * Every statement on a hot path (`support/hot-paths.ts`) goes through its index on both databases
 * whatever their statistics: after a burst into a new database that has none, on a new database
 * once the gateway gathered them, after a burst that made them stale, and with one merchant holding
 * nearly every row. The plans are the databases' own (`EXPLAIN`, `EXPLAIN QUERY PLAN`) for the
 * statements the repositories issue. The same check at 1,000,000 rows: `npm run bench -- --only plans`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, migrate, type Database } from '../../src/db/database.ts';
import { keepStatistics } from '../../src/db/statistics.ts';
import { DATABASES, createDatabase, postgresAvailable, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { HOT_PATHS } from '../support/hot-paths.ts';
import { explainHotPaths, fillHotTables, valuesOf } from '../support/query-plans.ts';

// Answered before the SQLite half runs: its statements never yield to I/O, and a machine busy enough
// would let the connection attempt time out meanwhile.
await postgresAvailable();

const BIG = 'mrc_big';
/** The other merchants, twenty with a few rows each. */
const SMALL = Array.from({ length: 20 }, (_, i) => `mrc_small${i}`);

for (const kind of DATABASES) {
  describe(`hot-path query plans (${kind})`, async () => {
    const skip = await skipFor(kind);
    const opened: { store: TestDatabase; database: Database }[] = [];

    async function freshDatabase(): Promise<Database> {
      const store = await createDatabase(kind);
      const database = openDatabase(store.url);
      opened.push({ store, database });
      await migrate(database);
      // Held still: autovacuum must not gather statistics between a burst and its check.
      if (kind === 'postgres')
        for (const table of ['transactions', 'callback_deliveries', 'channel_events', 'wallets', 'api_keys'])
          await sql`alter table ${sql.id(table)} set (autovacuum_enabled = false)`.execute(database.db);
      return database;
    }

    async function assertPlans(database: Database, merchants: string[]): Promise<void> {
      const problems: string[] = [];
      for (const merchantId of merchants)
        problems.push(...(await explainHotPaths(database, HOT_PATHS, valuesOf(merchantId))));
      assert.deepEqual(problems, []);
    }

    after(async () => {
      for (const { store, database } of opened) {
        await database.close();
        await store.drop();
      }
    });

    it('a burst of 20,000 pay-ins into a new database, without statistics', { skip }, async () => {
      const database = await freshDatabase();
      await fillHotTables(database, BIG, 20_000);
      await assertPlans(database, [BIG]);
    });

    describe('one database as it grows', () => {
      let database: Database;
      before(async () => {
        if (!skip) database = await freshDatabase();
      });

      // Below a few thousand rows without statistics, an index that serves the console can cost
      // PostgreSQL the same as the hot path's own; the gateway gathers statistics at start-up and
      // every STATISTICS_CHECK_MS (docs/performance.md, Query plans).
      it('its first thousand pay-ins, once the gateway gathered statistics', { skip }, async () => {
        await fillHotTables(database, BIG, 1000);
        await keepStatistics(database).refresh();
        await assertPlans(database, [BIG]);
      });

      it('then 20,000 more, with the statistics from before them', { skip }, async () => {
        await fillHotTables(database, BIG, 20_000, 1001);
        await assertPlans(database, [BIG]);
      });

      it('then twenty more merchants with a few rows each, statistics gathered again', { skip }, async () => {
        for (const merchantId of SMALL) await fillHotTables(database, merchantId, 20);
        await keepStatistics(database).refresh();
        await assertPlans(database, [BIG, SMALL[0]!]);
      });
    });
  });
}
