/**
 * Reconciliation at RECONCILE_AT, for `npm run soak`: on each database, a day of live transactions
 * with planted differences, then three `paygate serve` processes on that database waiting for
 * RECONCILE_AT: the day before is reconciled once, its exceptions opened once. The two databases
 * run side by side, so that they wait for the same whole minute rather than one after the other.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDatabase, DATABASES } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { spawnServer, type ServerProcess } from '../support/process.ts';
import { until } from '../support/live.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { assertLeasesDone, reconcileExceptions, seedReconcileDay } from '../support/reconcile-day.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { istYesterday } from '../../src/ist.ts';

/** The day's scheduled runs as `channel checked matched mismatched unreadable opened finished`. */
async function scheduledRuns(database: Database, date: string): Promise<string[]> {
  const rows = await database.db
    .selectFrom('reconcile_runs')
    .selectAll()
    .where('date', '=', date)
    .where('trigger', '=', 'schedule')
    .orderBy('channel')
    .execute();
  return rows.map(
    (r) =>
      `${r.channel} ${r.checked} ${r.matched} ${r.mismatched} ${r.unreadable} ${r.opened} ${r.finished_at !== null}`,
  );
}

const CLUSTER_PAYINS = 150;
const CLUSTER_PAYOUTS = 150;

const skips = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };

describe('reconcile at RECONCILE_AT', { concurrency: true }, () => {
  for (const kind of DATABASES) {
    describe(
      `reconcile at RECONCILE_AT across three paygate serve processes on ${kind}`,
      {
        skip: skips[kind],
      },
      () => {
        it('reconciles the day before once, and opens its exceptions once', async () => {
          const testDb = await createDatabase(kind);
          const database = openDatabase(testDb.url);
          const setu = await new FakeSetu().start();
          const cashfree = await new FakeCashfree().start();
          let servers: ServerProcess[] = [];
          try {
            await migrate(database);
            // The first whole minute at least 50 s away: both databases' processes start and wait for it.
            const at = Math.ceil((Date.now() + 50_000) / 60_000) * 60_000;
            const reconcileAt = new Date(at + 330 * 60_000).toISOString().slice(11, 16);
            const date = istYesterday(at);
            const day = await seedReconcileDay(
              database,
              { setu, cashfree },
              { date, payins: CLUSTER_PAYINS, payouts: CLUSTER_PAYOUTS, differences: true },
            );
            const env = {
              DATABASE_URL: testDb.url,
              ...setu.env(),
              ...cashfree.env(),
              RECONCILE_AT: reconcileAt,
            };
            servers = await Promise.all([1, 2, 3].map(() => spawnServer(env, { timeoutMs: 60_000 })));
            assert.ok(
              Date.now() < at,
              `the three processes took until ${new Date().toISOString()} to start, past RECONCILE_AT`,
            );
            assert.deepEqual(await scheduledRuns(database, date), [], 'nothing runs before RECONCILE_AT');

            await until(
              async () =>
                (await scheduledRuns(database, date)).filter((r) => r.endsWith(' true')).length >= 2,
              'both channels reconciled',
              at - Date.now() + 180_000,
            );
            // Stopped, each process finishes or abandons what it is doing: every run any of them
            // started is in the table now.
            await Promise.all(servers.map((x) => x.stop()));
            const outputs = servers.map((x) => x.output()).join('\n');
            servers = [];
            const { setu: s, cashfree: c } = day.mismatched;
            const { opened } = day;
            assert.deepEqual(
              await scheduledRuns(database, date),
              [
                `cashfree ${CLUSTER_PAYOUTS} ${CLUSTER_PAYOUTS - c} ${c} 0 ${opened.cashfree} true`,
                `setu ${CLUSTER_PAYINS} ${CLUSTER_PAYINS - s} ${s} 0 ${opened.setu} true`,
              ],
              outputs,
            );
            assert.deepEqual(await reconcileExceptions(database), day.expected);
            const mismatches = await database.db
              .selectFrom('reconcile_mismatches')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow();
            assert.equal(Number(mismatches.n), opened.setu + opened.cashfree);
            await assertLeasesDone(database, date);
          } finally {
            await Promise.all(servers.map((x) => x.kill()));
            await database.close();
            await setu.stop();
            await cashfree.stop();
            await testDb.drop();
          }
        });
      },
    );
  }
});
