/**
 * The dashboard over HTTP, on both databases (CONTRACT §11): `paygate user create`, sign-in and its
 * limit per (account, address) and slowdown, session cookies, idle expiry and the 7 days after
 * sign-in, CSRF, what a merchant's user may see, the list's filters, IST days, keyset pages and CSV
 * export, the ledger's running balance, and the audit log. The browser's view of the same pages is
 * test/dashboard/console-browser.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  ABSOLUTE_EXPIRY_MS,
  type AccountService,
  FAILURES_PER_PAIR,
  IDLE_EXPIRY_MS,
  SIGN_IN_WINDOW_MS,
  SLOW_AFTER,
  slowdownMs,
} from '../../src/dashboard/accounts.service.ts';
import { csvCell } from '../../src/dashboard/csv.ts';
import { base62 } from '../../src/ids.ts';
import { DATABASES } from '../support/databases.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { ROOT } from '../support/process.ts';

const PASSWORD = 'correct horse battery';

interface Browser {
  cookie: string;
  csrf: string;
}

/** `paygate ARGS` with `stdin` piped in. */
function paygate(
  args: string[],
  env: Record<string, string>,
  stdin = '',
): Promise<{ status: number | null; json: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/paygate.js'), ...args, '--json'], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, json: JSON.parse(stdout) }));
    child.stdin.end(stdin);
  });
}

function setCookies(headers: Record<string, unknown>): string[] {
  const raw = headers['set-cookie'];
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
}

function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  assert.ok(m, 'the page has a form with a CSRF token');
  return m[1]!;
}

/**
 * Opens the sign-in form and sends it: the form's token in its field and in the sign-in cookie
 * (`__Host-` prefixed under https), with any other cookie the browser holds.
 */
async function postSignIn(
  gw: Gateway,
  email: string,
  password: string,
  o: { address?: string; prefix?: string; cookie?: string } = {},
) {
  const remote = o.address === undefined ? {} : { remoteAddress: o.address };
  const page = await gw.app.inject({ method: 'GET', url: '/dashboard/sign-in', ...remote });
  const token = csrfOf(page.body);
  const cookies = [`${o.prefix ?? ''}paygate_signin=${token}`, ...(o.cookie ? [o.cookie] : [])];
  return gw.app.inject({
    method: 'POST',
    url: '/dashboard/sign-in',
    ...remote,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies.join('; ') },
    payload: new URLSearchParams({ email, password, csrf: token }).toString(),
  });
}

