/**
 * Console users on both databases (CONTRACT §11): `paygate user list|disable|enable|reset-password`
 * (through the CLI's `main` in this process, as `cli/refusals-exit-1-with-a-code` runs it),
 * the operator's Users page, a user's own password change, a disabled merchant's users locked out,
 * and input that PostgreSQL cannot store (NUL) or that is over-long answered 400, never 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type AccountService,
  FAILURES_PER_PAIR,
  SIGN_IN_WINDOW_MS,
} from '../../src/dashboard/accounts.service.ts';
import {
  getPage,
  postForm,
  postSignIn,
  setCookies,
  signedIn,
  type ConsoleBrowser,
} from '../support/console.ts';
import { DATABASES } from '../support/databases.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { paygateInProcess } from '../support/cli-in-process.ts';

const PASSWORD = 'correct horse battery';

for (const kind of DATABASES) {
  describe(`console users (${kind})`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    let accounts: AccountService;
    /** Added to the gateway's clock: a test moves it past the failed-password window. */
    let skew = 0;

    before(async () => {
      gw = await startGateway(kind, {
        env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true' },
        now: () => Date.now() + skew,
      });
      accounts = testAccounts(gw.database.db);
      await accounts.createUser({
        email: 'ops@example.com',
        role: 'operator',
        merchantId: null,
        password: PASSWORD,
      });
    });
    after(() => gw.close());

    const env = () => ({ DATABASE_URL: gw.testDb.url });
    const get = (b: ConsoleBrowser, url: string) => getPage(gw, b, url);
    const post = (b: ConsoleBrowser, url: string, fields: Record<string, string> = {}) =>
      postForm(gw, b, url, fields);
    /** True while the browser's session still opens the overview. */
    const alive = async (b: ConsoleBrowser) => (await get(b, '/dashboard')).statusCode === 200;
    const auditOf = async (action: string) =>
      gw.database.db.selectFrom('audit_actions').selectAll().where('action', '=', action).execute();

    async function merchantUser(email: string, merchantId = gw.merchant.merchant_id) {
      await accounts.createUser({ email, role: 'merchant', merchantId, password: PASSWORD });
      return signedIn(gw, email, PASSWORD);
    }

    it('paygate user list|disable|enable|reset-password: sessions end, the old password stops, each is audited', async () => {
      const made = await paygateInProcess(
        ['user', 'create', '--email', 'Clerk@Example.com', '--merchant', gw.merchant.merchant_id, '--json'],
        env(),
      );
      assert.equal(made.status, 0, made.stderr);
      const created = await auditOf('user_create');
      assert.ok(
        created.some(
          (r) =>
            r.actor.startsWith('cli:') &&
            r.merchant_id === gw.merchant.merchant_id &&
            r.detail.includes('clerk@example.com'),
        ),
        JSON.stringify(created),
      );
      const op = await paygateInProcess(
        ['user', 'create', '--email', 'op2@example.com', '--operator', '--json'],
        env(),
      );
      assert.equal(op.status, 0, op.stderr);
      assert.ok(
        (await auditOf('user_create')).some(
          (r) => r.detail === 'created operator user op2@example.com' && r.merchant_id === null,
        ),
      );

      const first = await signedIn(gw, 'clerk@example.com', made.json.password);
      const second = await signedIn(gw, 'clerk@example.com', made.json.password);

      const listed = await paygateInProcess(
        ['user', 'list', '--merchant', gw.merchant.merchant_id, '--json'],
        env(),
      );
      assert.equal(listed.status, 0, listed.stderr);
      const clerk = listed.json.users.find((u: any) => u.email === 'clerk@example.com');
      assert.deepEqual(
        { ...clerk, created_at: typeof clerk.created_at },
        {
          user_id: made.json.user_id,
          email: 'clerk@example.com',
          role: 'merchant',
          merchant_id: gw.merchant.merchant_id,
          status: 'active',
          created_at: 'string',
        },
      );
      assert.ok(listed.json.users.every((u: any) => u.merchant_id === gw.merchant.merchant_id));
      assert.ok(!JSON.stringify(listed.json).includes('scrypt'));

      const disabled = await paygateInProcess(
        ['user', 'disable', '--email', 'clerk@example.com', '--json'],
        env(),
      );
      assert.equal(disabled.status, 0, disabled.stderr);
      assert.equal(disabled.json.status, 'disabled');
      assert.equal(await alive(first), false);
      assert.equal(await alive(second), false);
      const refused = await postSignIn(gw, 'clerk@example.com', made.json.password);
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /This account is disabled/);
      assert.equal((await auditOf('user_disable')).length, 1);

      const enabled = await paygateInProcess(
        ['user', 'enable', '--email', 'clerk@example.com', '--json'],
        env(),
      );
      assert.equal(enabled.json.status, 'active');
      const third = await signedIn(gw, 'clerk@example.com', made.json.password);
      assert.equal((await auditOf('user_enable')).length, 1);

      const reset = await paygateInProcess(
        ['user', 'reset-password', '--email', 'clerk@example.com', '--json'],
        env(),
      );
      assert.equal(reset.status, 0, reset.stderr);
      assert.match(reset.json.password, /^[A-Za-z0-9]{20}$/);
      assert.equal(await alive(third), false);
      assert.equal(
        (await postSignIn(gw, 'clerk@example.com', made.json.password, '10.0.0.2')).statusCode,
        401,
      );
      await signedIn(gw, 'clerk@example.com', reset.json.password);
      const audited = await auditOf('user_reset_password');
      assert.equal(audited.length, 1);
      assert.ok(!JSON.stringify(audited).includes(reset.json.password));

      const unknown = await paygateInProcess(
        ['user', 'disable', '--email', 'nobody@example.com', '--json'],
        env(),
      );
      assert.equal(unknown.status, 1);
      assert.equal(unknown.json.error.code, 'NOT_FOUND');
      const bad = await paygateInProcess(
        ['user', 'reset-password', '--email', 'not-an-address', '--json'],
        env(),
      );
      assert.equal(bad.status, 2);
      assert.equal(bad.json.error.code, 'USAGE_ERROR');
    });

    it("the operator's Users page lists, disables and enables users; a merchant's user cannot reach it", async () => {
      const ops = await signedIn(gw, 'ops@example.com', PASSWORD);
      const shop = await merchantUser('page-user@example.com');
      const page = await get(ops, '/dashboard/users');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /page-user@example\.com/);
      const { id } = await gw.database.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'page-user@example.com')
        .executeTakeFirstOrThrow();
      const me = await gw.database.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'ops@example.com')
        .executeTakeFirstOrThrow();

      // A merchant's user sends a complete, valid form: nothing there for them, and nothing changes.
      const other = await merchantUser('colleague@example.com');
      const theirs = await gw.database.db
        .selectFrom('users')
        .select('id')
        .where('email', '=', 'colleague@example.com')
        .executeTakeFirstOrThrow();
      assert.equal(
        (await post(shop, `/dashboard/users/${theirs.id}/status`, { status: 'disabled' })).statusCode,
        404,
      );
      assert.equal((await get(shop, '/dashboard/users')).statusCode, 404);
      assert.equal(await alive(other), true);

      const off = await post(ops, `/dashboard/users/${id}/status`, { status: 'disabled' });
      assert.equal(off.statusCode, 303);
      assert.equal(await alive(shop), false);
      assert.equal((await postSignIn(gw, 'page-user@example.com', PASSWORD)).statusCode, 403);
      assert.equal(
        (await post(ops, `/dashboard/users/${me.id}/status`, { status: 'disabled' })).statusCode,
        400,
      );
      assert.equal(await alive(ops), true);
      assert.equal((await post(ops, `/dashboard/users/${id}/status`, { status: 'active' })).statusCode, 303);
      await signedIn(gw, 'page-user@example.com', PASSWORD);
      const rows = await auditOf('user_disable');
      assert.ok(
        rows.some((r) => r.actor === 'ops@example.com' && r.detail === 'disabled user page-user@example.com'),
      );
    });

    it('a user changes their own password: the current one must be right; their other browsers are signed out', async () => {
      const here = await merchantUser('changer@example.com');
      const elsewhere = await signedIn(gw, 'changer@example.com', PASSWORD);
      const next = 'a brand new passphrase';
      const wrong = await post(here, '/dashboard/account/password', {
        current: 'not the password',
        password: next,
        confirm: next,
      });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /The current password is wrong/);
      const differ = await post(here, '/dashboard/account/password', {
        current: PASSWORD,
        password: next,
        confirm: `${next}!`,
      });
      assert.equal(differ.statusCode, 400);
      const short = await post(here, '/dashboard/account/password', {
        current: PASSWORD,
        password: 'short',
        confirm: 'short',
      });
      assert.equal(short.statusCode, 400);
      assert.equal(await alive(elsewhere), true, 'a refused change ends no session');

      const ok = await post(here, '/dashboard/account/password', {
        current: PASSWORD,
        password: next,
        confirm: next,
      });
      assert.equal(ok.statusCode, 303);
      assert.equal(await alive(here), true);
      assert.equal(await alive(elsewhere), false);
      assert.equal((await postSignIn(gw, 'changer@example.com', PASSWORD, '10.0.0.3')).statusCode, 401);
      await signedIn(gw, 'changer@example.com', next);
      assert.equal((await auditOf('user_change_password')).length, 1);
    });

    it('wrong current passwords are limited like failed sign-ins: past the limit even the right one waits (429) at that address, and the password is unchanged', async () => {
      const here = await merchantUser('guesser@example.com');
      const next = 'the password they wanted';
      const change = (current: string, address: string) =>
        gw.app.inject({
          method: 'POST',
          url: '/dashboard/account/password',
          remoteAddress: address,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: here.cookie },
          payload: new URLSearchParams({
            current,
            password: next,
            confirm: next,
            csrf: here.csrf,
          }).toString(),
        });
      const hash = async () =>
        (
          await gw.database.db
            .selectFrom('users')
            .select('password_hash')
            .where('email', '=', 'guesser@example.com')
            .executeTakeFirstOrThrow()
        ).password_hash;
      const before = await hash();
      for (let i = 0; i < FAILURES_PER_PAIR; i++) {
        const wrong = await change(`guess number ${i}!`, '10.3.0.1');
        assert.equal(wrong.statusCode, 400, `guess ${i}`);
        assert.match(wrong.body, /The current password is wrong/);
      }
      const limited = await change(PASSWORD, '10.3.0.1');
      assert.equal(limited.statusCode, 429, 'the right password waits too: it is not even checked');
      assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After');
      assert.match(limited.body, /Too many wrong passwords from this address; try again in \d+ min/);
      assert.match(limited.body, /<h1>Your account<\/h1>/, 'the account page, with the reason');
      assert.equal(await hash(), before, 'the password is unchanged');
      assert.equal(await alive(here), true, 'the limit ends no session');
      // One count per (account, address): the guesses made through the console hold its sign-in there too,
      // and nowhere else.
      assert.equal((await postSignIn(gw, 'guesser@example.com', PASSWORD, '10.3.0.1')).statusCode, 429);
      assert.equal((await postSignIn(gw, 'guesser@example.com', PASSWORD, '10.3.9.9')).statusCode, 303);
      const audit = await gw.database.db
        .selectFrom('audit_actions')
        .select('detail')
        .where('action', '=', 'user_change_password')
        .where('actor', '=', 'guesser@example.com')
        .execute();
      assert.deepEqual(audit, [], 'nothing changed, nothing audited');

      skew += SIGN_IN_WINDOW_MS + 1;
      assert.equal((await change(PASSWORD, '10.3.0.1')).statusCode, 303, 'the window passed');
      assert.notEqual(await hash(), before);
      await signedIn(gw, 'guesser@example.com', next);
      const kept = await gw.database.db
        .selectFrom('sign_in_failures')
        .select('id')
        .where('scope', '=', 'pair:10.3.0.1 guesser@example.com')
        .execute();
      assert.equal(kept.length, 0, 'the right password clears the count of its (account, address)');
    });

    it("a disabled merchant's users cannot sign in, and their open sessions stop working at once", async () => {
      const m = await gw.newMerchant();
      const shop = await merchantUser('locked@example.com', m.merchant_id);
      const ops = await signedIn(gw, 'ops@example.com', PASSWORD);
      assert.equal(
        (await post(ops, `/dashboard/merchants/${m.merchant_id}/status`, { status: 'disabled' })).statusCode,
        303,
      );

      // The open session does nothing any more: no key rotation, no callback URL, no pages.
      const rotate = await post(shop, '/dashboard/developers/rotate-key');
      assert.equal(rotate.statusCode, 303);
      assert.equal(rotate.headers.location, '/dashboard/sign-in');
      assert.doesNotMatch(rotate.body, /sk_test_/);
      const url = await post(shop, '/dashboard/developers/callback-url', {
        callback_url: 'http://127.0.0.1:9/new',
      });
      assert.equal(url.statusCode, 303);
      assert.equal(url.headers.location, '/dashboard/sign-in');
      assert.equal(await alive(shop), false);
      const stored = await gw.database.db
        .selectFrom('merchants')
        .select('callback_url')
        .where('id', '=', m.merchant_id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.callback_url, null);
      const keys = await gw.database.db
        .selectFrom('api_keys')
        .select('id')
        .where('merchant_id', '=', m.merchant_id)
        .execute();
      assert.equal(keys.length, 1, 'no key was rotated');

      const refused = await postSignIn(gw, 'locked@example.com', PASSWORD);
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /merchant of this account is disabled/);
      assert.equal(
        setCookies(refused.headers).some((c) => c.startsWith('paygate_session=')),
        false,
      );

      assert.equal(
        (await post(ops, `/dashboard/merchants/${m.merchant_id}/status`, { status: 'active' })).statusCode,
        303,
      );
      await signedIn(gw, 'locked@example.com', PASSWORD);
    });

    it('text PostgreSQL cannot store (NUL) or an over-long value is a 400 page everywhere in the console', async () => {
      const ops = await signedIn(gw, 'ops@example.com', PASSWORD);
      const shop = await merchantUser('nul@example.com');
      const long = 'x'.repeat(3000);
      for (const b of [ops, shop])
        for (const url of [
          '/dashboard/transactions?q=%00',
          '/dashboard/transactions?q=pay_%00x',
          '/dashboard/transactions?merchant=%00',
          '/dashboard/transactions.csv?merchant=%00',
          '/dashboard/transactions.csv?q=%00',
          '/dashboard/ledger?merchant=%00',
          '/dashboard?merchant=%00',
          '/dashboard/transactions/pay_%00',
          `/dashboard/transactions?q=${long}`,
        ]) {
          const res = await get(b, url);
          assert.equal(res.statusCode, 400, `${url}: ${res.statusCode}`);
          assert.match(String(res.headers['content-type']), /^text\/html/);
        }
      // Bytes that are not UTF-8 arrive as U+FFFD, which every database stores: an answer, not an error.
      assert.equal((await get(shop, '/dashboard/transactions?q=%ED%A0%80%FF')).statusCode, 200);
      const mid = gw.merchant.merchant_id;
      const before = await gw.paygate.services.wallets.balance(mid, 'INR');
      const page = await get(ops, `/dashboard/merchants/${mid}`);
      const formId = /name="form_id" value="([^"]+)"/.exec(page.body)![1]!;
      for (const [url, fields] of [
        ['/dashboard/merchants', 'name=Shop%00&callback_url='],
        [`/dashboard/merchants/mer_%00/credit`, `amount=5.00&currency=INR&form_id=${formId}`],
        [`/dashboard/merchants/${mid}/credit`, `amount=5.00&currency=INR%00&form_id=${formId}`],
        [`/dashboard/merchants/${mid}/callback-url`, 'callback_url=http://127.0.0.1:9/%00'],
      ] as const) {
        const res = await gw.app.inject({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: ops.cookie },
          payload: `${fields}&csrf=${ops.csrf}`,
        });
        assert.equal(res.statusCode, 400, `${url} ${fields}: ${res.statusCode}`);
      }
      assert.deepEqual(await gw.paygate.services.wallets.balance(mid, 'INR'), before);
      const merchants = await gw.database.db.selectFrom('merchants').select('name').execute();
      assert.ok(merchants.every((m) => !m.name.includes('\0')));

      const signInPage = await gw.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
      const token = /name="csrf" value="([^"]+)"/.exec(signInPage.body)![1]!;
      const nul = await gw.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `paygate_signin=${token}` },
        payload: `email=x%00&password=whatever&csrf=${token}`,
      });
      assert.equal(nul.statusCode, 400);
    });
  });
}
