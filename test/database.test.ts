/**
 * `Database.firstRow`, the read behind status queries: on SQLite it runs outside kysely's connection
 * queue when it can, and must still never see what an open transaction has written but not committed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from '../src/db/database.ts';
import { SqliteReads } from '../src/db/sqlite-reads.ts';
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

describe('SqliteReads', () => {
  /** A database (in memory unless a file is named) whose statements are recorded as they are prepared. */
  function recorded(file = ':memory:'): { raw: BetterSqlite3.Database; statements: string[] } {
    const raw = new BetterSqlite3(file);
    raw.exec("create table t (id integer primary key, v text); insert into t values (1, 'one'), (2, 'two')");
    const statements: string[] = [];
    const prepare = raw.prepare.bind(raw);
    raw.prepare = ((source: string) => {
      statements.push(source);
      return prepare(source);
    }) as typeof raw.prepare;
    return { raw, statements };
  }
  const notQueued = () => Promise.reject(new Error('not expected to go through kysely'));
  const read = 'select v from t where id = ?';

  it('runs the reads asked for together in one read transaction, and a lone read on its own', async () => {
    const { raw, statements } = recorded();
    const reads = new SqliteReads(raw, notQueued);
    const rows = await Promise.all([1, 2, 3].map((id) => reads.firstRow(read, [id])));
    assert.deepEqual(rows, [{ v: 'one' }, { v: 'two' }, undefined]);
    assert.deepEqual(statements, ['begin', read, read, read, 'commit']);
    assert.equal(raw.inTransaction, false);

    statements.length = 0;
    assert.deepEqual(await reads.firstRow(read, [2]), { v: 'two' });
    assert.deepEqual(statements, [read]);
  });

  it('sends the reads through the queue while a transaction is open on the connection', async () => {
    const { raw, statements } = recorded();
    const queued: unknown[][] = [];
    const reads = new SqliteReads(raw, async (_sql, parameters) => {
      queued.push([...parameters]);
      return { v: 'from the queue' };
    });
    raw.exec('begin');
    const rows = await Promise.all([reads.firstRow(read, [1]), reads.firstRow(read, [2])]);
    raw.exec('rollback');
    assert.deepEqual(rows, [{ v: 'from the queue' }, { v: 'from the queue' }]);
    assert.deepEqual(queued, [[1], [2]]);
    assert.deepEqual(statements, []);
  });

  it('fails the rest of a group at once when a read finds the database busy', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-busy-'));
    const { raw, statements } = recorded(path.join(dir, 'busy.db'));
    raw.pragma('busy_timeout = 50');
    // Another connection holds an exclusive lock (rollback journal): every read here is busy.
    const other = new BetterSqlite3(path.join(dir, 'busy.db'));
    other.exec('begin exclusive');
    try {
      const reads = new SqliteReads(raw, notQueued);
      const settled = await Promise.allSettled([1, 2, 3].map((id) => reads.firstRow(read, [id])));
      assert.deepEqual(
        settled.map((s) => (s.status === 'rejected' ? (s.reason as { code?: string }).code : 'fulfilled')),
        ['SQLITE_BUSY', 'SQLITE_BUSY', 'SQLITE_BUSY'],
      );
      // Only the first read waited out the busy timeout; the other two failed without running.
      assert.deepEqual(statements, ['begin', read, 'commit']);
      assert.equal(raw.inTransaction, false);
    } finally {
      other.exec('rollback');
      other.close();
      raw.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