for (const kind of DATABASES) {
  describe(`dashboard over HTTP (${kind})`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    let clock = Date.parse('2026-11-20T06:30:00Z');
    let accounts: AccountService;

    before(async () => {
      gw = await startGateway(kind, { now: () => clock, env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true' } });
      accounts = testAccounts(gw.database.db, () => clock);
      await accounts.createUser({
        email: 'shop@example.com',
        role: 'merchant',
        merchantId: gw.merchant.merchant_id,
        password: PASSWORD,
      });
      await accounts.createUser({
        email: 'ops@example.com',
        role: 'operator',
        merchantId: null,
        password: PASSWORD,
      });
    });
    after(() => gw.close());

    function signIn(email: string, password = PASSWORD, address = '10.0.0.1') {
      return postSignIn(gw, email, password, { address });
    }

    async function session(email: string): Promise<Browser> {
      const res = await signIn(email);
      assert.equal(res.statusCode, 303, `${email}: ${res.statusCode} ${res.body.slice(0, 2000)}`);
      const cookie = setCookies(res.headers)
        .find((c) => c.startsWith('paygate_session='))!
        .split(';')[0]!;
      const home = await get({ cookie, csrf: '' }, '/dashboard');
      return { cookie, csrf: csrfOf(home.body) };
    }

    function get(b: Browser, url: string) {
      return gw.app.inject({ method: 'GET', url, headers: { cookie: b.cookie } });
    }

    function post(b: Browser, url: string, fields: Record<string, string>, csrf: string | null = b.csrf) {
      return gw.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: b.cookie },
        payload: new URLSearchParams({ ...fields, ...(csrf === null ? {} : { csrf }) }).toString(),
      });
    }

    /** A settled sandbox pay-in of the test merchant. */
    async function payin(
      orderNo: string,
      amount: number,
      status: 'SUCCESS' | 'FAILED' = 'SUCCESS',
      key = gw.merchant.api_key,
    ) {
      const created = await gw.post(
        '/payments/onsite/payin',
        { money: { amount }, merchant_order_no: orderNo, callback_url: 'http://127.0.0.1:9/cb' },
        { key },
      );
      assert.equal(created.status, 200, created.text);
      const done = await gw.post(
        '/sandbox/payin/complete',
        { payment_id: created.body.payment_id, status },
        { key },
      );
      assert.equal(done.status, 200, done.text);
      return created.body.payment_id as string;
    }

    it('user create: a generated password shown once, or one read from stdin; duplicates and bad input refused', async () => {
      const env = { DATABASE_URL: gw.testDb.url };
      const made = await paygate(
        ['user', 'create', '--email', 'New@Example.com', '--merchant', gw.merchant.merchant_id],
        env,
      );
      assert.equal(made.status, 0);
      assert.deepEqual(Object.keys(made.json).sort(), [
        'email',
        'merchant_id',
        'password',
        'role',
        'user_id',
      ]);
      assert.equal(made.json.email, 'new@example.com');
      assert.equal(made.json.role, 'merchant');
      assert.match(made.json.password, /^[A-Za-z0-9]{20}$/);
      assert.equal((await signIn('new@example.com', made.json.password)).statusCode, 303);
      const stored = await gw.database.db
        .selectFrom('users')
        .select('password_hash')
        .where('email', '=', 'new@example.com')
        .executeTakeFirstOrThrow();
      // Made by the service itself (tests create their users cheaper): scrypt at N = 2^15, r = 8, p = 1.
      assert.match(stored.password_hash, /^scrypt\$32768\$8\$1\$/);
      assert.ok(!stored.password_hash.includes(made.json.password));

      const piped = await paygate(
        ['user', 'create', '--email', 'ops2@example.com', '--operator', '--password-stdin'],
        env,
        'a long operator password\n',
      );
      assert.equal(piped.status, 0);
      assert.equal(piped.json.role, 'operator');
      assert.equal(piped.json.merchant_id, null);
      assert.equal(piped.json.password, null);
      assert.equal((await signIn('ops2@example.com', 'a long operator password')).statusCode, 303);

      const again = await paygate(['user', 'create', '--email', 'new@example.com', '--operator'], env);
      assert.equal(again.status, 1);
      assert.equal(again.json.error.code, 'CONFLICT');
      const both = await paygate(
        ['user', 'create', '--email', 'x@example.com', '--operator', '--merchant', gw.merchant.merchant_id],
        env,
      );
      assert.equal(both.status, 2);
      const short = await paygate(
        ['user', 'create', '--email', 'y@example.com', '--operator', '--password-stdin'],
        env,
        'short\n',
      );
      assert.equal(short.status, 2);
      const unknown = await paygate(
        ['user', 'create', '--email', 'z@example.com', '--merchant', 'mer_nope'],
        env,
      );
      assert.equal(unknown.json.error.code, 'NOT_FOUND');
    });

    it('sign-in sets an HttpOnly, SameSite=Strict session cookie; a wrong password or a missing form token does not', async () => {
      const ok = await signIn('shop@example.com');
      assert.equal(ok.statusCode, 303);
      assert.equal(ok.headers.location, '/dashboard');
      const cookie = setCookies(ok.headers).find((c) => c.startsWith('paygate_session='))!;
      assert.match(cookie, /; HttpOnly/);
      assert.match(cookie, /; SameSite=Strict/);
      assert.match(cookie, /; Path=\/dashboard/);
      assert.doesNotMatch(cookie, /Secure/, 'PUBLIC_URL is http here');
      const token = cookie.split(';')[0]!.split('=')[1]!;
      const stored = await gw.database.db.selectFrom('sessions').select('token_hash').execute();
      assert.ok(
        stored.every((s) => s.token_hash !== token),
        'the token itself is not stored',
      );

      const wrong = await signIn('shop@example.com', 'not the password', '10.0.0.2');
      assert.equal(wrong.statusCode, 401);
      assert.match(wrong.body, /email or password is wrong/);
      assert.equal(setCookies(wrong.headers).filter((c) => c.startsWith('paygate_session=')).length, 0);

      const noToken = await gw.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ email: 'shop@example.com', password: PASSWORD }).toString(),
      });
      assert.equal(noToken.statusCode, 403);
      assert.equal(setCookies(noToken.headers).length, 0);
    });

    it('six wrong passwords for an operator from one address leave the operator able to sign in from another address', async () => {
      await accounts.createUser({
        email: 'target@example.com',
        role: 'operator',
        merchantId: null,
        password: PASSWORD,
      });
      const statuses: number[] = [];
      for (let i = 0; i < FAILURES_PER_PAIR + 1; i++)
        statuses.push((await signIn('target@example.com', 'wrong password!', '10.1.0.1')).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429], 'the sixth is refused unchecked');
      const limited = await signIn('target@example.com', PASSWORD, '10.1.0.1');
      assert.equal(limited.statusCode, 429, 'that address waits, even with the right password');
      assert.ok(Number(limited.headers['retry-after']) > 0);
      assert.match(limited.body, /Too many failed sign-ins from this address/);
      assert.equal(
        (await signIn('target@example.com', PASSWORD, '10.1.0.2')).statusCode,
        303,
        'another address signs the operator in',
      );
      assert.equal(
        (await signIn('shop@example.com', PASSWORD, '10.1.0.1')).statusCode,
        303,
        'another user at the guessing address signs in',
      );
      clock += SIGN_IN_WINDOW_MS + 1;
      assert.equal(
        (await signIn('target@example.com', PASSWORD, '10.1.0.1')).statusCode,
        303,
        'the window passed',
      );
    });

    it('failures against one account from many addresses, or from one address against many accounts, slow sign-in but never refuse it', async () => {
      await accounts.createUser({
        email: 'spread@example.com',
        role: 'operator',
        merchantId: null,
        password: PASSWORD,
      });
      const guesses = SLOW_AFTER + 3;
      for (let i = 0; i < guesses; i++) {
        const wrong = await signIn('spread@example.com', 'wrong password!', `10.4.0.${i}`);
        assert.equal(wrong.statusCode, 401, `guess ${i}`);
      }
      // The next attempt waits for the account's failures, however right its password.
      const wait = slowdownMs(guesses);
      assert.ok(wait > 0);
      let started = performance.now();
      const right = await signIn('spread@example.com', PASSWORD, '10.4.1.1');
      assert.equal(right.statusCode, 303, 'a correct password from an address with no recent failures');
      assert.ok(performance.now() - started >= wait - 5, 'slowed');
      clock += SIGN_IN_WINDOW_MS + 1;

      // One address (a shared proxy) guessing many accounts does not lock out the others behind it.
      for (let i = 0; i < guesses; i++) {
        const wrong = await signIn(`nobody${i}@example.com`, 'wrong password!', '10.9.9.9');
        assert.equal(wrong.statusCode, 401, `guess ${i}`);
      }
      started = performance.now();
      assert.equal((await signIn('shop@example.com', PASSWORD, '10.9.9.9')).statusCode, 303);
      assert.ok(performance.now() - started >= wait - 5, 'slowed');
      clock += SIGN_IN_WINDOW_MS + 1;
    });

    it('sign-ins sent together from one address get no more password checks than the limit; an IPv6 /64 is one address', async () => {
      await accounts.createUser({
        email: 'burst@example.com',
        role: 'merchant',
        merchantId: gw.merchant.merchant_id,
        password: PASSWORD,
      });
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => signIn('burst@example.com', 'wrong password!', '10.2.0.1')),
      );
      // Each attempt counts those recorded before it, its own included: how many pass depends on how
      // the requests interleave, but never more than the limit.
      const statuses = answers.map((a) => a.statusCode);
      const checked = statuses.filter((s) => s === 401).length;
      assert.ok(checked <= FAILURES_PER_PAIR, statuses.join(' '));
      assert.equal(statuses.filter((s) => s === 429).length, 12 - checked, statuses.join(' '));
      const kept = await gw.database.db
        .selectFrom('sign_in_failures')
        .select('id')
        .where('scope', '=', 'pair:10.2.0.1 burst@example.com')
        .execute();
      assert.equal(kept.length, checked, 'a refused attempt is not kept as a failure');
      clock += SIGN_IN_WINDOW_MS + 1;

      // Each guess from another address of one /64 counts against the same pair.
      let status = 0;
      let tries = 0;
      while (status !== 429 && tries < 30)
        status = (
          await signIn('burst@example.com', 'wrong password!', `2001:db8:1:2::${(tries++).toString(16)}`)
        ).statusCode;
      assert.equal(status, 429);
      assert.equal(tries, FAILURES_PER_PAIR + 1);
      assert.equal(
        (await signIn('burst@example.com', PASSWORD, '2001:db8:1:3::1')).statusCode,
        303,
        'another /64',
      );
      clock += SIGN_IN_WINDOW_MS + 1;
    });

    it('a session ends 7 days after sign-in, however active', async () => {
      const b = await session('shop@example.com');
      const signedInAt = clock;
      while (clock + IDLE_EXPIRY_MS / 2 < signedInAt + ABSOLUTE_EXPIRY_MS) {
        clock += IDLE_EXPIRY_MS / 2;
        assert.equal((await get(b, '/dashboard')).statusCode, 200, 'used every 6 h');
      }
      clock = signedInAt + ABSOLUTE_EXPIRY_MS - 1;
      assert.equal((await get(b, '/dashboard')).statusCode, 200, 'just before 7 days');
      clock = signedInAt + ABSOLUTE_EXPIRY_MS;
      const ended = await get(b, '/dashboard');
      assert.equal(ended.statusCode, 303);
      assert.equal(ended.headers.location, '/dashboard/sign-in');
      // Signing in again gives a fresh 7 days; the ended session is deleted at the next sign-in.
      const again = await session('shop@example.com');
      assert.equal((await get(again, '/dashboard')).statusCode, 200);
      const old = await gw.database.db
        .selectFrom('sessions')
        .select('token_hash')
        .where('created_at', '<=', signedInAt)
        .execute();
      assert.deepEqual(old, [], 'sessions signed in 7 days ago are gone');
    });

    it('signing in again ends the session the browser had', async () => {
      const first = await session('shop@example.com');
      const again = await postSignIn(gw, 'shop@example.com', PASSWORD, { cookie: first.cookie });
      assert.equal(again.statusCode, 303);
      assert.equal((await get(first, '/dashboard')).statusCode, 303, 'the earlier session is gone');
    });

    it('a session ends after 12 h idle and at sign-out; a request with it then goes to the sign-in page', async () => {
      const b = await session('shop@example.com');
      clock += IDLE_EXPIRY_MS - 60_000;
      assert.equal((await get(b, '/dashboard')).statusCode, 200, 'used within 12 h');
      clock += IDLE_EXPIRY_MS - 60_000;
      assert.equal((await get(b, '/dashboard')).statusCode, 200, 'each use restarts the 12 h');
      clock += IDLE_EXPIRY_MS;
      const idle = await get(b, '/dashboard');
      assert.equal(idle.statusCode, 303);
      assert.equal(idle.headers.location, '/dashboard/sign-in');

      const c = await session('shop@example.com');
      const out = await post(c, '/dashboard/sign-out', {});
      assert.equal(out.statusCode, 303);
      const replay = await get(c, '/dashboard/transactions');
      assert.equal(replay.statusCode, 303);
      assert.equal(replay.headers.location, '/dashboard/sign-in');
      assert.equal(
        (await get({ cookie: 'paygate_session=made-up', csrf: '' }, '/dashboard')).statusCode,
        303,
      );
    });

    it('every state change needs the CSRF token: without it or with a wrong one 403 and nothing changes', async () => {
      const ops = await session('ops@example.com');
      const id = gw.merchant.merchant_id;
      const before = await gw.paygate.services.wallets.balance(id, 'INR');
      for (const csrf of [null, 'wrong-token', ''])
        assert.equal(
          (await post(ops, `/dashboard/merchants/${id}/credit`, { amount: '10.00', currency: 'INR' }, csrf))
            .statusCode,
          403,
        );
      assert.deepEqual(await gw.paygate.services.wallets.balance(id, 'INR'), before);
      const other = await session('shop@example.com');
      assert.equal(
        (await post(ops, '/dashboard/sign-out', {}, other.csrf)).statusCode,
        403,
        "another session's token",
      );
      const credit = { amount: '10.00', currency: 'INR', form_id: base62(22) };
      const ok = await post(ops, `/dashboard/merchants/${id}/credit`, credit);
      assert.equal(ok.statusCode, 303);
      assert.equal((await gw.paygate.services.wallets.balance(id, 'INR')).available, before.available + 1000);
      // The same form posted again (a double click, the browser resending it) credits nothing more.
      const again = await post(ops, `/dashboard/merchants/${id}/credit`, credit);
      assert.equal(again.statusCode, 409);
      assert.match(again.body, /sent already/);
      assert.equal((await gw.paygate.services.wallets.balance(id, 'INR')).available, before.available + 1000);
      const noForm = await post(ops, `/dashboard/merchants/${id}/credit`, {
        amount: '10.00',
        currency: 'INR',
      });
      assert.equal(noForm.statusCode, 400);
      assert.equal((await gw.paygate.services.wallets.balance(id, 'INR')).available, before.available + 1000);
      const json = await gw.app.inject({
        method: 'POST',
        url: `/dashboard/merchants/${id}/credit`,
        headers: { cookie: ops.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ amount: '10.00', csrf: ops.csrf }),
      });
      assert.equal(json.statusCode, 415);
    });

    it("a merchant's user sees only its merchant: another's transaction is 404, operator pages are 404", async () => {
      const other = await gw.newMerchant();
      const theirs = await payin('theirs-1', 100, 'SUCCESS', other.api_key);
      const mine = await payin('mine-1', 100);
      const shop = await session('shop@example.com');
      assert.equal((await get(shop, `/dashboard/transactions/${mine}`)).statusCode, 200);
      const hidden = await get(shop, `/dashboard/transactions/${theirs}`);
      assert.equal(hidden.statusCode, 404);
      assert.doesNotMatch(hidden.body, /theirs-1/);
      assert.equal((await post(shop, `/dashboard/transactions/${theirs}/resend`, {})).statusCode, 404);
      // The list itself is scoped, not only the search: asked for the other merchant, with no search
      // and with a search by its payment_id, the merchant's user gets their own rows or none.
      for (const query of [
        `merchant=${other.merchant_id}`,
        `merchant=${other.merchant_id}&q=${theirs}`,
        '',
      ]) {
        const list = await get(shop, `/dashboard/transactions?${query}`);
        assert.equal(list.statusCode, 200);
        // A row links to its transaction (the search box repeats the term itself).
        assert.doesNotMatch(list.body, new RegExp(`/dashboard/transactions/${theirs}`), query);
        if (!query.includes('q='))
          assert.match(list.body, new RegExp(`/dashboard/transactions/${mine}`), query);
        const csv = await get(shop, `/dashboard/transactions.csv?${query}`);
        assert.doesNotMatch(csv.body, new RegExp(`${theirs}|${other.merchant_id}`), query);
      }
      // Balances too: the other merchant's is not on this user's overview, whatever it asks for.
      await gw.paygate.services.wallets.topUp(other.merchant_id, 'INR', 777_777);
      await gw.paygate.services.wallets.topUp(gw.merchant.merchant_id, 'INR', 12_345);
      const own = await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR');
      const otherBalance = await gw.paygate.services.wallets.balance(other.merchant_id, 'INR');
      const available = (html: string) =>
        /<p>Available \(INR\)<\/p><strong>([^<]*)<\/strong>/.exec(html)?.[1];
      const rupees = (paise: number) =>
        `₹${(paise / 100).toLocaleString('en-IN', { minimumFractionDigits: 2 })}`;
      for (const url of ['/dashboard', `/dashboard?merchant=${other.merchant_id}`]) {
        const overview = await get(shop, url);
        assert.equal(available(overview.body), rupees(own.available), url);
        assert.ok(!overview.body.includes(rupees(otherBalance.available)), url);
      }
      for (const url of [
        '/dashboard/merchants',
        `/dashboard/merchants/${other.merchant_id}`,
        '/dashboard/verify',
        '/dashboard/activity',
      ])
        assert.equal((await get(shop, url)).statusCode, 404, url);
      // Exceptions and reconciliation it reads, its own only: merchant-reads-its-exceptions.test.ts.
      // A complete, valid credit form (with its one-time id) from a merchant's user: 404, nothing credited.
      const before = await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR');
      const credit = await post(shop, `/dashboard/merchants/${gw.merchant.merchant_id}/credit`, {
        amount: '5.00',
        currency: 'INR',
        form_id: base62(22),
      });
      assert.equal(credit.statusCode, 404);
      assert.deepEqual(await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR'), before);
      const ops = await session('ops@example.com');
      // The operator sees the other merchant's balance when asking for it.
      const theirsShown = await get(ops, `/dashboard?merchant=${other.merchant_id}`);
      assert.equal(available(theirsShown.body), rupees(otherBalance.available));
      assert.equal((await get(ops, `/dashboard/transactions/${theirs}`)).statusCode, 200);
      assert.match((await get(ops, `/dashboard/transactions?q=theirs-1`)).body, new RegExp(theirs));
    });

    it('the list filters by kind, status, IST dates and amount, searches exactly, and pages by keyset', async () => {
      const m = await gw.newMerchant();
      await accounts.createUser({
        email: 'list@example.com',
        role: 'merchant',
        merchantId: m.merchant_id,
        password: PASSWORD,
      });
      // 2026-11-10 23:00 IST and 2026-11-11 00:30 IST: one UTC day, two IST days.
      clock = Date.parse('2026-11-10T17:30:00Z');
      const late = await payin('=late', 12345, 'SUCCESS', m.api_key);
      clock = Date.parse('2026-11-10T19:00:00Z');
      const early = await payin('-early', 500, 'FAILED', m.api_key);
      const ids: string[] = [];
      for (let i = 0; i < 120; i++) {
        clock = Date.parse('2026-11-12T10:00:00Z') + i * 1000;
        ids.push(await payin(`bulk-${i}`, 100 + i, i % 4 === 0 ? 'FAILED' : 'SUCCESS', m.api_key));
      }
      clock = Date.parse('2026-11-20T06:30:00Z');
      const b = await session('list@example.com');
      const rowsOf = (html: string): string[] =>
        [...html.matchAll(/href="\/dashboard\/transactions\/([A-Za-z0-9]+)"/g)].map((x) => x[1]!);

      const day10 = rowsOf((await get(b, '/dashboard/transactions?from=2026-11-10&to=2026-11-10')).body);
      assert.deepEqual(day10, [late]);
      const day11 = rowsOf((await get(b, '/dashboard/transactions?from=2026-11-11&to=2026-11-11')).body);
      assert.deepEqual(day11, [early]);
      const failed = rowsOf(
        (await get(b, '/dashboard/transactions?status=FAILED&kind=payin&from=2026-11-11')).body,
      );
      assert.equal(failed.length, 31);
      assert.ok(failed.includes(early));
      const amount = rowsOf((await get(b, '/dashboard/transactions?min=100.00&max=105.00')).body);
      assert.deepEqual(new Set(amount), new Set(ids.slice(0, 6)));
      assert.deepEqual(rowsOf((await get(b, `/dashboard/transactions?q=${late}`)).body), [late]);
      assert.deepEqual(rowsOf((await get(b, '/dashboard/transactions?q=bulk-7')).body), [ids[7]]);
      const utr = (await gw.post('/payments/payin_status', { payment_id: ids[9] }, { key: m.api_key })).body
        .utr;
      assert.deepEqual(rowsOf((await get(b, `/dashboard/transactions?q=${utr}`)).body), [ids[9]]);
      assert.deepEqual(
        rowsOf((await get(b, '/dashboard/transactions?q=bulk')).body),
        [],
        'exact matches only',
      );

      // Keyset pages: 122 rows in pages of 50, newest first, none twice.
      const seen: string[] = [];
      let url: string | null = '/dashboard/transactions';
      let pages = 0;
      while (url) {
        const html = (await get(b, url)).body;
        seen.push(...rowsOf(html));
        const next = /<a rel="next" href="([^"]+)"/.exec(html);
        url = next ? next[1]!.replaceAll('&amp;', '&') : null;
        pages++;
      }
      assert.equal(pages, 3);
      assert.deepEqual(seen, [...ids].reverse().concat([early, late]));

      for (const bad of ['kind=chargeback', 'status=DONE', 'from=2026-13-01', 'min=1.234', 'after=nonsense'])
        assert.equal((await get(b, `/dashboard/transactions?${bad}`)).statusCode, 400, bad);

      // The CSV holds the filtered set, formula-like cells escaped.
      const csv = await get(b, '/dashboard/transactions.csv?from=2026-11-10&to=2026-11-11');
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const lines = csv.body.trimEnd().split('\r\n');
      assert.equal(
        lines[0],
        'payment_id,merchant_id,kind,flow,merchant_order_no,amount,currency,status,utr,created_at_ist,finalized_at_ist,failure_reason',
      );
      assert.equal(lines.length, 3);
      assert.match(
        lines[1]!,
        new RegExp(
          `^${early},${m.merchant_id},payin,onsite,'-early,500\\.00,INR,FAILED,,2026-11-11T00:30:00\\.000\\+05:30,[^,]*,sandbox: failed by POST /sandbox/payin/complete$`,
        ),
      );
      assert.match(
        lines[2]!,
        new RegExp(`^${late},.*,'=late,12345\\.00,INR,SUCCESS,\\d{12},2026-11-10T23:00:00\\.000\\+05:30,`),
      );
      const all = (await get(b, '/dashboard/transactions.csv')).body.trimEnd().split('\r\n');
      assert.equal(all.length, 123);
    });

    it('CSV cells that a spreadsheet would run are escaped', () => {
      assert.equal(csvCell('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
      assert.equal(csvCell('+1'), "'+1");
      assert.equal(csvCell('-1'), "'-1");
      assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
      assert.equal(csvCell('a,b'), '"a,b"');
      assert.equal(csvCell('x;=HYPERLINK("y")'), '"x;=HYPERLINK(""y"")"');
      assert.equal(csvCell('plain'), 'plain');
    });

    it('the ledger shows each entry with the balance after it, agreeing with the wallet on every page', async () => {
      const m = await gw.newMerchant();
      const ops = await session('ops@example.com');
      for (let i = 1; i <= 60; i++) await gw.paygate.services.wallets.topUp(m.merchant_id, 'INR', i * 100);
      const wallet = await gw.paygate.services.wallets.balance(m.merchant_id, 'INR');
      const first = (await get(ops, `/dashboard/ledger?merchant=${m.merchant_id}`)).body;
      const balances = (html: string) =>
        [
          ...html.matchAll(
            /<td data-label="Amount" class="num">[^<]*<\/td><td data-label="Balance after" class="num">₹([\d,]+\.\d\d)<\/td><\/tr>/g,
          ),
        ].map((x) => Number(x[1]!.replaceAll(',', '')));
      const page1 = balances(first);
      assert.equal(page1.length, 50);
      assert.equal(page1[0], wallet.available / 100);
      const next = /<a rel="next" href="([^"]+)"/.exec(first)![1]!.replaceAll('&amp;', '&');
      const page2 = balances((await get(ops, next)).body);
      assert.equal(page2.length, 10);
      assert.deepEqual(
        [...page1, ...page2],
        Array.from({ length: 60 }, (_, i) => ((60 - i) * (61 - i)) / 2),
      );
    });

    it('developers page: after a webhook secret rotation it shows when the previous secret stops signing, until it has', async () => {
      const saved = clock;
      try {
        const shop = await session('shop@example.com');
        const overlap = (until: number) =>
          new RegExp(`id="secret-overlap"[^<]*<time datetime="${new Date(until).toISOString()}">`);
        assert.doesNotMatch((await get(shop, '/dashboard/developers')).body, /secret-overlap/);
        const rotated = await post(shop, '/dashboard/developers/rotate-secret', {});
        assert.equal(rotated.statusCode, 200);
        const until = clock + 86_400_000;
        assert.match(rotated.body, overlap(until));
        assert.match((await get(shop, '/dashboard/developers')).body, overlap(until));
        const ops = await session('ops@example.com');
        assert.match(
          (await get(ops, `/dashboard/merchants/${gw.merchant.merchant_id}`)).body,
          overlap(until),
        );

        clock = until;
        const later = await get(await session('shop@example.com'), '/dashboard/developers');
        assert.equal(later.statusCode, 200);
        assert.doesNotMatch(later.body, /secret-overlap/);
      } finally {
        clock = saved;
      }
    });

    it('operator actions are recorded with who, when and what, and listed; the resend limit holds in the dashboard', async () => {
      const ops = await session('ops@example.com');
      const m = await gw.newMerchant();
      const id = m.merchant_id;
      assert.equal(
        (
          await post(ops, `/dashboard/merchants/${id}/credit`, {
            amount: '250.50',
            currency: 'INR',
            form_id: base62(22),
          })
        ).statusCode,
        303,
      );
      assert.equal(
        (await post(ops, `/dashboard/merchants/${id}/status`, { status: 'disabled' })).statusCode,
        303,
      );
      assert.equal((await gw.paygate.services.merchants.get(id)).status, 'disabled');
      assert.equal(
        (await post(ops, `/dashboard/merchants/${id}/status`, { status: 'active' })).statusCode,
        303,
      );
      const rotated = await post(ops, `/dashboard/merchants/${id}/rotate-key`, {});
      assert.equal(rotated.statusCode, 200);
      const newKey = /(sk_test_[A-Za-z0-9]{40})/.exec(rotated.body)![1]!;
      assert.notEqual(newKey, m.api_key);
      assert.equal((await post(ops, `/dashboard/merchants/${id}/rotate-secret`, {})).statusCode, 200);
      assert.equal(
        (
          await post(ops, `/dashboard/merchants/${id}/callback-url`, {
            callback_url: 'http://127.0.0.1:9/new',
          })
        ).statusCode,
        303,
      );
      assert.equal(
        (await post(ops, `/dashboard/merchants/${id}/callback-url`, { callback_url: 'ftp://nope' }))
          .statusCode,
        400,
      );
      const txn = await payin('audited', 100, 'SUCCESS', newKey);
      for (let i = 0; i < 5; i++)
        assert.equal((await post(ops, `/dashboard/transactions/${txn}/resend`, {})).statusCode, 303);
      const sixth = await post(ops, `/dashboard/transactions/${txn}/resend`, {});
      assert.equal(sixth.statusCode, 429);
      assert.match(sixth.body, /At most 5 resends/);

      const rows = await gw.database.db
        .selectFrom('audit_actions')
        .selectAll()
        .where('merchant_id', '=', id)
        .orderBy('id')
        .execute();
      assert.deepEqual(
        rows.map((r) => r.action),
        [
          'credit',
          'disable',
          'enable',
          'rotate_key',
          'rotate_secret',
          'callback_url',
          'resend',
          'resend',
          'resend',
          'resend',
          'resend',
        ],
      );
      assert.ok(rows.every((r) => r.actor === 'ops@example.com' && r.at === clock));
      assert.equal(rows[0]!.detail, 'credited 250.50 INR');
      const listed = (await get(ops, '/dashboard/activity')).body;
      assert.match(listed, /credited 250\.50 INR/);
      assert.match(listed, new RegExp(`resent the callback of ${txn}`));
      assert.doesNotMatch(listed, new RegExp(newKey), 'a key is never listed');
    });

    it('an operator creates a merchant: its key is shown once and works; a bad UPI id or callback URL changes nothing', async () => {
      const ops = await session('ops@example.com');
      const count = async () => (await gw.paygate.services.merchants.list()).length;
      const before = await count();
      const refused: Record<string, string>[] = [
        { name: 'Live Shop', mode: 'live' },
        { name: 'Live Shop', mode: 'live', vpa: 'Not A Vpa' },
        { name: 'Shop', callback_url: 'ftp://example.com/cb' },
        { name: '' },
      ];
      for (const fields of refused)
        assert.equal(
          (await post(ops, '/dashboard/merchants', fields)).statusCode,
          400,
          JSON.stringify(fields),
        );
      assert.equal(await count(), before);
      const made = await post(ops, '/dashboard/merchants', { name: 'Dash Shop', mode: 'test' });
      assert.equal(made.statusCode, 201);
      const key = /(sk_test_[A-Za-z0-9]{40})/.exec(made.body)![1]!;
      assert.match(made.body, /whsec_[A-Za-z0-9+/]{43}=/);
      assert.equal((await gw.post('/wallet/balance', undefined, { key })).status, 200);
      const audit = await gw.database.db
        .selectFrom('audit_actions')
        .selectAll()
        .where('action', '=', 'merchant_create')
        .execute();
      assert.equal(audit.length, 1);
      assert.doesNotMatch(JSON.stringify(audit), /sk_test_|whsec_/);
    });

    it('random query strings and form posts never yield a 5xx, and always an HTML page, a CSV or a redirect', async () => {
      const ops = await session('ops@example.com');
      const shop = await session('shop@example.com');
      const txn = await payin('fuzz-1', 100);
      const mid = gw.merchant.merchant_id;
      const edgy = fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 20 }),
        fc.constantFrom(
          '',
          '0',
          '-1',
          '1e400',
          '9'.repeat(40),
          '2026-02-30',
          '2026-11-25',
          'SUCCESS',
          'payin',
          mid,
          txn,
          '%',
          '..',
          // PostgreSQL's text takes no NUL: each must be a 400 there as on SQLite, never a 500.
          '\u0000',
          'x\u0000',
          `${mid}\u0000`,
          'x'.repeat(3000),
          // Names an object inherits: a lookup by a query's value must not find them.
          'toString',
          'constructor',
          '__proto__',
        ),
      );
      const keys = fc.constantFrom(
        'q',
        'kind',
        'flow',
        'status',
        'from',
        'to',
        'min',
        'max',
        'merchant',
        'after',
        'before',
        'account',
        'currency',
        'done',
        'csrf',
        'name',
        'amount',
        'callback_url',
        'email',
        'current',
      );
      const pages = [
        '/dashboard',
        '/dashboard/transactions',
        '/dashboard/transactions.csv',
        `/dashboard/transactions/${txn}`,
        '/dashboard/ledger',
        '/dashboard/developers',
        '/dashboard/merchants',
        `/dashboard/merchants/${mid}`,
        '/dashboard/exceptions',
        '/dashboard/reconcile',
        '/dashboard/activity',
        '/dashboard/users',
        '/dashboard/account',
        '/dashboard/sign-in',
      ];
      const actions = [
        `/dashboard/transactions/${txn}/resend`,
        `/dashboard/merchants/${mid}/credit`,
        `/dashboard/merchants/${mid}/callback-url`,
        '/dashboard/merchants',
        '/dashboard/users/usr_nobody/status',
        '/dashboard/account/password',
        '/dashboard/sign-in',
        '/dashboard/nowhere',
      ];
      // Found by this test: `done` named a message by its key, and `toString` is a key of every object.
      for (const done of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
        const res = await get(shop, `/dashboard?done=${done}`);
        assert.equal(res.statusCode, 200, `${res.statusCode} for ?done=${done}`);
        assert.doesNotMatch(res.body, /function|\[native code\]/);
      }
      await fc.assert(
        fc.asyncProperty(
          fc.boolean(),
          fc.boolean(),
          fc.constantFrom(...pages, ...actions),
          fc.array(fc.tuple(keys, edgy), { maxLength: 6 }),
          async (asOperator, isPost, path, pairs) => {
            const b = asOperator ? ops : shop;
            const params = new URLSearchParams(pairs);
            const res = isPost
              ? await post(b, path, Object.fromEntries(params))
              : await get(b, `${path}?${params.toString()}`);
            assert.ok(
              res.statusCode < 500,
              `${res.statusCode} for ${isPost ? 'POST' : 'GET'} ${path} ${params}`,
            );
            const type = String(res.headers['content-type'] ?? '');
            assert.ok(
              res.statusCode === 303 || /^text\/(html|csv)/.test(type),
              `${res.statusCode} ${type} for ${path}`,
            );
          },
        ),
        { numRuns: 300 },
      );
      // Whatever the fuzz credited went through the ledger.
      const report = await gw.paygate.services.wallets.verify();
      assert.deepEqual(report.problems, []);
    });
  });
}

