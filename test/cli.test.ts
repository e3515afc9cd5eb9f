/**
 * The `paygate` CLI as an operator uses it: every command with --json prints exactly one
 * JSON object; migrations are safe to run twice and from two processes at once; a rotated key stops
 * working on a running server; a bad setting stops start-up with one line naming it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { createDatabase, DATABASES, type TestDatabase } from './support/databases.ts';
import { skipFor } from './support/harness.ts';
import { ROOT, spawnServer } from './support/process.ts';

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `paygate ARGS` without blocking the test process, so several can run at once. */
function paygate(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/paygate.js'), ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ status, stdout, stderr, json });
    });
  });
}

/** Asserts a --json run: the exit status and exactly one JSON object on one line of stdout. */
function oneObject(run: Run, status = 0): any {
  assert.equal(run.status, status, `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  const lines = run.stdout.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `one line on stdout: ${run.stdout}`);
  const parsed = JSON.parse(lines[0] ?? '');
  assert.ok(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), 'a JSON object');
  return parsed;
}

async function balanceWith(baseUrl: string, key: string): Promise<number> {
  const res = await fetch(`${baseUrl}/wallet/balance`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{}',
  });
  await res.arrayBuffer();
  return res.status;
}

for (const kind of DATABASES) {
  describe(`paygate CLI on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('migrates from two processes at once, and again, and then manages merchants, wallets and the ledger', async () => {
      const db: TestDatabase = await createDatabase(kind);
      const env = { DATABASE_URL: db.url };
      try {
        const [a, b] = await Promise.all([
          paygate(['migrate', '--json'], env),
          paygate(['migrate', '--json'], env),
        ]);
        for (const run of [a, b]) assert.ok(Array.isArray(oneObject(run).applied));
        assert.deepEqual(oneObject(await paygate(['migrate', '--json'], env)), { applied: [] });

        const [test, live] = await Promise.all([
          paygate(
            [
              'merchant',
              'create',
              '--name',
              'Chai Point',
              '--callback-url',
              'https://chai.example.com/cb',
              '--vpa',
              'chai@okbank',
              '--json',
            ],
            env,
          ),
          paygate(['merchant', 'create', '--name', 'Live Shop', '--live', '--json'], env),
        ]);
        const created = oneObject(test);
        assert.deepEqual(Object.keys(created).sort(), [
          'api_key',
          'merchant_id',
          'mode',
          'name',
          'webhook_secret',
        ]);
        assert.equal(created.name, 'Chai Point');
        assert.equal(created.mode, 'test');
        assert.match(created.api_key, /^sk_test_[A-Za-z0-9]{20,}$/);
        assert.ok(created.webhook_secret.length >= 32);
        const liveCreated = oneObject(live);
        assert.equal(liveCreated.mode, 'live');
        assert.match(liveCreated.api_key, /^sk_live_/);

        const [list, credit, unknown, badAmount] = await Promise.all([
          paygate(['merchant', 'list', '--json'], env),
          paygate(
            ['wallet', 'credit', '--merchant', created.merchant_id, '--amount', '1000.10', '--json'],
            env,
          ),
          paygate(['wallet', 'show', '--merchant', 'mer_doesnotexist', '--json'], env),
          paygate(
            ['wallet', 'credit', '--merchant', created.merchant_id, '--amount', '10.001', '--json'],
            env,
          ),
        ]);
        const merchants = oneObject(list).merchants;
        assert.equal(merchants.length, 2);
        const listed = merchants.find((m: any) => m.merchant_id === created.merchant_id);
        assert.equal(listed.name, 'Chai Point');
        assert.equal(listed.mode, 'test');
        assert.equal(listed.status, 'active');
        assert.equal(listed.callback_url, 'https://chai.example.com/cb');
        assert.equal(listed.vpa, 'chai@okbank');
        assert.ok(
          !list.stdout.includes(created.api_key) && !list.stdout.includes(created.webhook_secret),
          'no key or secret in the list',
        );
        const credited = oneObject(credit);
        assert.equal(credited.available, 1000.1);
        assert.equal(credited.held, 0);
        assert.equal(credited.currency, 'INR');
        assert.equal(oneObject(unknown, 1).error.code, 'MERCHANT_NOT_FOUND');
        assert.match(oneObject(unknown, 1).error.message, /mer_doesnotexist/);
        assert.equal(oneObject(badAmount, 2).error.code, 'USAGE_ERROR');
        assert.match(oneObject(badAmount, 2).error.message, /amount/);

        const [shown, verified] = await Promise.all([
          paygate(['wallet', 'show', '--merchant', created.merchant_id, '--json'], env),
          paygate(['ledger', 'verify', '--json'], env),
        ]);
        assert.deepEqual(oneObject(shown), { currency: 'INR', available: 1000.1, held: 0 });
        assert.deepEqual(oneObject(verified), { ok: true, journals: 1, wallets: 1, problems: [] });

        // Key rotation against a running server: the old key stops working within 5 s.
        const server = await spawnServer(env);
        try {
          assert.equal(await balanceWith(server.baseUrl, created.api_key), 200);
          const rotated = oneObject(
            await paygate(['key', 'rotate', '--merchant', created.merchant_id, '--json'], env),
          );
          assert.equal(rotated.merchant_id, created.merchant_id);
          assert.match(rotated.api_key, /^sk_test_/);
          assert.notEqual(rotated.api_key, created.api_key);
          const rotatedAt = Date.now();
          let oldKey = 200;
          while (oldKey === 200 && Date.now() - rotatedAt < 5000) {
            oldKey = await balanceWith(server.baseUrl, created.api_key);
            if (oldKey === 200) await new Promise((r) => setTimeout(r, 100));
          }
          assert.equal(oldKey, 401, 'the old key is refused within 5 s of rotation');
          assert.equal(await balanceWith(server.baseUrl, rotated.api_key), 200);
          // No sandbox merchant was created on start-up: merchants existed already.
          assert.doesNotMatch(server.output(), /api_key/);
        } finally {
          await server.stop();
        }
      } finally {
        await db.drop();
      }
    });
  });
}

describe('paygate start-up with a bad setting', () => {
  it('stops with one line naming the setting and a non-zero exit', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'abc' }, /PORT/],
      [{ MAX_AMOUNT: '-1' }, /MAX_AMOUNT/],
      [{ PAYIN_FEE_BPS: '10001' }, /PAYIN_FEE_BPS/],
      [{ ALLOW_PRIVATE_CALLBACK_URLS: 'maybe' }, /ALLOW_PRIVATE_CALLBACK_URLS/],
    ];
    const runs = await Promise.all(
      cases.map(([env]) => paygate(['serve'], { DATABASE_URL: 'sqlite::memory:', ...env })),
    );
    for (const [i, run] of runs.entries()) {
      const [env, names] = cases[i] ?? [{}, /./];
      assert.notEqual(run.status, 0, JSON.stringify(env));
      assert.notEqual(run.status, null, 'it exits rather than hanging');
      const lines = run.stderr.split('\n').filter((l) => l.trim() !== '');
      assert.equal(lines.length, 1, `one line: ${run.stderr}`);
      assert.match(lines[0] ?? '', names);
      assert.doesNotMatch(run.stderr, /\bat .*\.ts:\d+/, 'no stack trace');
    }
  });
});
