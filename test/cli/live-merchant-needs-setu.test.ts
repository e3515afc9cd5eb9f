/**
 * `paygate merchant create --live` while Setu is not configured (CONTRACT §11): exit 1 with
 * `LIVE_CHANNEL_NOT_CONFIGURED`, in words and under `--json`, and nothing created: no merchant, no
 * key. A sandbox merchant is still made as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDatabase, DATABASES } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';
import { paygateInProcess } from '../support/cli-in-process.ts';
import { openDatabase } from '../../src/db/database.ts';

/** Merchants and API keys in the database. */
async function counts(url: string): Promise<{ merchants: number; keys: number }> {
  const database = openDatabase(url);
  try {
    const count = async (table: 'merchants' | 'api_keys') =>
      Number(
        (
          await database.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return { merchants: await count('merchants'), keys: await count('api_keys') };
  } finally {
    await database.close();
  }
}

const LIVE = ['merchant', 'create', '--name', 'Live Shop', '--live', '--vpa', 'live.shop@okbank'];

for (const kind of DATABASES) {
  describe(`paygate merchant create --live without Setu on ${kind}`, { skip: await skipFor(kind) }, () => {
    it('exits 1 with LIVE_CHANNEL_NOT_CONFIGURED and creates no merchant and no key', async () => {
      const db = await createDatabase(kind);
      const env = { DATABASE_URL: db.url };
      try {
        const sandbox = await paygateInProcess(['merchant', 'create', '--name', 'Shop', '--json'], env);
        assert.equal(sandbox.status, 0, sandbox.stdout + sandbox.stderr);
        const before = await counts(db.url);
        assert.deepEqual(before, { merchants: 1, keys: 1 });

        const json = await cliAsync([...LIVE, '--json'], env);
        assert.equal(json.status, 1, json.stdout + json.stderr);
        assert.deepEqual(Object.keys(json.json), ['error']);
        assert.equal(json.json.error.code, 'LIVE_CHANNEL_NOT_CONFIGURED');
        assert.match(json.json.error.message, /Setu/);

        const words = await paygateInProcess(LIVE, env);
        assert.equal(words.status, 1);
        assert.equal(words.stdout, '');
        assert.match(words.stderr, /^paygate: LIVE_CHANNEL_NOT_CONFIGURED: .*Setu.*\n$/);

        assert.deepEqual(await counts(db.url), before, 'nothing was created');
      } finally {
        await db.drop();
      }
    });
  });
}
