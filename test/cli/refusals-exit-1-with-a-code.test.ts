/**
 * Every refusal of a well-formed command line exits 1 with a code (CONTRACT §1): the API's code where
 * one applies (§8), else NOT_FOUND, CONFLICT or INVALID_STATE. One table over the commands: each
 * refusal under `--json` is exactly `{"error":{"code","message"}}` on one line, and in words one
 * line on stderr that starts with the code. Nothing is left half-done by a refusal.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';
import { paygateInProcess } from '../support/cli-in-process.ts';

const UNKNOWN_ID = 'Zz9'.repeat(10) + 'Zz';
const ACCOUNT = ['--payout-account', '123456789012', '--ifsc', 'HDFC0001234'];

for (const kind of DATABASES) {
  describe(`paygate refusals on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('exit 1 with the code in --json and in words, for every command that can refuse', async () => {
      const g = gw();
      const env = { DATABASE_URL: g.testDb.url };
      const pending = (
        await g.post('/payments/onsite/payin', { money: { amount: 5 }, merchant_order_no: 'r-1' })
      ).body.payment_id;
      const paid = (
        await g.post('/payments/onsite/payin', { money: { amount: 5 }, merchant_order_no: 'r-2' })
      ).body.payment_id;
      assert.equal(
        (await g.post('/sandbox/payin/complete', { payment_id: paid, status: 'SUCCESS' })).status,
        200,
      );
      const ops = await paygateInProcess(['user', 'create', '--email', 'ops@example.com', '--operator'], env);
      assert.equal(ops.status, 0, ops.stderr);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-refusals-'));
      const existing = path.join(dir, 'exists.db');
      fs.writeFileSync(existing, '');
      const m = g.merchant.merchant_id;

      const table: [string[], string][] = [
        [
          ['merchant', 'create', '--name', 'Live', '--live', '--vpa', 'live@okbank'],
          'LIVE_CHANNEL_NOT_CONFIGURED',
        ],
        [['merchant', 'disable', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [['merchant', 'enable', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [['merchant', 'rotate-secret', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [['key', 'rotate', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [['wallet', 'credit', '--merchant', 'mer_nope', '--amount', '1.00'], 'NOT_FOUND'],
        [['wallet', 'show', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [
          ['wallet', 'credit', '--merchant', m, '--amount', '1.00', '--currency', 'USD'],
          'VALIDATION_INVALID_CURRENCY',
        ],
        [['wallet', 'show', '--merchant', m, '--currency', 'USD'], 'VALIDATION_INVALID_CURRENCY'],
        [['callbacks', 'resend', UNKNOWN_ID], 'PAYMENT_NOT_FOUND'],
        [['callbacks', 'resend', pending], 'INVALID_STATE'],
        [['refund', 'create', '--payment', UNKNOWN_ID, '--amount', '1.00'], 'PAYMENT_NOT_FOUND'],
        [['refund', 'create', '--payment', pending, '--amount', '1.00'], 'PAYMENT_NOT_REFUNDABLE'],
        [['refund', 'create', '--payment', paid, '--amount', '6.00'], 'REFUND_EXCEEDS_PAYMENT'],
        [['refund', 'show', UNKNOWN_ID], 'PAYMENT_NOT_FOUND'],
        [['channels', 'check'], 'LIVE_CHANNEL_NOT_CONFIGURED'],
        [['channels', 'rehearse', '--merchant', m, ...ACCOUNT], 'LIVE_CHANNEL_NOT_CONFIGURED'],
        [['exceptions', 'resolve', '1', '--action', 'dismiss', '--note', 'x'], 'NOT_FOUND'],
        [['reconcile'], 'LIVE_CHANNEL_NOT_CONFIGURED'],
        [['reconcile', '--channel', 'cashfree'], 'LIVE_CHANNEL_NOT_CONFIGURED'],
        [['user', 'create', '--email', 'a@example.com', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [['user', 'create', '--email', 'ops@example.com', '--operator'], 'CONFLICT'],
        [['user', 'list', '--merchant', 'mer_nope'], 'NOT_FOUND'],
        [['user', 'disable', '--email', 'nobody@example.com'], 'NOT_FOUND'],
        [['user', 'enable', '--email', 'nobody@example.com'], 'NOT_FOUND'],
        [['user', 'reset-password', '--email', 'nobody@example.com'], 'NOT_FOUND'],
        [['backup', '--verify', path.join(dir, 'absent.db')], 'NOT_FOUND'],
        ...(kind === 'sqlite'
          ? ([
              [['backup', '--to', existing], 'CONFLICT'],
              [['backup', '--to', path.join(dir, 'no-such-folder', 'copy.db')], 'NOT_FOUND'],
            ] as [string[], string][])
          : []),
      ];
      try {
        const merchantsBefore = (await g.paygate.services.merchants.list()).length;
        for (const [args, code] of table) {
          const line = `paygate ${args.join(' ')}`;
          const json = await paygateInProcess([...args, '--json'], env);
          assert.equal(json.status, 1, `${line} --json: ${json.stdout}${json.stderr}`);
          assert.equal(json.stdout.split('\n').filter(Boolean).length, 1, `${line}: one line`);
          assert.deepEqual(Object.keys(json.json), ['error'], line);
          assert.deepEqual(Object.keys(json.json.error), ['code', 'message'], line);
          assert.equal(json.json.error.code, code, `${line}: ${json.json.error.message}`);
          const words = await paygateInProcess(args, env);
          assert.equal(words.status, 1, `${line}: ${words.stderr}`);
          assert.equal(words.stdout, '', line);
          assert.match(words.stderr, new RegExp(`^paygate: ${code}: \\S[^\\n]*\\n$`), line);
        }
        assert.equal((await g.paygate.services.merchants.list()).length, merchantsBefore, 'nothing created');
        // The process around `main` exits with the same status and line.
        const spawned = await cliAsync(
          ['wallet', 'credit', '--merchant', 'mer_nope', '--amount', '1.00'],
          env,
        );
        assert.equal(spawned.status, 1);
        assert.match(spawned.stderr, /^paygate: NOT_FOUND: no merchant with id mer_nope\n$/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
