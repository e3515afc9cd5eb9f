/**
 * Where each history's database comes from. SQLite: one file (on tmpfs when there is one),
 * migrated once; before each history every table's rows are deleted (AUTOINCREMENT counters too),
 * on the same connection, so that its prepared statements serve every history. A crash closes the
 * connection; the next history, or the crash itself, opens it again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { migrate, openDatabase, type Database } from '../src/db/database.ts';

export interface Store {
  readonly url: string;
  /** The database emptied for a new history. */
  fresh(): Promise<Database>;
  /** The database opened again, after a crash closed it. */
  reopen(): Database;
  /** Removes what the store made. */
  close(): Promise<void>;
}

export async function sqliteStore(): Promise<Store> {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const dir = fs.mkdtempSync(path.join(base, 'paygate-sim-'));
  const url = `sqlite:${path.join(dir, 'sim.db')}`;
  let current = openDatabase(url);
  let open = true;
  await migrate(current);
  const tables = await sql<{ name: string }>`
    select name from sqlite_master
    where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'`.execute(current.db);
  const names = tables.rows.map((t) => t.name);
  const close = async () => {
    if (open) await current.close().catch(() => {});
    open = false;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return {
    url,
    close,
    reopen() {
      current = openDatabase(url);
      open = true;
      return current;
    },
    async fresh() {
      await current.db.transaction().execute(async (tx) => {
        // The foreign keys are checked at the commit, when every table is empty.
        await sql.raw('pragma defer_foreign_keys = on').execute(tx);
        for (const name of names) await sql.raw(`delete from "${name}"`).execute(tx);
        await sql.raw(`delete from sqlite_sequence`).execute(tx);
      });
      return current;
    },
  };
}
