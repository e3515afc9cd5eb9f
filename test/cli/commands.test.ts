/**
 * The `paygate` CLI as an operator uses it: every command with --json prints exactly one
 * JSON object; migrations are safe to run twice and from two processes at once; a rotated key stops
 * working on a running server; a bad setting stops start-up with one line naming it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createDatabase, DATABASES, type TestDatabase } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { ROOT, spawnServer } from '../support/process.ts';

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

        const test = await paygate(
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
        );
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
        assert.equal(merchants.length, 1);
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
        assert.equal(oneObject(unknown, 1).error.code, 'NOT_FOUND');
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

for (const kind of DATABASES) {
  describe(`paygate merchant rotate-secret on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('shows the new secret once and when the previous one stops signing beside it', async () => {
      const db: TestDatabase = await createDatabase(kind);
      const env = { DATABASE_URL: db.url, WEBHOOK_SECRET_OVERLAP_S: '3600' };
      try {
        const created = oneObject(await paygate(['merchant', 'create', '--name', 'Rotating', '--json'], env));
        assert.match(created.webhook_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        const id = created.merchant_id;
        const before = Date.now();
        const rotated = oneObject(
          await paygate(['merchant', 'rotate-secret', '--merchant', id, '--json'], env),
        );
        assert.deepEqual(Object.keys(rotated).sort(), [
          'merchant_id',
          'previous_secret_until',
          'webhook_secret',
        ]);
        assert.match(rotated.webhook_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        assert.notEqual(rotated.webhook_secret, created.webhook_secret);
        const until = Date.parse(rotated.previous_secret_until);
        assert.ok(
          until >= before + 3_600_000 && until <= Date.now() + 3_600_000,
          rotated.previous_secret_until,
        );

        const text = await paygate(['merchant', 'rotate-secret', '--merchant', id], env);
        assert.equal(text.status, 0, text.stderr);
        assert.match(
          text.stdout,
          /^webhook_secret: whsec_\S{44}\n\(shown once; callbacks are signed with it from now on, and with the previous one beside it until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d IST\)\n$/,
        );
        const noOverlap = oneObject(
          await paygate(['merchant', 'rotate-secret', '--merchant', id, '--json'], {
            ...env,
            WEBHOOK_SECRET_OVERLAP_S: '0',
          }),
        );
        assert.equal(noOverlap.previous_secret_until, null);
        const row = await paygate(['merchant', 'list', '--json'], env);
        assert.ok(!row.stdout.includes(noOverlap.webhook_secret) && !row.stdout.includes('whsec_'));
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

describe('the CLI as a newcomer meets it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-cli-'));
  const env = { DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` };
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The one line a usage error prints, and its exit status. */
  function oneLine(run: Run, status: number): string {
    assert.equal(run.status, status, `exit ${run.status}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
    const lines = run.stderr.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, `one line: ${run.stderr}`);
    assert.doesNotMatch(lines[0]!, /unexpected error|\bat .*\.ts:\d+/);
    return lines[0]!;
  }

  it('helps: --help, -h and help exit 0, and each command has its own help', async () => {
    const [long, short, word, cmd, helpCmd, group, unknown] = await Promise.all([
      paygate(['--help'], env),
      paygate(['-h'], env),
      paygate(['help'], env),
      paygate(['wallet', 'credit', '--help'], env),
      paygate(['help', 'wallet', 'credit'], env),
      paygate(['merchant', '--help'], env),
      paygate(['frobnicate', '-h'], env),
    ]);
    for (const run of [long, short, word, group, unknown]) {
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /^Usage: paygate <command>/);
      assert.match(run.stdout, /callbacks resend ID /);
    }
    for (const run of [cmd, helpCmd]) {
      assert.equal(run.status, 0, run.stderr);
      assert.match(
        run.stdout,
        /^Usage: paygate wallet credit --merchant ID --amount AMOUNT \[--currency CODE\]/,
      );
      assert.match(run.stdout, /--amount AMOUNT\s+rupees/);
    }
    const asJson = oneObject(await paygate(['wallet', 'credit', '--help', '--json'], env));
    assert.match(asJson.usage, /^Usage: paygate wallet credit/);
  });

  it('answers a missing subcommand, an unknown command or option and a bad value in one line, exit 2', async () => {
    const runs = await Promise.all([
      paygate(['merchant'], env),
      paygate(['frobnicate'], env),
      paygate(['merchant', 'create', '--nme', 'Shop'], env),
      paygate(['wallet', 'credit', '--merchant', 'mer_x', '--amount', '-5'], env),
      paygate(['merchant', 'create', '--name', 'Shop', '--vpa', 'not a vpa'], env),
      paygate(['callbacks', 'resend', 'a', 'b'], env),
      paygate(['wallet', 'show', '--merchant', 'mer_a', '--merchant', 'mer_b'], env),
      paygate(['user', 'create', '--email', 'not-an-address', '--operator'], env),
      paygate([], env),
      paygate(['constructor'], env),
    ]);
    const expected = [
      /^paygate: merchant needs a subcommand: create, list, disable, enable, rotate-secret$/,
      /^paygate: unknown command "frobnicate"; see paygate --help$/,
      /^paygate: merchant create: unknown option --nme; see paygate merchant create --help$/,
      // Not "write --amount=-5": that would only be refused next.
      /^paygate: wallet credit: --amount must not be negative \(-5\); see paygate wallet credit --help$/,
      /^paygate: --vpa: the UPI id must be handle@psp/,
      /^paygate: callbacks resend: unexpected argument b/,
      /^paygate: wallet show: --merchant was given more than once; see paygate wallet show --help$/,
      /^paygate: --email must be an address such as ops@example.com, not "not-an-address"$/,
      /^paygate: a command is needed; see paygate --help$/,
      /^paygate: unknown command "constructor"; see paygate --help$/,
    ];
    for (const [i, run] of runs.entries()) assert.match(oneLine(run, 2), expected[i]!);
    const asJson = await paygate(['merchant', 'create', '--name', 'Shop', '--vpa', 'shop', '--json'], env);
    assert.deepEqual(oneObject(asJson, 2).error.code, 'USAGE_ERROR');
  });

  it('names a bad setting with its range, says when the port is taken, and lists with headers', async () => {
    assert.match(
      oneLine(await paygate(['migrate'], { ...env, PAYIN_EXPIRY_S: '-1' }), 1),
      /^paygate: PAYIN_EXPIRY_S must be a whole number of at least 1, got "-1"$/,
    );
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((busy.address() as net.AddressInfo).port);
      const run = await paygate(['serve'], { ...env, PORT: port, HOST: '127.0.0.1' });
      const line = oneLine(run, 1);
      assert.equal(
        line,
        `paygate: cannot listen on 127.0.0.1:${port}: the port is in use; set PORT (or HOST) to another`,
      );
    } finally {
      busy.close();
    }
    assert.equal(
      (await paygate(['merchant', 'create', '--name', 'Listed Shop', '--vpa', 'listed@okaxis'], env)).status,
      0,
    );
    const list = await paygate(['merchant', 'list'], env);
    assert.equal(list.status, 0, list.stderr);
    const [header, ...rows] = list.stdout.trim().split('\n');
    assert.match(header!, /^MERCHANT_ID\s+MODE\s+STATUS\s+NAME$/);
    assert.ok(
      rows.some((r) => /^mer_\S+\s+test\s+active\s+(Listed Shop|Paygate Sandbox)/.test(r)),
      list.stdout,
    );
  });
});
