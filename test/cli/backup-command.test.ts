/**
 * `paygate backup` (CONTRACT §1), through the CLI's `main` in this process: `--to` writes a whole
 * copy and answers `{"file","bytes","pages","took_ms"}`; an existing file is refused (CONFLICT) and
 * kept; PostgreSQL is a usage error naming pg_dump; `--verify` answers `{"file","integrity","ledger"}`,
 * never migrates the copy (one missing a migration is named as such and left byte for byte as it was),
 * fails a copy whose ledger does not balance or that is not a database, and NOT_FOUND for no file;
 * neither or both of --to and --verify is a usage error. Under load: test/soak/backup-under-load.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { main } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase } from '../../src/db/database.ts';
import { buildServices } from '../../src/services.ts';

let dir: string;
let source: string;

/** Runs `paygate …args --json` in this process against `databaseUrl`. */
async function paygate(
  args: string[],
  databaseUrl = `sqlite:${source}`,
): Promise<{ status: number | null; json: any }> {
  const saved = process.env.DATABASE_URL;
  process.env.DATABASE_URL = databaseUrl;
  let stdout = '';
  try {
    const { status } = await main([...args, '--json'], { stdout: (l) => (stdout += l), stderr: () => {} });
    return { status, json: JSON.parse(stdout) };
  } finally {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  }
}

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe('paygate backup', () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-backup-cmd-'));
    source = path.join(dir, 'paygate.db');
    const database = openDatabase(`sqlite:${source}`);
    await migrate(database);
    const services = buildServices(loadConfig({ DATABASE_URL: `sqlite:${source}` }), database);
    const m = await services.merchants.create({ name: 'Shop' });
    await services.wallets.topUp(m.merchant_id, 'INR', 12_345);
    await database.close();
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('--to writes a whole copy and says how big it is; --verify checks it read-only', async () => {
    const copy = path.join(dir, 'copy.db');
    const r = await paygate(['backup', '--to', copy]);
    assert.equal(r.status, 0, JSON.stringify(r.json));
    assert.deepEqual(Object.keys(r.json).sort(), ['bytes', 'file', 'pages', 'took_ms']);
    assert.equal(r.json.file, copy);
    assert.equal(r.json.bytes, fs.statSync(copy).size);
    const opened = new BetterSqlite3(copy, { readonly: true });
    const pageSize = opened.pragma('page_size', { simple: true });
    opened.close();
    assert.equal(r.json.bytes, r.json.pages * (pageSize as number), 'the file is its pages');
    const before = sha(copy);
    const v = await paygate(['backup', '--verify', copy]);
    assert.equal(v.status, 0, JSON.stringify(v.json));
    assert.deepEqual(Object.keys(v.json).sort(), ['file', 'integrity', 'ledger']);
    assert.equal(v.json.integrity, 'ok');
    assert.equal(v.json.ledger.ok, true);
    assert.equal(v.json.ledger.journals, 1, 'the top-up');
    assert.equal(sha(copy), before, 'verify changes nothing');
  });

  it('refuses an existing file and keeps it; PostgreSQL is a usage error naming pg_dump', async () => {
    const existing = path.join(dir, 'exists.db');
    fs.writeFileSync(existing, 'keep me');
    const r = await paygate(['backup', '--to', existing]);
    assert.equal(r.status, 1);
    assert.equal(r.json.error.code, 'CONFLICT');
    assert.equal(fs.readFileSync(existing, 'utf8'), 'keep me');
    const pg = await paygate(
      ['backup', '--to', path.join(dir, 'pg.db')],
      'postgres://root@127.0.0.1:5432/test',
    );
    assert.equal(pg.status, 2);
    assert.match(pg.json.error.message, /pg_dump/);
    assert.ok(!fs.existsSync(path.join(dir, 'pg.db')));
  });

  it('--verify never migrates: a copy missing a migration is named as such and left as it was', async () => {
    const copy = path.join(dir, 'older.db');
    assert.equal((await paygate(['backup', '--to', copy])).status, 0);
    const raw = new BetterSqlite3(copy);
    const last = (
      raw.prepare('select name from kysely_migration order by name desc limit 1').get() as { name: string }
    ).name;
    raw.prepare('delete from kysely_migration where name = ?').run(last);
    raw.close();
    const before = sha(copy);
    const v = await paygate(['backup', '--verify', copy]);
    assert.deepEqual(v.json.ledger.pending_migrations, [last]);
    assert.equal(sha(copy), before, 'not migrated');
  });

  it('--verify fails a copy whose ledger does not balance, or that is not a database; no file is NOT_FOUND', async () => {
    const copy = path.join(dir, 'broken.db');
    assert.equal((await paygate(['backup', '--to', copy])).status, 0);
    const raw = new BetterSqlite3(copy);
    raw
      .prepare(
        'update ledger_entries set amount = amount + 1 where rowid = (select min(rowid) from ledger_entries)',
      )
      .run();
    raw.close();
    const v = await paygate(['backup', '--verify', copy]);
    assert.equal(v.status, 1);
    assert.equal(v.json.integrity, 'ok');
    assert.equal(v.json.ledger.ok, false);
    assert.ok(
      v.json.ledger.problems.some((p: string) => /does not balance/.test(p)),
      JSON.stringify(v.json.ledger),
    );

    const junk = path.join(dir, 'junk.db');
    fs.writeFileSync(junk, 'not a database at all, but long enough to be read as one '.repeat(20));
    const j = await paygate(['backup', '--verify', junk]);
    assert.equal(j.status, 1);
    assert.match(j.json.integrity, /not a readable SQLite database/);
    assert.equal(j.json.ledger.ok, false);

    const none = await paygate(['backup', '--verify', path.join(dir, 'none.db')]);
    assert.equal(none.status, 1);
    assert.equal(none.json.error.code, 'NOT_FOUND');
  });

  it('neither or both of --to and --verify is a usage error', async () => {
    for (const args of [
      ['backup'],
      ['backup', '--to', 'a.db', '--verify', 'b.db'],
      ['backup', '--to', 'a.db', '--timeout-s', '0'],
    ]) {
      const r = await paygate(args);
      assert.equal(r.status, 2, args.join(' '));
      assert.equal(r.json.error.code, 'USAGE_ERROR');
    }
  });
});
