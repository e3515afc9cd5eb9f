/**
 * Migration 0021_account_transfers on a database that already has exceptions: a `channel_account`
 * or `low_balance` exception resolved before it frees its key (so the next outage opens a new one),
 * an open one and one of another kind keep theirs, and every payout starts at its first transfer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, type Kysely } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrationProvider } from '../../src/db/migration-provider.ts';
import { openException } from '../../src/exceptions/exceptions.repository.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';

for (const kind of DATABASES) {
  describe(`migration 0021_account_transfers on ${kind}`, { skip: await skipFor(kind) }, () => {
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

    it('frees the key of one-while-open exceptions resolved before it, so that the next outage opens a new one', async () => {
      const migrator = new Migrator({ db: database.db, provider: migrationProvider(database.kind) });
      assert.equal((await migrator.migrateTo('0019_after_final')).error, undefined);
      const old = database.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
      const row = (kind: string, reference: string, resolvedAt: number | null) => ({
        kind,
        provider: 'cashfree',
        payment_id: null,
        reference,
        amount: null,
        detail: 'before the upgrade',
        created_at: 1,
        resolved_at: resolvedAt,
        resolution: resolvedAt === null ? null : 'dismiss',
      });
      await old
        .insertInto('channel_exceptions')
        .values([
          row('channel_account', 'ip_not_whitelisted', 5),
          row('low_balance', 'low_balance', 6),
          row('channel_account', 'authentication_failed', null),
          row('stuck', 'pay_resolved_stuck', 7),
        ])
        .execute();
      assert.equal((await migrator.migrateToLatest()).error, undefined);
      const refs = await database.db
        .selectFrom('channel_exceptions')
        .select(['id', 'reference'])
        .orderBy('id')
        .execute();
      assert.deepEqual(
        refs.map((r) => r.reference),
        [
          `ip_not_whitelisted#${refs[0]!.id}`,
          `low_balance#${refs[1]!.id}`,
          'authentication_failed',
          'pay_resolved_stuck',
        ],
      );
      const e = (reference: string) => ({
        kind: 'channel_account' as const,
        provider: 'cashfree',
        paymentId: null,
        reference,
        amount: null,
        detail: 'after the upgrade',
      });
      // The resolved one is no longer the open one: a new one opens; the open one is found, not doubled.
      const again = await openException(database.db, e('ip_not_whitelisted'), 10);
      assert.ok(again > Number(refs[3]!.id));
      assert.equal(await openException(database.db, e('authentication_failed'), 10), Number(refs[2]!.id));
    });
  });
}
