/**
 * What the serving process prints: the first-run banner of `npm start` (a sandbox merchant and a
 * curl line that works as printed), and logs at `debug` that never carry an API key, a webhook
 * secret or a full account number, whatever the requests did.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli, spawnServer } from '../support/process.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

const json = { 'content-type': 'application/json' };

describe('the first-run banner', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-banner-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('shows a new sandbox merchant and a curl line that creates a pay-in as printed; only on the first run', async () => {
    const env = { DATABASE_URL: `sqlite:${path.join(dir, 'banner.db')}` };
    const first = await spawnServer(env);
    let out: string;
    try {
      out = first.output();
      const key = /api_key:\s+(sk_test_[A-Za-z0-9]{40})/.exec(out)?.[1];
      const secret = /webhook_secret:\s+(\S+)/.exec(out)?.[1];
      assert.ok(key, out);
      assert.ok(secret && secret.length >= 32, out);
      // The curl line, taken apart as a shell would: URL, headers, body.
      const curl = out.split('\n').find((l) => l.trim().startsWith('curl '));
      assert.ok(curl, out);
      const url = /-X POST (\S+)/.exec(curl)![1]!;
      const headers = Object.fromEntries(
        [...curl.matchAll(/-H '([^:]+): ([^']+)'/g)].map((m) => [m[1]!.toLowerCase(), m[2]!]),
      );
      const body = /-d '([^']+)'/.exec(curl)![1]!;
      assert.equal(headers.authorization, `Bearer ${key}`);
      const res = await fetch(url.replace(/^http:\/\/localhost:\d+/, first.baseUrl), {
        method: 'POST',
        headers,
        body,
      });
      assert.equal(res.status, 200);
      const created = (await res.json()) as {
        success: boolean;
        payment_id: string;
        payment_url: string;
        amount: number;
      };
      assert.equal(created.success, true);
      assert.equal(created.amount, 500);
      assert.match(created.payment_id, /^[A-Za-z0-9]{32}$/);
      // The banner is for the person at the terminal: no log line carries the key or the secret.
      for (const line of out.split('\n').filter((l) => l.startsWith('{')))
        assert.ok(!line.includes(key) && !line.includes(secret), line);
    } finally {
      await first.stop();
    }
    const second = await spawnServer(env);
    try {
      assert.doesNotMatch(second.output(), /api_key|webhook_secret/);
    } finally {
      await second.stop();
    }
  });
});

describe('logs at debug', () => {
  let dir: string;
  let receiver: Receiver;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-logs-'));
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('never carry a key, a webhook secret or a full account number', async () => {
    const env = {
      DATABASE_URL: `sqlite:${path.join(dir, 'logs.db')}`,
      ALLOW_PRIVATE_CALLBACK_URLS: 'true',
      SANDBOX_PAYOUT_SETTLE_MS: '100',
      WORKER_POLL_MS: '100',
      CALLBACK_RETRY_INTERVAL_MS: '100',
      CALLBACK_MAX_RETRIES: '1',
    };
    assert.equal(cli(['migrate'], env).status, 0);
    const made = cli(
      ['merchant', 'create', '--name', 'Log Shop', '--callback-url', receiver.url('/cb'), '--json'],
      env,
    );
    assert.equal(made.status, 0, made.stderr);
    const { merchant_id: merchantId, api_key: key, webhook_secret: secret } = made.json;
    assert.equal(cli(['wallet', 'credit', '--merchant', merchantId, '--amount', '1000.00'], env).status, 0);
    const server = await spawnServer({ ...env, LOG_LEVEL: 'debug' });
    const account = '123456789012345';
    const wrongKey = `sk_test_${'W'.repeat(40)}`;
    try {
      const call = (p: string, body: unknown, k = key) =>
        fetch(`${server.baseUrl}${p}`, {
          method: 'POST',
          headers: { ...json, authorization: `Bearer ${k}` },
          body: JSON.stringify(body),
        });
      const payin = (await (
        await call('/payments/onsite/payin', { money: { amount: 5 }, merchant_order_no: 'log-1' })
      ).json()) as {
        payment_id: string;
      };
      assert.equal(
        (await call('/sandbox/payin/complete', { payment_id: payin.payment_id, status: 'SUCCESS' })).status,
        200,
      );
      const payout = await call('/payments/payout', {
        money: { amount: 2 },
        merchant_order_no: 'log-2',
        receiver: { name: 'Asha Rao', account_no: account, ifsc_code: 'HDFC0001234' },
      });
      assert.equal(payout.status, 200);
      // Failures of every kind: a wrong key, a malformed body carrying the account number, a bad payout.
      assert.equal((await call('/wallet/balance', {}, wrongKey)).status, 401);
      await fetch(`${server.baseUrl}/payments/payout`, {
        method: 'POST',
        headers: { ...json, authorization: `Bearer ${key}` },
        body: `{"receiver":{"account_no":"${account}"`,
      });
      await call('/payments/payout', {
        money: { amount: 2 },
        merchant_order_no: 'log-3',
        receiver: { account_no: account },
      });
      await receiver.waitFor(() => receiver.received.length >= 2, 'two callbacks');
      assert.equal((await call('/callbacks/resend', { payment_id: payin.payment_id })).status, 200);
      await receiver.waitFor(() => receiver.received.length >= 3, 'the resent callback');
    } finally {
      await server.stop();
    }
    const out = server.output();
    assert.match(out, /"level":20/, 'debug lines were written');
    for (const [what, secretText] of [
      ['the API key', key],
      ['the API key without its prefix', key.slice('sk_test_'.length)],
      ['a wrong key', wrongKey],
      ['the webhook secret', secret],
      ['the account number', account],
    ] as const)
      assert.ok(!out.includes(secretText), `${what} appears in the logs`);
  });
});
