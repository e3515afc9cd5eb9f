/**
 * `paygate backup --to` while 50 connections create pay-ins (half of them settling theirs, so that
 * journals are being written too), on SQLite, the database the command copies: every pay-in answered
 * 200 before the backup started is in the copy; SQLite's integrity check passes on it; no journal in it
 * is partial (every one balances, every settled pay-in has its journal: the ledger check);
 * `backup --verify` is clean and leaves the copy as it was (read-only, never migrated); and the copy,
 * restored as docs/going-live.md says (its restore block, run as written), serves a `ledger verify`
 * that passes with every pay-in of the copy there. A soak: 50 connections and three CLI processes take
 * longer than `npm test` allows; test/cli/backup-command.test.ts holds the command's quick rules.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { sqlitePath } from '../../src/db/database.ts';
import { guideBlocks, localised, runBlock } from '../support/guide.ts';
import { startGateway, type Gateway } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';

const CONNECTIONS = 50;

describe('paygate backup while 50 connections create pay-ins (SQLite)', () => {
  let gw: Gateway;
  let dir: string;
  let dbFile: string;
  let stopped = false;

  before(async () => {
    gw = await startGateway('sqlite', { listen: true });
    dbFile = sqlitePath(gw.testDb.url)!;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-backup-'));
  });

  after(async () => {
    if (!stopped) await gw?.close();
    else await gw.testDb.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({ DATABASE_URL: gw.testDb.url });

  async function post(pathname: string, body: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${gw.baseUrl}${pathname}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.merchant.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  }

  it('copies every pay-in answered before it started, whole, checkable and restorable as the guide says', async () => {
    /** Pay-ins answered 200, with when the answer arrived. */
    const answered: { id: string; at: number }[] = [];
    let stop = false;
    let n = 0;
    const client = async (c: number) => {
      while (!stop) {
        const created = await post('/payments/onsite/payin', {
          money: { amount: 10 },
          merchant_order_no: `bk-${c}-${++n}`,
        });
        assert.equal(created.status, 200, JSON.stringify(created.json));
        answered.push({ id: created.json.payment_id, at: Date.now() });
        if (c % 2 === 0) {
          const settled = await post('/sandbox/payin/complete', {
            payment_id: created.json.payment_id,
            status: 'SUCCESS',
          });
          assert.equal(settled.status, 200, JSON.stringify(settled.json));
        }
      }
    };
    const clients = Array.from({ length: CONNECTIONS }, (_, c) => client(c));
    // Under way before the copy starts, and still running while it is taken.
    while (answered.length < 200) await new Promise((r) => setTimeout(r, 20));
    const copy = path.join(dir, 'copy.db');
    const started = Date.now();
    const before = answered.filter((a) => a.at < started).map((a) => a.id);
    const backup = await cliAsync(['backup', '--to', copy, '--json'], env());
    const during = answered.length;
    stop = true;
    await Promise.all(clients);
    assert.equal(backup.status, 0, backup.stdout + backup.stderr);
    assert.equal(backup.json.file, copy);
    assert.equal(backup.json.bytes, fs.statSync(copy).size);
    assert.ok(backup.json.pages > 0);
    assert.ok(answered.length > before.length, 'pay-ins were being created while the copy was taken');
    assert.ok(during > before.length);

    const raw = new BetterSqlite3(copy, { readonly: true, fileMustExist: true });
    const inCopy = new Set(
      (
        raw.prepare("select payment_id from transactions where kind = 'payin'").all() as {
          payment_id: string;
        }[]
      ).map((r) => r.payment_id),
    );
    assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
    const partial = raw
      .prepare(
        'select journal_id, sum(amount) as total from ledger_entries group by journal_id having sum(amount) != 0',
      )
      .all();
    raw.close();
    assert.deepEqual(partial, [], 'no journal is partial');
    const missing = before.filter((id) => !inCopy.has(id));
    assert.deepEqual(missing, [], `pay-ins answered before the backup started, missing from the copy`);

    const hash = createHash('sha256').update(fs.readFileSync(copy)).digest('hex');
    const verified = await cliAsync(['backup', '--verify', copy, '--json'], env());
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.equal(verified.json.integrity, 'ok');
    assert.equal(verified.json.ledger.ok, true, JSON.stringify(verified.json.ledger));
    assert.deepEqual(verified.json.ledger.pending_migrations, []);
    assert.ok(verified.json.ledger.journals > 0, 'the settled pay-ins journaled');
    assert.equal(
      createHash('sha256').update(fs.readFileSync(copy)).digest('hex'),
      hash,
      'verify changes nothing',
    );
    assert.deepEqual(
      fs.readdirSync(dir).sort(),
      ['copy.db'],
      'nothing left beside the copy (no partial file, no -wal or -shm)',
    );

    // The restore, as the guide writes it; the test stops the gateway as `systemctl stop` would.
    const restore = guideBlocks().find(
      (b) => b.run && b.section === 'Backups and restore' && b.script.includes('mv '),
    );
    assert.ok(restore, 'the guide has a restore block');
    await gw.paygate.app.close();
    await gw.database.close();
    stopped = true;
    const restored = await runBlock(
      localised(restore.script, [
        ['/var/lib/paygate/paygate.db', dbFile],
        ['sudo systemctl stop paygate', ':'],
        ['sudo systemctl start paygate', ':'],
      ]),
      { ...env(), COPY: copy },
    );
    assert.equal(restored.status, 0, restored.stdout + restored.stderr);
    const ledger = await cliAsync(['ledger', 'verify', '--json'], env());
    assert.equal(ledger.status, 0, ledger.stdout + ledger.stderr);
    const db = new BetterSqlite3(dbFile, { readonly: true, fileMustExist: true });
    const count = (
      db.prepare("select count(*) as n from transactions where kind = 'payin'").get() as { n: number }
    ).n;
    db.close();
    assert.equal(count, inCopy.size, 'the restored database is the copy');
  });
});
