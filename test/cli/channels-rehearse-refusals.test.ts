/**
 * What `paygate channels rehearse` refuses before it moves a rupee (CONTRACT §1, §10): live channels
 * only (`LIVE_CHANNEL_NOT_CONFIGURED`, exit 1, naming what is missing), a live merchant only
 * (`INVALID_STATE`; an unknown one is `NOT_FOUND`), and malformed options as usage errors
 * (exit 2): neither or both receivers, an account or IFSC that does not parse, an IFSC without an
 * account, a `--wait-s` out of range. Nothing is created by any of them.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate, openDatabase } from '../../src/db/database.ts';
import { buildServices } from '../../src/services.ts';

let dir: string;
let url: string;
let sandboxMerchant: string;

async function paygate(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; json: any }> {
  const saved = { ...process.env };
  Object.assign(process.env, { DATABASE_URL: url, ...env });
  let stdout = '';
  try {
    const { status } = await main([...args, '--json'], { stdout: (l) => (stdout += l), stderr: () => {} });
    return { status, json: JSON.parse(stdout) };
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}

/** Settings that make both live channels configured (nothing is called before the refusals). */
const LIVE = {
  SETU_BASE_URL: 'http://127.0.0.1:9',
  SETU_AUTH_URL: 'http://127.0.0.1:9',
  SETU_CLIENT_ID: 'id',
  SETU_CLIENT_SECRET: 'secret',
  SETU_MERCHANT_ID: 'merchant',
  SETU_WEBHOOK_SECRET: 'webhooksecret',
  CASHFREE_BASE_URL: 'http://127.0.0.1:9',
  CASHFREE_CLIENT_ID: 'id',
  CASHFREE_CLIENT_SECRET: 'secret',
  PUBLIC_URL: 'http://127.0.0.1:9',
};
const ACCOUNT = ['--payout-account', '123456789012', '--ifsc', 'HDFC0001234'];

describe('paygate channels rehearse refuses before it moves a rupee', () => {
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-rehearse-'));
    url = `sqlite:${path.join(dir, 'paygate.db')}`;
    const database = openDatabase(url);
    await migrate(database);
    sandboxMerchant = (
      await buildServices(loadConfig({ DATABASE_URL: url }), database).merchants.create({ name: 'S' })
    ).merchant_id;
    await database.close();
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function transactions(): Promise<number> {
    const database = openDatabase(url);
    const n = await database.db
      .selectFrom('transactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await database.close();
    return Number(n.n);
  }

  it('needs both live channels, naming what is missing', async () => {
    const r = await paygate(['channels', 'rehearse', '--merchant', sandboxMerchant, ...ACCOUNT]);
    assert.equal(r.status, 1);
    assert.equal(r.json.error.code, 'LIVE_CHANNEL_NOT_CONFIGURED');
    assert.match(r.json.error.message, /Setu.*Cashfree/);
  });

  it('needs a live merchant: a sandbox one is INVALID_STATE, an unknown one not found', async () => {
    const sandbox = await paygate(['channels', 'rehearse', '--merchant', sandboxMerchant, ...ACCOUNT], LIVE);
    assert.equal(sandbox.status, 1);
    assert.equal(sandbox.json.error.code, 'INVALID_STATE');
    const unknown = await paygate(['channels', 'rehearse', '--merchant', 'mer_nobody', ...ACCOUNT], LIVE);
    assert.equal(unknown.status, 1);
    assert.equal(unknown.json.error.code, 'NOT_FOUND');
    assert.equal(await transactions(), 0, 'nothing created');
  });

  it('malformed options are usage errors (exit 2)', async () => {
    for (const args of [
      [],
      [...ACCOUNT, '--payout-vpa', 'me@okaxis'],
      ['--payout-account', '12', '--ifsc', 'HDFC0001234'],
      ['--payout-account', '123456789012', '--ifsc', 'hdfc0001234'],
      ['--payout-account', '123456789012'],
      ['--payout-vpa', 'me@okaxis', '--ifsc', 'HDFC0001234'],
      ['--payout-vpa', 'not a vpa'],
      [...ACCOUNT, '--wait-s', '0'],
      [...ACCOUNT, '--wait-s', '1.5'],
    ]) {
      const r = await paygate(['channels', 'rehearse', '--merchant', sandboxMerchant, ...args], LIVE);
      assert.equal(r.status, 2, `${args.join(' ')}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'USAGE_ERROR');
    }
    assert.equal(await transactions(), 0, 'nothing created');
  });
});
