/**
 * `Database.firstRow`, the read behind status queries: on SQLite it runs outside kysely's connection
 * queue when it can, and must still never see what an open transaction has written but not committed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Database } from '../src/db/database.ts';
import { DATABASES } from './support/databases.ts';
import { skipFor, useGateway } from './support/harness.ts';

function merchant(id: string) {
  return {
    id,
    name: 'Firstrow Test',
    mode: 'test' as const,
    status: 'active' as const,
    callback_url: null,
    vpa: `${id.toLowerCase()}@paygate`,
    webhook_secret: 'whsec_test',
    created_at: 1,
  };
}

function nameOf(database: Database, id: string): Promise<{ name: string } | undefined> {
  const q = database.db.selectFrom('merchants').select('name').where('id', '=', id).compile();
  return database.firstRow<{ name: string }>(q.sql, q.parameters);
}

for (const kind of DATABASES) {
  describe(`firstRow on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('reads a committed row, and undefined for none', async () => {
      const { database } = gw();
      await database.db.insertInto('merchants').values(merchant('mer_firstrow_a')).execute();
      assert.deepEqual(await nameOf(database, 'mer_firstrow_a'), { name: 'Firstrow Test' });
      assert.equal(await nameOf(database, 'mer_firstrow_none'), undefined);
    });

    it('answers reads asked together each with its own row, and fails only a read that fails', async () => {
      const { database } = gw();
      const ids = ['mer_firstrow_c1', 'mer_firstrow_c2', 'mer_firstrow_c3'];
      for (const id of ids)
        await database.db
          .insertInto('merchants')
          .values({ ...merchant(id), name: `Name of ${id}` })
          .execute();
      const settled = await Promise.allSettled([
        nameOf(database, ids[0]!),
        database.firstRow('select no_such_column from merchants', []),
        nameOf(database, ids[1]!),
        nameOf(database, 'mer_firstrow_none'),
        nameOf(database, ids[2]!),
      ]);
      assert.deepEqual(
        settled.map((s) => (s.status === 'fulfilled' ? s.value : 'rejected')),
        [
          { name: 'Name of mer_firstrow_c1' },
          'rejected',
          { name: 'Name of mer_firstrow_c2' },
          undefined,
          { name: 'Name of mer_firstrow_c3' },
        ],
      );
      // The group's read transaction is over: a transaction of kysely's can begin on the connection.
      await database.db.transaction().execute(async (tx) => {
        await tx.updateTable('merchants').set({ name: 'Renamed' }).where('id', '=', ids[0]!).execute();
      });
      assert.deepEqual(await nameOf(database, ids[0]!), { name: 'Renamed' });
    });

    it('never returns a row of a transaction that is still open and then rolls back', async () => {
      const { database } = gw();
      let read: Promise<{ name: string } | undefined> | null = null;
      await assert.rejects(
        database.db.transaction().execute(async (tx) => {
          await tx.insertInto('merchants').values(merchant('mer_firstrow_b')).execute();
          // Asked while the insert is uncommitted: on SQLite the one connection is inside this
          // transaction, so the read has to wait for it rather than run on the connection at once.
          read = nameOf(database, 'mer_firstrow_b');
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.ok(read);
      assert.equal(await read, undefined);
      assert.equal(await nameOf(database, 'mer_firstrow_b'), undefined);
    });
  });
}
