/**
 * A copy of a SQLite database taken while it serves, and the copy opened to be checked.
 *
 * The copy is one `VACUUM INTO`: one read transaction, so it is the database as one commit left it,
 * whatever other processes write meanwhile (in WAL mode they go on writing; a step-by-step backup
 * would start again at every write of another process and might never end under load). It is
 * written beside its name and linked into place only once complete and synced, so a copy that
 * exists is whole, and an existing file is never overwritten.
 *
 * A copy is checked read-only and never migrated: a backup must stay what it was when it was taken.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import type { Database } from './database.ts';
import { migrationProvider } from './migration-provider.ts';
import type { Tables } from './schema.ts';
import { ImmediateSqliteDialect } from './sqlite-connection.ts';
import { silentLogger, connectionLog } from './connection-health.ts';

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  took_ms: number;
}

/** The destination exists already: a backup never replaces a file. */
export class BackupExistsError extends Error {}

/**
 * Copies the SQLite database `source` to `to` (which must not exist). `timeoutMs` is how long it
 * waits for the database when another connection holds it (SQLite's busy timeout).
 */
export function backupSqlite(source: string, to: string, timeoutMs: number): BackupResult {
  const started = Date.now();
  const target = path.resolve(to);
  if (fs.existsSync(target))
    throw new BackupExistsError(`${to} exists already; a backup never replaces a file`);
  if (!fs.existsSync(source)) throw new Error(`there is no database at ${source}`);
  const partial = `${target}.partial-${process.pid}`;
  const raw = new BetterSqlite3(source, { fileMustExist: true });
  try {
    raw.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
    fs.rmSync(partial, { force: true });
    raw.prepare('vacuum into ?').run(partial);
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    raw.close();
  }
  try {
    const fd = fs.openSync(partial, 'r+');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    // A link fails when the name exists: a file made meanwhile under that name is kept.
    fs.linkSync(partial, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new BackupExistsError(`${to} exists already; a backup never replaces a file`);
    throw err;
  } finally {
    fs.rmSync(partial, { force: true });
  }
  const copy = new BetterSqlite3(target, { readonly: true, fileMustExist: true });
  try {
    const pages = copy.pragma('page_count', { simple: true }) as number;
    return { file: target, bytes: fs.statSync(target).size, pages, took_ms: Date.now() - started };
  } finally {
    copy.close();
  }
}

/** What SQLite's integrity check says of a copy: `ok`, or its problems, one a line. */
export function integrityOf(file: string): string {
  const raw = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const rows = raw.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((r) => r.integrity_check).join('\n');
  } finally {
    raw.close();
  }
}

/**
 * A SQLite copy opened read-only as a `Database`, for checks that read it (the ledger's): nothing
 * can write to it, and it is never migrated. `pending` names the migrations the copy lacks.
 */
export async function openCopy(file: string): Promise<{ database: Database; pending: string[] }> {
  if (!fs.existsSync(file)) throw new Error(`there is no file at ${file}`);
  const raw = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  const db = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect({ database: raw }) });
  const known = Object.keys(await migrationProvider('sqlite').getMigrations());
  const applied = await sql<{ name: string }>`select name from kysely_migration`
    .execute(db)
    .then((r) => new Set(r.rows.map((row) => row.name)))
    .catch(() => new Set<string>());
  const refuse = async () => {
    throw new Error('a backup copy is opened read-only');
  };
  const health = connectionLog(silentLogger, file);
  const database: Database = {
    kind: 'sqlite',
    db,
    url: `sqlite:${file}`,
    label: file,
    readStatus: () => Promise.reject(new Error('a backup copy serves no status reads')),
    writeTransaction: () => db.transaction(),
    lockRows: (query) => query,
    advisoryLock: refuse,
    async ping() {
      raw.prepare('select 1').get();
    },
    listen: () => null,
    async notify() {},
    onAvailable: health.onBack,
    unavailable() {},
    async close() {
      await db.destroy();
    },
  };
  return { database, pending: known.filter((name) => !applied.has(name)) };
}
