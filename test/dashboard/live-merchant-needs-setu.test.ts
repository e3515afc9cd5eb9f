/**
 * A live merchant from the console is created only with its UPI id registered with Setu (CONTRACT
 * §10, §11), as from the CLI, over HTTP on both databases: without Setu, an operator's complete,
 * valid create-merchant form with mode=live is refused 403 LIVE_CHANNEL_NOT_CONFIGURED, told above
 * the form filled in as it was sent, and nothing is created (no merchant, no key, no activity); with
 * Setu, the same form registers the UPI id and creates the live merchant.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { postForm, signedIn } from '../support/console.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { startLive } from '../support/live.ts';

const PASSWORD = 'correct horse battery';
const VPA = 'console.shop@okbank';
const FORM = {
  name: 'Console Live Shop',
  mode: 'live',
  vpa: VPA,
  callback_url: 'https://shop.example/cb',
};

/** Merchants, API keys and merchant creations in the activity log. */
async function counts(gw: Gateway): Promise<Record<string, number>> {
  const db = gw.database.db;
  const count = async (table: 'merchants' | 'api_keys') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const audits = await db
    .selectFrom('audit_actions')
    .select('id')
    .where('action', '=', 'merchant_create')
    .execute();
  return { merchants: await count('merchants'), keys: await count('api_keys'), audits: audits.length };
}

async function operator(gw: Gateway, email: string) {
  await testAccounts(gw.database.db).createUser({
    email,
    role: 'operator',
    merchantId: null,
    password: PASSWORD,
  });
  return signedIn(gw, email, PASSWORD);
}

for (const kind of DATABASES) {
  describe(`the console's live merchant needs Setu (${kind})`, { skip: await skipFor(kind) }, () => {
    it('without Setu: 403 LIVE_CHANNEL_NOT_CONFIGURED above the form as it was sent, and nothing created', async () => {
      const gw = await startGateway(kind);
      try {
        const ops = await operator(gw, `ops-${kind}@paygate.example`);
        const before = await counts(gw);
        const res = await postForm(gw, ops, '/dashboard/merchants', FORM);
        assert.equal(res.statusCode, 403, res.body.slice(0, 500));
        assert.match(
          res.body,
          /<p class="flash error" role="alert">Not created: a live merchant needs Setu to register its UPI id, and Setu is not configured/,
        );
        assert.doesNotMatch(
          res.body,
          /sk_(live|test)_[A-Za-z0-9]{40}|whsec_[A-Za-z0-9+/]/,
          'no key or secret shown',
        );
        assert.match(
          res.body,
          /<input id="m-name" name="name" required maxlength="100" value="Console Live Shop">/,
        );
        assert.match(res.body, new RegExp(`<input id="m-vpa" name="vpa" maxlength="320" value="${VPA}">`));
        assert.match(res.body, /<option value="live" selected>/);
        assert.deepEqual(await counts(gw), before, 'nothing was created');
        assert.equal((await gw.paygate.services.merchants.list()).filter((m) => m.mode === 'live').length, 0);
      } finally {
        await gw.close();
      }
    });

    it('with Setu: the same form registers the UPI id with Setu and creates the live merchant', async () => {
      const live = await startLive(kind);
      try {
        const ops = await operator(live.gw, `ops-live-${kind}@paygate.example`);
        const before = await counts(live.gw);
        const res = await postForm(live.gw, ops, '/dashboard/merchants', FORM);
        assert.equal(res.statusCode, 201, res.body.slice(0, 500));
        assert.match(res.body, /sk_live_[A-Za-z0-9]{40}/);
        assert.ok(
          [...live.setu.vpas.values()].some((v) => v.vpa === VPA),
          'the UPI id is registered under the Setu merchant',
        );
        const made = (await live.gw.paygate.services.merchants.list()).filter((m) => m.name === FORM.name);
        assert.deepEqual(
          made.map((m) => [m.mode, m.vpa]),
          [['live', VPA]],
        );
        assert.deepEqual(await counts(live.gw), {
          merchants: before.merchants! + 1,
          keys: before.keys! + 1,
          audits: before.audits! + 1,
        });
      } finally {
        await live.gw.close();
        await live.receiver.close();
        await live.setu.stop();
        await live.cashfree.stop();
      }
    });
  });
}
