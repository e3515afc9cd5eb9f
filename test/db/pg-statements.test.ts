/**
 * Named statements on PostgreSQL (`src/db/pg-statements.ts`): a text sent often is prepared once
 * per connection, texts sent once stay unnamed, the number of names is bounded, and a named
 * statement whose table changed shape under it fails once and is prepared afresh.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { StatementNames } from '../../src/db/pg-statements.ts';
import { createDatabase, postgresSkip, type TestDatabase } from '../support/databases.ts';

describe('statement names', () => {
  it('a text is named on its third use, under one name from then on', () => {
    const names = new StatementNames();
    assert.equal(names.nameOf('select $1'), undefined);
    assert.equal(names.nameOf('select $1'), undefined);
    const name = names.nameOf('select $1');
    assert.match(name ?? '', /^paygate_0_\d+$/);
    assert.equal(names.nameOf('select $1'), name);
    assert.equal(names.nameOf('select $2'), undefined);
  });

  it('at most 200 texts are named; the others stay unnamed', () => {
    const names = new StatementNames();
    for (let i = 0; i < 250; i++) for (let use = 0; use < 3; use++) names.nameOf(`select ${i}, $1`);
    assert.equal(names.size, 200);
    assert.notEqual(names.nameOf('select 0, $1'), undefined);
    for (let use = 0; use < 5; use++) assert.equal(names.nameOf('select 249, $1'), undefined);
  });

  it('forget: every text is named again, under a new name', () => {
    const names = new StatementNames();
    for (let use = 0; use < 3; use++) names.nameOf('select $1');
    const first = names.nameOf('select $1');
    names.forget();
    assert.equal(names.size, 0);
    assert.equal(names.nameOf('select $1'), undefined);
    names.nameOf('select $1');
    const second = names.nameOf('select $1');
    assert.ok(second !== undefined && second !== first, `${second} after ${first}`);
  });
});

describe('named statements on PostgreSQL', async () => {
  const skip = await postgresSkip();
  let store: TestDatabase;
  let database: Database;

  before(async () => {
    if (skip) return;
    store = await createDatabase('postgres');
    database = openDatabase(store.url);
    await sql`create table shapes (id text primary key, a int)`.execute(database.db);
    await sql`insert into shapes values ('x', 1)`.execute(database.db);
  });

  after(async () => {
    if (skip) return;
    await database.close();
    await store.drop();
  });

  /** The statements prepared on the connection this runs on, by text. */
  async function preparedHere(run: (db: Database['db']) => Promise<void>): Promise<string[]> {
    return database.db.connection().execute(async (db) => {
      await run(db);
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
        db,
      );
      return rows.map((r) => r.statement);
    });
  }

  it(
    'a statement sent three times is prepared on its connection; one sent once is not',
    { skip },
    async () => {
      const prepared = await preparedHere(async (db) => {
        for (let i = 0; i < 3; i++) await sql`select a from shapes where id = ${'x'}`.execute(db);
        await sql`select a + 1 from shapes where id = ${'x'}`.execute(db);
        await sql`select 1`.execute(db);
      });
      assert.ok(prepared.includes('select a from shapes where id = $1'), JSON.stringify(prepared));
      assert.ok(!prepared.some((p) => p.includes('a + 1')), JSON.stringify(prepared));
      assert.ok(!prepared.includes('select 1'), 'a statement without parameters keeps the simple protocol');
    },
  );

  it(
    'a column added under a named statement: it fails once, then answers with the new shape',
    { skip },
    async () => {
      await database.db.connection().execute(async (db) => {
        const read = async () =>
          (await sql<Record<string, unknown>>`select * from shapes where id = ${'x'}`.execute(db)).rows[0];
        const prepared = async () =>
          (await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db)).rows.map(
            (r) => r.name,
          );
        for (let i = 0; i < 4; i++) assert.deepEqual(await read(), { id: 'x', a: 1 });
        const before = await prepared();
        assert.ok(before.length >= 1, JSON.stringify(before));
        await sql`alter table shapes add column b int default 2`.execute(db);
        await assert.rejects(read(), /cached plan must not change result type/);
        assert.deepEqual(await read(), { id: 'x', a: 1, b: 2 });
        assert.deepEqual(await prepared(), [], 'the statements prepared before are deallocated');
        for (let i = 0; i < 3; i++) assert.deepEqual(await read(), { id: 'x', a: 1, b: 2 });
        assert.equal((await prepared()).length, 1, 'and the text is named afresh');
      });
    },
  );
});
