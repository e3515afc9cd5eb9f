/**
 * Migration 0020_intake on a database that already holds notifications: the rows stay as they were
 * (pending ones still pending, with no failed tries counted), a notification may now end `failed`,
 * and any other state is still refused; at most one `signature_failures` or `channel_silent` is open
 * per provider, while other kinds are not limited by it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, type Kysely } from 'kysely';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { migrationProvider } from '../../src/db/migration-provider.ts';
import { recordAlarm } from '../../src/exceptions/exceptions.repository.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';

for (const kind of DATABASES) {
  describe(`migration 0020_intake on ${kind}`, { skip: await skipFor(kind) }, () => {
    let testDb: TestDatabase;
    let database: Database;

    before(async () => {
      testDb = await createDatabase(kind);
      database = openDatabase(testDb.url);
    });

    after(async () => {
      await database.close();
      await testDb.drop();
    });

    it('keeps stored notifications, takes failed, and keeps alarms one while open', async () => {
      const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.kind) });
      assert.equal((await migrator.migrateTo('0019_after_final')).error, undefined);
      const old = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      const row = (eventId: string, state: string) => ({
        provider: 'setu',
        event_id: eventId,
        payment_id: null,
        reference: 'r',
        type: 'payment.initiated',
        body: '{}',
        state,
        next_action_at: state === 'pending' ? 5 : null,
        lease_until: null,
        received_at: 1,
        applied_at: state === 'applied' ? 1 : null,
      });
      await old
        .insertInto('channel_events')
        .values([row('a', 'applied'), row('p', 'pending')])
        .execute();
      await migrate(database);

      const db = database.db;
      const rows = await db
        .selectFrom('channel_events')
        .select(['event_id', 'state', 'apply_attempts', 'raw_base64', 'next_action_at'])
        .orderBy('event_id')
        .execute();
      assert.deepEqual(
        rows.map((r) => [
          r.event_id,
          r.state,
          Number(r.apply_attempts),
          r.raw_base64,
          r.next_action_at && Number(r.next_action_at),
        ]),
        [
          ['a', 'applied', 0, null, null],
          ['p', 'pending', 0, null, 5],
        ],
      );
      await db.updateTable('channel_events').set({ state: 'failed' }).where('event_id', '=', 'p').execute();
      await assert.rejects(
        db
          .updateTable('channel_events')
          .set({ state: 'lost' as never })
          .where('event_id', '=', 'p')
          .execute(),
      );
      // The unique key and the indexes survived the rebuild (SQLite) or were never touched (PostgreSQL).
      await assert.rejects(old.insertInto('channel_events').values(row('a', 'applied')).execute());

      const alarm = (at: number) =>
        recordAlarm(db, { kind: 'channel_silent', provider: 'setu', detail: 'quiet' }, at);
      const first = await alarm(1000);
      assert.notEqual(first, null);
      assert.equal(await alarm(2000), null, 'one while open');
      assert.notEqual(
        await recordAlarm(db, { kind: 'channel_silent', provider: 'cashfree', detail: 'quiet' }, 2000),
        null,
      );
      await db
        .updateTable('channel_exceptions')
        .set({ resolved_at: 3000 })
        .where('id', '=', first!)
        .execute();
      assert.notEqual(await alarm(4000), null, 'a new one after it was resolved');
    });
  });
}
