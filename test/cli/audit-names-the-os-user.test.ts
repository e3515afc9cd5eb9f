/**
 * What the CLI changes is recorded in the activity log with who ran it (CONTRACT §11): `cli:` and
 * the operating-system user, for every command that writes the log, as the console lists it. The
 * first command runs as `bin/paygate.js` (which names the user); the others through the CLI's
 * `main` in this process, given that name as the process gives it, without a process start each.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';
import { paygateInProcess } from '../support/cli-in-process.ts';
import { cliAsync } from '../support/process.ts';
import { getPage, signedIn } from '../support/console.ts';
import { listAuditActions } from '../../src/audit/audit.repository.ts';

const ACTOR = `cli:${os.userInfo().username}`;

for (const kind of DATABASES) {
  describe(`the CLI's activity-log actor on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('names the operating-system user for each action, in the audit table and on the console', async () => {
      const g = gw();
      const env = { DATABASE_URL: g.testDb.url };
      const m = g.merchant.merchant_id;
      const run = async (...args: string[]) => {
        const r = await paygateInProcess([...args, '--json'], env, os.userInfo().username);
        assert.equal(r.status, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        return r.json;
      };
      const created = await cliAsync(
        ['user', 'create', '--email', 'ops@example.com', '--operator', '--json'],
        env,
      );
      assert.equal(created.status, 0, created.stdout + created.stderr);
      const ops = created.json;
      await run('wallet', 'credit', '--merchant', m, '--amount', '10.00');
      await run('merchant', 'rotate-secret', '--merchant', m);
      await run('key', 'rotate', '--merchant', m);
      await run('merchant', 'disable', '--merchant', m);
      await run('merchant', 'enable', '--merchant', m);
      await run('user', 'disable', '--email', 'ops@example.com');
      await run('user', 'enable', '--email', 'ops@example.com');

      // What the console's activity list reads.
      const rows = await listAuditActions(g.database.db, null, 200);
      const actions = rows.map((r) => r.action).sort();
      assert.deepEqual(actions, [
        'credit',
        'disable',
        'enable',
        'rotate_key',
        'rotate_secret',
        'user_create',
        'user_disable',
        'user_enable',
      ]);
      for (const r of rows) assert.equal(r.actor, ACTOR, `${r.action} names who ran it`);

      const browser = await signedIn(g, 'ops@example.com', ops.password);
      const page = await getPage(g, browser, `/dashboard/merchants/${m}`);
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(ACTOR), 'the console lists the CLI user');
    });
  });
}
