/**
 * PostgreSQL for the simulator: one database per process, migrated once; before each history every
 * table's rows are deleted in one round trip, on the same pool, which serves every history. A crash
 * closes the pool; the crash opens another. The database is dropped when the store closes.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, openDatabase } from '../src/db/database.ts';
import type { Store } from './sqlite-store.ts';

export const PG_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

export async function postgresStore(): Promise<Store> {
  const name = `paygate_sim_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const at = new URL(PG_ADMIN_URL);
  at.pathname = `/${name}`;
  const url = at.toString();
  let current = openDatabase(url);
  await migrate(current);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ tablename: string }>(
    `select tablename from pg_tables where schemaname = 'public' and tablename not like 'kysely_%'`,
  );
  // One round trip, without the file work TRUNCATE does for each table: the rows are few.
  const empty = [
    'begin',
    'set local session_replication_role = replica',
    ...rows.map((r) => `delete from "${r.tablename}"`),
    'commit',
  ].join('; ');
  let closed = false;
  return {
    url,
    reopen() {
      current = openDatabase(url);
      return current;
    },
    async fresh() {
      await client.query(empty);
      return current;
    },
    async close() {
      if (closed) return;
      closed = true;
      await current.close().catch(() => {});
      await client.end().catch(() => {});
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
