/**
 * Migration 0009 on a database that already has merchants and callback deliveries: each earlier
 * delivery gets the webhook-id of the first delivery of its transaction and body, so an old event
 * keeps one id across its old resends and the resends made after the upgrade.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, type Kysely } from 'kysely';
import { enqueueDelivery } from '../../src/callbacks/outbox.repository.ts';
import { migrate, openDatabase, type Database } from '../../src/db/database.ts';
import { migrationProvider } from '../../src/db/migration-provider.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';

for (const kind of DATABASES) {
  describe(`migration 0009_webhook_secrets on ${kind}`, { skip: await skipFor(kind) }, () => {
    let testDb: TestDatabase;
    let database: Database;
    const extra: TestDatabase[] = [];

    before(async () => {
      testDb = await createDatabase(kind);
      database = openDatabase(testDb.url);
    });

    after(async () => {
      await database.close();
      await testDb.drop();
      for (const d of extra) await d.drop();
    });

    it('gives earlier deliveries the webhook-id of their event, which later resends keep', async () => {
      const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.kind) });
      const { error } = await migrator.migrateTo('0004_dashboard_hardening');
      assert.equal(error, undefined);
      // The rows as they were before the migration, without its columns.
      const before = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      await before
        .insertInto('merchants')
        .values({
          id: 'mer_old',
          name: 'Old Shop',
          mode: 'test',
          status: 'active',
          callback_url: null,
          vpa: 'old@paygate',
          webhook_secret: 'whsec_Qm3vT8kZp2LxR7yN4cW9bF6hJ1dS5gA0eUoViYtK',
          created_at: 1,
        })
        .execute();
      const delivery = (id: string, paymentId: string, body: string, at: number) => ({
        id,
        payment_id: paymentId,
        merchant_id: 'mer_old',
        url: 'https://shop.example/cb',
        body,
        status: 'delivered',
        attempts: 1,
        max_attempts: 4,
        next_attempt_at: null,
        lease_until: null,
        last_error: null,
        created_at: at,
        updated_at: at,
        delivered_at: at,
      });
      await before
        .insertInto('callback_deliveries')
        .values([
          delivery('cbd_firstAAAAAAAAAAAAAAA', 'P1', '{"status":"SUCCESS"}', 10),
          delivery('cbd_0resendAAAAAAAAAAAAA', 'P1', '{"status":"SUCCESS"}', 20),
          delivery('cbd_otherAAAAAAAAAAAAAAA', 'P2', '{"status":"FAILED"}', 10),
        ])
        .execute();

      assert.ok((await migrate(database)).includes('0009_webhook_secrets'));

      const rows = await database.db
        .selectFrom('callback_deliveries')
        .select(['id', 'event_id'])
        .orderBy('id')
        .execute();
      const idOf = new Map(rows.map((r) => [r.id, r.event_id]));
      assert.equal(idOf.get('cbd_firstAAAAAAAAAAAAAAA'), 'msg_firstAAAAAAAAAAAAAAA');
      // The resend sorts first by id but was made later: it takes the id of the event's first delivery.
      assert.equal(idOf.get('cbd_0resendAAAAAAAAAAAAA'), 'msg_firstAAAAAAAAAAAAAAA');
      assert.equal(idOf.get('cbd_otherAAAAAAAAAAAAAAA'), 'msg_otherAAAAAAAAAAAAAAA');

      const resend = {
        paymentId: 'P1',
        merchantId: 'mer_old',
        url: 'https://shop.example/cb',
        maxAttempts: 4,
      };
      const again = await enqueueDelivery(database.db, { ...resend, body: '{"status":"SUCCESS"}' }, 30);
      const other = await enqueueDelivery(database.db, { ...resend, body: '{"status":"REVERSED"}' }, 30);
      const fresh = await database.db
        .selectFrom('callback_deliveries')
        .select(['id', 'event_id'])
        .where('id', 'in', [again, other])
        .execute();
      assert.equal(fresh.find((r) => r.id === again)!.event_id, 'msg_firstAAAAAAAAAAAAAAA');
      assert.match(fresh.find((r) => r.id === other)!.event_id, /^msg_[A-Za-z0-9]{20}$/);

      const merchant = await database.db
        .selectFrom('merchants')
        .select(['previous_webhook_secret', 'previous_secret_until'])
        .executeTakeFirstOrThrow();
      assert.deepEqual(merchant, { previous_webhook_secret: null, previous_secret_until: null });
    });

    it('is applied to a database that already ran a later migration', async () => {
      const other = openDatabase((await createDatabase(kind).then((d) => (extra.push(d), d))).url);
      try {
        const all = await migrationProvider(other.kind).getMigrations();
        const { ['0009_webhook_secrets']: _mine, ...without } = all;
        const earlier = new Migrator({ db: other.db, provider: { getMigrations: async () => without } });
        const { error, results } = await earlier.migrateToLatest();
        assert.equal(error, undefined);
        assert.ok(
          results!.some((r) => r.migrationName > '0009_webhook_secrets'),
          'a later migration ran',
        );
        assert.deepEqual(await migrate(other), ['0009_webhook_secrets']);
        await other.db.selectFrom('callback_deliveries').select('event_id').execute();
      } finally {
        await other.close();
      }
    });
  });
}
