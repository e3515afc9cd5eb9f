/**
 * `Database.readStatus`, the read behind status queries: reads that arrive together are grouped
 * (on SQLite outside kysely's connection queue when it can), and a read must still never see what
 * an open transaction has written but not committed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import type { TransactionRow } from '../../src/transactions/transactions.repository.ts';
import { newTransaction } from '../../src/transactions/new-transaction.ts';
import { SqliteReads } from '../../src/db/sqlite-reads.ts';
import { DATABASES, PG_ADMIN_URL } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';

function payin(paymentId: string, merchantId: string, amount: number): TransactionRow {
  return newTransaction({
    payment_id: paymentId,
    merchant_id: merchantId,
    kind: 'payin',
    flow: 'onsite',
    merchant_order_no: `order-${paymentId}`,
    amount,
    currency: 'INR',
    status: 'PENDING',
    channel: 'sandbox',
    request_hash: 'h',
    response_json: '{}',
    created_at: 1,
  });
}

function statusOf(
  database: Database,
  paymentId: string,
  merchantId: string,
  kind: 'payin' | 'payout' = 'payin',
) {
  return database.readStatus({ paymentId, merchantId, kind });
}

const view = (amount: number) => ({
  status: 'PENDING',
  amount,
  currency: 'INR',
  channel_txn_id: '',
  utr: '',
  reversed_at: null,
});

for (const kind of DATABASES) {
  describe(`readStatus on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('reads a committed row; undefined for none, for another merchant and for the other kind', async () => {
      const { database, merchant } = gw();
      const other = await gw().newMerchant();
      await database.db
        .insertInto('transactions')
        .values(payin('pay_rs_a', merchant.merchant_id, 101))
        .execute();
      assert.deepEqual(await statusOf(database, 'pay_rs_a', merchant.merchant_id), view(101));
      assert.equal(await statusOf(database, 'pay_rs_none', merchant.merchant_id), undefined);
      assert.equal(await statusOf(database, 'pay_rs_a', other.merchant_id), undefined);
      assert.equal(await statusOf(database, 'pay_rs_a', merchant.merchant_id, 'payout'), undefined);
    });

    it('answers reads asked together each with its own row', async () => {
      const { database, merchant } = gw();
      const ids = ['pay_rs_c1', 'pay_rs_c2', 'pay_rs_c3'];
      for (const [i, id] of ids.entries())
        await database.db
          .insertInto('transactions')
          .values(payin(id, merchant.merchant_id, 200 + i))
          .execute();
      const rows = await Promise.all([
        statusOf(database, ids[0]!, merchant.merchant_id),
        statusOf(database, ids[1]!, merchant.merchant_id),
        statusOf(database, 'pay_rs_none', merchant.merchant_id),
        statusOf(database, ids[2]!, merchant.merchant_id),
        statusOf(database, ids[0]!, merchant.merchant_id),
      ]);
      assert.deepEqual(rows, [view(200), view(201), undefined, view(202), view(200)]);
      // The group's read transaction is over: a transaction of kysely's can begin on the connection.
      await database.db.transaction().execute(async (tx) => {
        await tx.updateTable('transactions').set({ amount: 250 }).where('payment_id', '=', ids[0]!).execute();
      });
      assert.deepEqual(await statusOf(database, ids[0]!, merchant.merchant_id), view(250));
    });

    it('never returns a row of a transaction that is still open and then rolls back', async () => {
      const { database, merchant } = gw();
      let read: ReturnType<typeof statusOf> | null = null;
      await assert.rejects(
        database.db.transaction().execute(async (tx) => {
          await tx
            .insertInto('transactions')
            .values(payin('pay_rs_b', merchant.merchant_id, 300))
            .execute();
          // Asked while the insert is uncommitted: on SQLite the one connection is inside this
          // transaction, so the read has to wait for it rather than run on the connection at once.
          read = statusOf(database, 'pay_rs_b', merchant.merchant_id);
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.ok(read);
      assert.equal(await read, undefined);
      assert.equal(await statusOf(database, 'pay_rs_b', merchant.merchant_id), undefined);
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

describe('writeTransaction on SQLite', () => {
  it('holds the write lock from its start, so that its write after a read is never refused', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-immediate-'));
    const file = path.join(dir, 'write.db');
    const database = openDatabase(`sqlite:${file}`);
    await sql`create table t (id integer primary key, v integer)`.execute(database.db);
    await sql`insert into t values (1, 0)`.execute(database.db);
    // Another process's connection, which commits a write between the transaction's read and its write.
    const other = new BetterSqlite3(file);
    other.pragma('busy_timeout = 50');
    const otherWrite = () => other.prepare('update t set v = v + 1 where id = 1').run();
    const readThenWrite = async (tx: typeof database.db) => {
      await sql`select v from t where id = 1`.execute(tx);
      otherWrite();
      await sql`update t set v = v + 10 where id = 1`.execute(tx);
    };
    try {
      // A transaction begun deferred reads a snapshot, and its write is refused without waiting.
      await assert.rejects(database.db.transaction().execute(readThenWrite), {
        code: 'SQLITE_BUSY_SNAPSHOT',
      });
      await assert.rejects(
        database.writeTransaction().execute(async (tx) => {
          await sql`select v from t where id = 1`.execute(tx);
          // The other connection cannot write while the transaction is open (it gives up after its busy timeout)...
          assert.throws(otherWrite, { code: 'SQLITE_BUSY' });
          // ...and the transaction's own write goes through.
          await sql`update t set v = v + 10 where id = 1`.execute(tx);
          throw new Error('roll back');
        }),
        /roll back/,
      );
      await database.writeTransaction().execute(async (tx) => {
        await sql`update t set v = v + 100 where id = 1`.execute(tx);
      });
      assert.deepEqual(other.prepare('select v from t where id = 1').get(), { v: 101 });
    } finally {
      other.close();
      await database.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('PostgreSQL connections', { skip: await skipFor('postgres') }, () => {
  it('compile no statement with JIT, which would cost hundreds of milliseconds for one of a millisecond', async () => {
    const database = openDatabase(PG_ADMIN_URL);
    try {
      const server = new pg.Client({ connectionString: PG_ADMIN_URL });
      await server.connect();
      // The server's own setting, which a connection of the gateway's overrides.
      const serverJit = (await server.query('show jit')).rows[0].jit;
      await server.end();
      const { rows } = await sql<{ jit: string }>`show jit`.execute(database.db);
      assert.equal(rows[0]!.jit, 'off', `the server's setting is ${serverJit}`);
    } finally {
      await database.close();
    }
  });
});