describe('dashboard cookies under an https PUBLIC_URL', () => {
  it('are Secure, for the whole host only (__Host-)', async () => {
    const gw = await startGateway('sqlite', { env: { PUBLIC_URL: 'https://pay.example.com' } });
    try {
      await testAccounts(gw.database.db).createUser({
        email: 'secure@example.com',
        role: 'operator',
        merchantId: null,
        password: PASSWORD,
      });
      const page = await gw.app.inject({ method: 'GET', url: '/dashboard/sign-in' });
      assert.match(
        setCookies(page.headers)[0]!,
        /^__Host-paygate_signin=\w+; Path=\/; HttpOnly; SameSite=Strict; Secure/,
      );
      const res = await postSignIn(gw, 'secure@example.com', PASSWORD, { prefix: '__Host-' });
      assert.equal(res.statusCode, 303);
      const session = setCookies(res.headers).find((c) => c.startsWith('__Host-paygate_session='))!;
      assert.match(session, /; Path=\/; HttpOnly; SameSite=Strict; Secure/);
      // The session is the prefixed cookie's: the plain name is not read under https.
      const value = session.split(';')[0]!.split('=')[1]!;
      const home = (cookie: string) =>
        gw.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
      assert.equal((await home(`__Host-paygate_session=${value}`)).statusCode, 200);
      assert.equal((await home(`paygate_session=${value}`)).statusCode, 303);
    } finally {
      await gw.close();
    }
  });
});

