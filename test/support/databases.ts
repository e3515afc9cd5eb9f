/**
 * The databases every integration suite runs against: a fresh SQLite file and, when PostgreSQL
 * answers, a fresh PostgreSQL database of its own (so runs never collide). Without PostgreSQL the
 * PostgreSQL half is skipped, except under CI=true, where its absence fails the run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

let pgAvailable: Promise<boolean> | null = null;

export function postgresAvailable(): Promise<boolean> {
  // Three tries: on a loaded machine a file whose SQLite half runs synchronously can hold the
  // event loop past one connect timeout, which must not read as "no PostgreSQL".
  pgAvailable ??= (async () => {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 10_000 });
      try {
        await client.connect();
        await client.query('select 1');
        return true;
      } catch {
        // tried again below
      } finally {
        await client.end().catch(() => {});
      }
    }
    return false;
  })();
  return pgAvailable;
}

// Ask once, as soon as a test file loads: a suite that blocks the event loop later (a synchronous
// child process in a hook) must not make the answer time out into a silent skip.
void postgresAvailable();

/** Why the PostgreSQL half is skipped, or false when it runs. Throws under CI=true when it would skip. */
export async function postgresSkip(): Promise<string | false> {
  if (await postgresAvailable()) return false;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but PostgreSQL is not reachable at ${PG_ADMIN_URL}`);
  return `PostgreSQL is not reachable at ${PG_ADMIN_URL}`;
}

export async function createSqlite(): Promise<TestDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-test-'));
  return {
    name: 'sqlite',
    url: `sqlite:${path.join(dir, 'paygate.db')}`,
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function createPostgres(): Promise<TestDatabase> {
  const name = `paygate_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name: 'postgres',
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** The two targets, by name, for `for (const kind of DATABASES)` loops around describe blocks. */
export const DATABASES = ['sqlite', 'postgres'] as const;

export function createDatabase(kind: 'sqlite' | 'postgres'): Promise<TestDatabase> {
  return kind === 'sqlite' ? createSqlite() : createPostgres();
}
