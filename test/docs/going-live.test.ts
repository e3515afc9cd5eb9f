/**
 * `docs/going-live.md`, followed as written: every command block says whether it is run (and a block
 * not run says why), and every block marked `<!-- run -->` is run in bash, in the guide's order,
 * against a serving gateway and the fake providers behind their published documents (the spec
 * proxies), with only the guide's paths, the merchant id and `npx paygate` pointed at the test's
 * own: the settings check and `channels check`, a live merchant's creation, `channels rehearse` (the
 * test pays its QR through the fake Setu), the metrics the guide says to watch, a backup and its
 * verification, and the restore (after the test has stopped the gateway, as the guide's
 * `systemctl stop` would), after which the restored database is whole and its ledger clean.
 * The guide's blocks are SQLite's (its backup is SQLite's); the rehearsal is run on both databases
 * by test/cli/channels-rehearse.test.ts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { guideBlocks, localised, runBlock, type GuideBlock } from '../support/guide.ts';
import { sqlitePath } from '../../src/db/database.ts';
import { startLive, until, type LiveGateway } from '../support/live.ts';
import { CASHFREE_SPEC, SETU_SPEC, startSpecProxy, type SpecProxy } from '../support/spec-proxy.ts';

const blocks = guideBlocks();
const ran = new Set<GuideBlock>();

describe('docs/going-live.md', () => {
  it('says of every command block whether a test runs it, and why not when it does not', () => {
    assert.ok(blocks.length >= 8, `${blocks.length} blocks`);
    for (const b of blocks)
      assert.ok(b.marker !== null, `a block in "${b.section}" has no run or not-run marker:\n${b.script}`);
    for (const b of blocks.filter((x) => !x.run)) assert.match(b.marker!, /^not run: \S.{10,}/, b.script);
  });
});

describe('docs/going-live.md, its marked blocks run as written', () => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let setuProxy: SpecProxy;
  let cashfreeProxy: SpecProxy;
  let live: LiveGateway;
  let dir: string;
  let dbFile: string;
  let env: Record<string, string>;
  let replacements: [string, string][];
  let stopped = false;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    [setuProxy, cashfreeProxy] = await Promise.all([
      startSpecProxy(SETU_SPEC, setu.url),
      startSpecProxy(CASHFREE_SPEC, cashfree.url),
    ]);
    live = await startLive(
      'sqlite',
      { CHANNEL_POLL_MS: '2000', CHANNEL_TIMEOUT_MS: '3000' },
      {
        fakes: { setu, cashfree },
        proxies: { setu: setuProxy.url, cashfree: cashfreeProxy.url },
      },
    );
    dbFile = sqlitePath(live.gw.testDb.url)!;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-guide-'));
    fs.mkdirSync(path.join(dir, 'backups'));
    // The settings file the guide sources: the fakes' settings, this gateway's database and address.
    const settings = {
      DATABASE_URL: live.gw.testDb.url,
      PUBLIC_URL: live.gw.baseUrl,
      CHANNEL_POLL_MS: '2000',
      CHANNEL_TIMEOUT_MS: '3000',
      ...setu.env(setuProxy.url),
      ...cashfree.env(cashfreeProxy.url),
    };
    const envFile = path.join(dir, 'paygate.env');
    fs.writeFileSync(
      envFile,
      Object.entries(settings)
        .map(([k, v]) => `${k}='${v.replace(/'/g, `'\\''`)}'`)
        .join('\n'),
    );
    env = { ...settings };
    replacements = [
      ['/etc/paygate/paygate.env', envFile],
      ['/var/backups/paygate', path.join(dir, 'backups')],
      ['/var/lib/paygate/paygate.db', dbFile],
      // The test stops and starts the gateway itself (below).
      ['sudo systemctl stop paygate', ':'],
      ['sudo systemctl start paygate', ':'],
    ];
  });

  after(async () => {
    if (!stopped) await live?.gw.close();
    else await live.gw.testDb.drop();
    await live?.receiver.close();
    await Promise.all([setuProxy?.stop(), cashfreeProxy?.stop()]);
    await setu?.stop();
    await cashfree?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function block(section: string, includes: string): GuideBlock {
    const found = blocks.find((b) => b.run && b.section === section && b.script.includes(includes));
    assert.ok(found, `a run block in "${section}" with ${includes}`);
    return found;
  }

  async function run(b: GuideBlock, more: Record<string, string> = {}, also: [string, string][] = []) {
    ran.add(b);
    const r = await runBlock(localised(b.script, [...also, ...replacements]), { ...env, ...more });
    assert.equal(r.status, 0, `${b.script}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
    return r;
  }

  it('runs every marked block: settings and channels check, merchant, rehearsal, metrics, backup, restore', async () => {
    const check = await run(block('Before the first real rupee', 'channels check'));
    assert.match(check.stdout, /setu\s+ok/);
    assert.match(check.stdout, /cashfree\s+ok/);

    const created = await run(block('Before the first real rupee', 'merchant create'));
    const merchantId = /merchant_id:\s+(mer_\S+)/.exec(created.stdout)?.[1];
    assert.ok(merchantId, created.stdout);

    // The rehearsal, with the test paying its QR from "its own UPI app" (the fake Setu).
    setu.notifyUrl = `${live.gw.baseUrl}/channels/setu/notifications`;
    cashfree.notifyUrl = `${live.gw.baseUrl}/channels/cashfree/notifications`;
    const rehearse = block('Before the first real rupee', 'channels rehearse');
    const assignment = /^MERCHANT=\S+/m.exec(rehearse.script)![0];
    const known = new Set(setu.qrs.keys());
    const rehearsal = run(rehearse, {}, [[assignment, `MERCHANT=${merchantId}`]]);
    let qrId = '';
    await until(
      () => [...setu.qrs.keys()].some((id) => !known.has(id) && (qrId = id) !== ''),
      'the QR',
      60_000,
    );
    await setu.pay(setu.qrs.get(qrId)!.referenceId);
    const report = await rehearsal;
    for (const step of ['payin', 'topup', 'refund', 'payout'])
      assert.match(report.stdout, new RegExp(`^${step}\\s+ok`, 'm'), report.stdout);

    const metrics = await run(block('Monitoring', '/metrics'));
    assert.match(metrics.stdout, /paygate_channel_requests_total\{channel="setu"/);

    const backup = await run(block('Backups and restore', 'backup --to'));
    assert.match(backup.stdout, /backup written to/);
    assert.match(backup.stdout, /integrity ok\nledger ok/);
    const [copy] = fs.readdirSync(path.join(dir, 'backups'));
    assert.ok(copy, 'the copy is in the backup folder');

    // As `systemctl stop paygate`: the serving gateway stops, its database closed, the file kept.
    const { paygate } = live.gw;
    await paygate.worker.stop();
    await paygate.dispatcher.stop();
    await paygate.app.close();
    await live.gw.database.close();
    stopped = true;
    // A write-ahead log left behind (as after a crash) must not survive the restore.
    fs.writeFileSync(`${dbFile}-wal`, 'stale');
    await run(block('Backups and restore', 'mv '), { COPY: path.join(dir, 'backups', copy) });
    assert.ok(fs.existsSync(`${dbFile}.replaced`), 'what was there is kept');
    assert.ok(!fs.existsSync(`${dbFile}-wal`) || fs.readFileSync(`${dbFile}-wal`, 'utf8') !== 'stale');

    const ledger = await runBlock('npx paygate ledger verify && npx paygate merchant list --json', env);
    assert.equal(ledger.status, 0, ledger.stdout + ledger.stderr);
    assert.ok(ledger.stdout.includes(merchantId), 'the restored database has the merchant');

    const unrun = blocks.filter((b) => b.run && !ran.has(b));
    assert.deepEqual(
      unrun.map((b) => b.script),
      [],
      'every block marked run was run',
    );
  });
});