describe('dashboard overview with two currencies', () => {
  it('adds up the volume of one currency at a time, INR first, another on request', async () => {
    const gw = await startGateway('sqlite', { env: { SUPPORTED_CURRENCIES: 'INR,USD' } });
    try {
      await testAccounts(gw.database.db).createUser({
        email: 'two@example.com',
        role: 'merchant',
        merchantId: gw.merchant.merchant_id,
        password: PASSWORD,
      });
      for (const [orderNo, currency, amount] of [
        ['inr-1', 'INR', 123.45],
        ['usd-1', 'USD', 9999.99],
      ] as const) {
        const created = await gw.post('/payments/onsite/payin', {
          money: { amount, currency },
          merchant_order_no: orderNo,
        });
        assert.equal(created.status, 200, created.text);
        const done = await gw.post('/sandbox/payin/complete', {
          payment_id: created.body.payment_id,
          status: 'SUCCESS',
        });
        assert.equal(done.status, 200, done.text);
      }
      const res = await postSignIn(gw, 'two@example.com', PASSWORD);
      const cookie = setCookies(res.headers)
        .find((c) => c.startsWith('paygate_session='))!
        .split(';')[0]!;
      const stat = (html: string, label: string) =>
        new RegExp(`<p>${label}</p><strong>([^<]*)</strong>`).exec(html)?.[1];
      const inr = await gw.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
      assert.equal(inr.statusCode, 200);
      assert.equal(stat(inr.body, 'Pay-ins, 30 days'), '₹123.45');
      assert.match(inr.body, /<select id="pick-currency" name="currency">/);
      const usd = await gw.app.inject({ method: 'GET', url: '/dashboard?currency=USD', headers: { cookie } });
      assert.equal(stat(usd.body, 'Pay-ins \\(USD\\), 30 days'), '9999.99 USD');
    } finally {
      await gw.close();
    }
  });
});
