/**
 * PostgreSQL for the simulator: one database per process, migrated once, emptied before each
 * history (every table's rows deleted), dropped when the store closes.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, openDatabase } from '../src/db/database.ts';
import type { Store } from './history.ts';

export const PG_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

export async function postgresStore(): Promise<Store> {
  const name = `paygate_sim_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const database = openDatabase(url.toString());
  await migrate(database);
  await database.close();
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const { rows } = await client.query<{ tablename: string }>(
    `select tablename from pg_tables where schemaname = 'public' and tablename not like 'kysely_%'`,
  );
  // One round trip, and no file work as TRUNCATE does for each table: the rows are few.
  const empty = [
    'begin',
    'set local session_replication_role = replica',
    ...rows.map((r) => `delete from "${r.tablename}"`),
    'commit',
  ].join('; ');
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await client.end().catch(() => {});
    const c = new pg.Client({ connectionString: PG_ADMIN_URL });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  };
  return {
    close: drop,
    async fresh() {
      await client.query(empty);
      return { url: url.toString(), async drop() {} };
    },
  };
}
