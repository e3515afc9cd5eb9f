/**
 * The dashboard (CONTRACT §11) in a real browser: Chromium against a gateway listening on real HTTP
 * with its workers running, a merchant's callback receiver on 127.0.0.1, on a phone (390×844) and a
 * desktop (1280×800; on PostgreSQL the desktop only), as a merchant's user and as an operator. Every page is checked with axe-core
 * (and screenshotted with SCREENSHOTS=1, as test/artifacts/dashboard-<page>-<phone|desktop>.png) and must load without
 * console errors (CSP violations included). One browser and one gateway per database.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Cookie, Page } from 'playwright-core';
import {
  chromiumSkip,
  launchChromium,
  PagePool,
  phoneContext,
  screenshot,
  watchConsole,
} from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { startReceiver, verifyCallback, type Receiver } from '../support/receiver.ts';

const SCREENS = ['phone', 'desktop'] as const;
type Screen = (typeof SCREENS)[number];
type Role = 'merchant' | 'operator';
const ROLES: Role[] = ['merchant', 'operator'];

const PASSWORD = 'correct-horse-battery-staple';
const EMAIL: Record<Role, string> = { merchant: 'owner@shop.example', operator: 'ops@paygate.example' };
const SESSION_COOKIE = 'paygate_session';
const CSV_HEADER =
  'payment_id,merchant_id,kind,flow,merchant_order_no,amount,currency,status,utr,created_at_ist,finalized_at_ist,failure_reason';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sorted = (ids: Iterable<string>) => [...ids].sort();

/** RFC 4180: quoted cells, doubled quotes, CRLF line ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') cell += c;
      else if (text[i + 1] === '"') {
        cell += '"';
        i++;
      } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** The rows of a table inside the scrolling region labelled `name`, as header → cell text. */
async function readTable(page: Page, name: string): Promise<Record<string, string>[]> {
  const region = page.getByRole('region', { name, exact: true });
  if ((await region.count()) === 0) return [];
  return region.locator('table').evaluate((table) => {
    const head = [...table.querySelectorAll('thead th')].map((th) => (th.textContent ?? '').trim());
    return [...table.querySelectorAll('tbody tr')].map((tr) =>
      Object.fromEntries(
        [...tr.querySelectorAll('td')].map((td, i) => [head[i] ?? String(i), (td.textContent ?? '').trim()]),
      ),
    );
  });
}

/** The text of the `dd` that follows the `dt` named `term` in the page's first facts list. */
/** Picks kind Pay-in and status SUCCESS in the list's filter form and applies them, as a user would. */
async function filterSuccessfulPayins(page: Page): Promise<void> {
  await page.getByLabel('Kind').selectOption('payin');
  await page.getByLabel('Status').selectOption('SUCCESS');
  await Promise.all([
    page.waitForURL(
      (u) => u.searchParams.get('kind') === 'payin' && u.searchParams.get('status') === 'SUCCESS',
    ),
    page.getByRole('button', { name: 'Apply' }).click(),
  ]);
}

async function fact(page: Page, term: string): Promise<string> {
  return page
    .locator('dl.facts')
    .first()
    .evaluate((dl, t) => {
      const dt = [...dl.querySelectorAll('dt')].find((d) => d.textContent?.trim() === t);
      return (dt?.nextElementSibling?.textContent ?? '').trim();
    }, term);
}

for (const kind of DATABASES) {
  describe(`dashboard in Chromium on ${kind}`, { skip: chromiumSkip() || (await skipFor(kind)) }, () => {
    // The layout does not depend on the database, nor the figures on the screen: every screen on
    // SQLite, and on PostgreSQL the desktop, where each page shows the most of its data.
    const screens: readonly Screen[] = kind === 'sqlite' ? SCREENS : ['desktop'];
    let gw: Gateway;
    let browser: Browser;
    let receiver: Receiver;
    let base: string;
    /** Merchant A (its user's) and merchant B (another merchant). */
    let A: string;
    let B: string;
    /** Each merchant's current API key and webhook secret (the tests rotate them). */
    const keys = new Map<string, string>();
    const secrets = new Map<string, string>();
    const contexts: BrowserContext[] = [];
    const pages = new PagePool();
    const sessions = new Map<string, BrowserContext>();
    /** A's transactions, by what they are for. */
    const tx = {} as Record<
      'paid' | 'failed' | 'pending' | 'formula' | 'minus' | 'resend' | 'payout' | 'other',
      string
    >;
    let paidUtr = '';
    let seq = 0;

    async function api(path: string, body: unknown, key: string) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, body: json, text };
    }

    /** A pay-in of merchant `m`, settled as `status` unless left pending. */
    async function payin(
      m: string,
      flow: 'onsite' | 'offsite' | 'p2p',
      amount: number,
      orderNo: string,
      status: 'SUCCESS' | 'FAILED' | null,
      callbackUrl?: string,
    ): Promise<{ id: string; utr: string }> {
      const created = await api(
        `/payments/${flow}/payin`,
        {
          money: { amount },
          merchant_order_no: orderNo,
          ...(callbackUrl ? { callback_url: callbackUrl } : {}),
        },
        keys.get(m)!,
      );
      assert.equal(created.status, 200, created.text);
      const id = created.body.payment_id as string;
      if (status === null) return { id, utr: '' };
      const done = await api('/sandbox/payin/complete', { payment_id: id, status }, keys.get(m)!);
      assert.equal(done.status, 200, done.text);
      return { id, utr: done.body.utr as string };
    }

    /** Waits (bounded) until the transaction's callbacks are all recorded as delivered. */
    async function deliveredAll(paymentId: string, count: number) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const list = await gw.paygate.services.callbacks.list({ paymentId });
        if (list.length >= count && list.every((d) => d.status === 'delivered')) return;
        assert.ok(Date.now() < deadline, `the callbacks of ${paymentId} are delivered within 10 s`);
        await delay(50);
      }
    }

    /** Polls the API with `key` until it answers `want`; fails after `withinMs`. Returns the time it took. */
    async function apiAnswers(
      key: string,
      want: number,
      withinMs: number,
    ): Promise<{ ms: number; body: any }> {
      const start = Date.now();
      for (;;) {
        const r = await api('/wallet/balance', {}, key);
        const ms = Date.now() - start;
        if (r.status === want) return { ms, body: r.body };
        assert.ok(
          ms < withinMs,
          `the API answers ${want} within ${withinMs} ms (still ${r.status}: ${r.text})`,
        );
        await delay(100);
      }
    }

    async function newContext(screen: Screen): Promise<BrowserContext> {
      const context =
        screen === 'phone'
          ? await phoneContext(browser)
          : await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-IN' });
      context.setDefaultTimeout(15_000);
      contexts.push(context);
      return context;
    }

    /** Signs `role` in through the form in `context`; leaves the page on the overview. */
    async function signIn(context: BrowserContext, role: Role): Promise<Page> {
      const page = await context.newPage();
      const problems = watchConsole(page);
      await page.goto(`${base}/dashboard/sign-in`);
      await page.getByLabel('Email').fill(EMAIL[role]);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${base}/dashboard`),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      assert.deepEqual(problems, [], 'signing in logs no console errors');
      return page;
    }

    /** A signed-in context for `role` on `screen`, shared by the tests. */
    async function session(role: Role, screen: Screen): Promise<BrowserContext> {
      const known = sessions.get(`${role}-${screen}`);
      if (known) return known;
      const context = await newContext(screen);
      await (await signIn(context, role)).close();
      sessions.set(`${role}-${screen}`, context);
      return context;
    }

    /** Opens `path` in a new page of `context`; the response must be `status`. */
    async function open(
      context: BrowserContext,
      path: string,
      status = 200,
    ): Promise<{ page: Page; problems: string[] }> {
      const { page, problems } = await pages.take(context);
      const res = await page.goto(`${base}${path}`);
      assert.equal(res?.status(), status, `GET ${path}`);
      return { page, problems };
    }

    /** What a finished page must satisfy: no console errors, no sideways scrolling of the page. */
    async function finish(page: Page, problems: string[], allowed: (p: string) => boolean = () => false) {
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${page.url()}: the page does not scroll sideways (overflow ${overflow}px)`);
      assert.deepEqual(
        problems.filter((p) => !allowed(p)),
        [],
        `${page.url()}: no console errors (CSP violations included)`,
      );
      pages.done(page);
    }

    /** The page's one h1 is `name`, and its title says the same. */
    async function heading(page: Page, name: string) {
      await page.getByRole('heading', { level: 1, name, exact: true }).waitFor();
      assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1);
      assert.equal(await page.title(), `${name === 'Sign in to Paygate' ? 'Sign in' : name} · Paygate`);
    }

    /** payment_ids listed on a transactions page, in order. */
    async function listed(page: Page): Promise<string[]> {
      return (await readTable(page, 'Transactions')).map((r) => r.payment_id!);
    }

    /** payment_ids in the database for a filter, the independent truth the list is held against. */
    async function inDb(f: { merchant?: string; kind?: 'payin' | 'payout'; status?: string }) {
      let q = gw.database.db.selectFrom('transactions').select('payment_id');
      if (f.merchant) q = q.where('merchant_id', '=', f.merchant);
      if (f.kind) q = q.where('kind', '=', f.kind);
      if (f.status) q = q.where('status', '=', f.status as 'SUCCESS');
      return sorted((await q.execute()).map((r) => r.payment_id));
    }

    before(async () => {
      [gw, browser, receiver] = await Promise.all([
        startGateway(kind, {
          listen: true,
          worker: true,
          env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true', SANDBOX_PAYOUT_SETTLE_MS: '50' },
        }),
        launchChromium(),
        startReceiver(),
      ]);
      base = gw.baseUrl;
      A = gw.merchant.merchant_id;
      keys.set(A, gw.merchant.api_key);
      secrets.set(A, gw.merchant.webhook_secret);
      const other = await gw.newMerchant();
      B = other.merchant_id;
      keys.set(B, other.api_key);

      const accounts = testAccounts(gw.database.db);
      await accounts.createUser({
        email: EMAIL.merchant,
        role: 'merchant',
        merchantId: A,
        password: PASSWORD,
      });
      await accounts.createUser({
        email: EMAIL.operator,
        role: 'operator',
        merchantId: null,
        password: PASSWORD,
      });

      // A: 10,000.00 credited; pay-ins of every flow and outcome; a payout that succeeds.
      await gw.paygate.services.wallets.topUp(A, 'INR', 1_000_000);
      const cb = receiver.url('/callback');
      const paid = await payin(A, 'onsite', 500, 'ord-shared-1', 'SUCCESS', cb);
      tx.paid = paid.id;
      paidUtr = paid.utr;
      tx.failed = (await payin(A, 'offsite', 250, 'ord-failed-2', 'FAILED')).id;
      tx.pending = (await payin(A, 'p2p', 100, 'ord-pending-3', null)).id;
      tx.formula = (await payin(A, 'onsite', 75.25, '=SUM(1+1)', 'SUCCESS', cb)).id;
      tx.minus = (await payin(A, 'onsite', 80, '-refund-5', 'SUCCESS')).id;
      tx.resend = (await payin(A, 'onsite', 60, 'ord-resend-6', 'SUCCESS', cb)).id;
      const payout = await api(
        '/payments/payout',
        {
          money: { amount: 200 },
          merchant_order_no: 'po-1',
          receiver: { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
        },
        keys.get(A)!,
      );
      assert.equal(payout.status, 200, payout.text);
      tx.payout = payout.body.payment_id;
      // B: a pay-in with the same order number as one of A's.
      tx.other = (await payin(B, 'onsite', 300, 'ord-shared-1', 'SUCCESS')).id;

      const deadline = Date.now() + 10_000;
      while (
        (await gw.post('/payments/payout_status', { payment_id: tx.payout })).body.status !== 'SUCCESS'
      ) {
        assert.ok(Date.now() < deadline, 'the sandbox payout settles within 10 s');
        await delay(50);
      }
      await Promise.all([tx.paid, tx.formula, tx.resend].map((id) => deliveredAll(id, 1)));
    });

    after(async () => {
      for (const c of contexts) await c.close().catch(() => {});
      await browser?.close();
      await receiver?.close();
      await gw?.close();
    });

    it('sign-in: fields labelled Email and Password and a Sign in button; a wrong password shows an error and makes no session', async () => {
      for (const screen of screens) {
        const context = await newContext(screen);
        const { page, problems } = await open(context, '/dashboard');
        assert.equal(
          page.url(),
          `${base}/dashboard/sign-in`,
          'signed out, the dashboard sends to the sign-in page',
        );
        await heading(page, 'Sign in to Paygate');
        await screenshot(page, `dashboard-sign-in-${screen}`);

        await page.getByLabel('Email').fill(EMAIL.merchant);
        await page.getByLabel('Password').fill('not-the-password-at-all');
        const [res] = await Promise.all([
          page.waitForResponse(
            (r) => r.url() === `${base}/dashboard/sign-in` && r.request().method() === 'POST',
          ),
          page.getByRole('button', { name: 'Sign in' }).click(),
        ]);
        assert.equal(res.status(), 401);
        const alert = page.getByRole('alert');
        await alert.waitFor();
        assert.equal((await alert.textContent())?.trim(), 'The email or password is wrong.');
        assert.equal(await page.getByLabel('Email').inputValue(), EMAIL.merchant, 'the email is kept');
        assert.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not sent back');
        await screenshot(page, `dashboard-sign-in-error-${screen}`);
        assert.deepEqual(
          (await context.cookies()).filter((c) => c.name === SESSION_COOKIE),
          [],
          'no session cookie',
        );
        const again = await page.goto(`${base}/dashboard/transactions`);
        assert.equal(again?.status(), 200);
        assert.equal(page.url(), `${base}/dashboard/sign-in`, 'still signed out');
        // Chromium logs the 401 of the document itself.
        await finish(
          page,
          problems,
          (p) => /status of 401/.test(p) && p.endsWith(`(${base}/dashboard/sign-in)`),
        );

        // The right password signs in: an HttpOnly, SameSite=Strict session cookie, the overview.
        await (await signIn(context, 'merchant')).close();
        const cookie = (await context.cookies()).find((c) => c.name === SESSION_COOKIE);
        assert.ok(cookie, 'a session cookie');
        assert.equal(cookie.httpOnly, true);
        assert.equal(cookie.sameSite, 'Strict');
      }
    });

    it("a merchant's user: overview, transactions, a transaction, ledger and developers render, pass axe and show the merchant's figures", async () => {
      for (const screen of screens) {
        const context = await session('merchant', screen);

        let { page, problems } = await open(context, '/dashboard');
        await heading(page, 'Overview');
        // 10,000.00 credited + 500 + 75.25 + 80 + 60 paid in − 200 paid out.
        const stat = (label: string) =>
          page
            .locator('.stat', { has: page.getByText(label, { exact: true }) })
            .locator('strong')
            .textContent();
        assert.equal(await stat('Available (INR)'), '₹10,515.25');
        assert.equal(await stat('Held for payouts and refunds (INR)'), '₹0.00');
        assert.equal(await stat('Pay-ins, 30 days'), '₹715.25');
        assert.equal(await stat('Payouts, 30 days'), '₹200.00');
        // Of the final pay-ins, four succeeded and one failed; the payout succeeded.
        assert.equal(await stat('Pay-in success rate, 30 days'), '80.0%');
        assert.equal(await stat('Payout success rate, 30 days'), '100.0%');
        assert.ok(
          await page.getByRole('img', { name: /volume \(bars\) and pay-in success rate/ }).isVisible(),
          'the chart',
        );
        // The figures behind the chart, one click away.
        await page.getByText('The figures by day', { exact: true }).click();
        const days = await readTable(page, 'Volume and pay-in success rate by day');
        assert.equal(days.length, 30);
        assert.deepEqual(
          {
            in: days[0]!['Pay-ins (₹)'],
            out: days[0]!['Payouts (₹)'],
            ok: days[0]!['Pay-ins succeeded'],
            ko: days[0]!['Pay-ins failed'],
          },
          { in: '715.25', out: '200.00', ok: '4', ko: '1' },
          "today's row",
        );
        await screenshot(page, `dashboard-overview-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/transactions'));
        await heading(page, 'Transactions');
        assert.deepEqual(sorted(await listed(page)), await inDb({ merchant: A }), "all of A's and only A's");
        assert.equal((await listed(page)).length, 7);
        await screenshot(page, `dashboard-transactions-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, `/dashboard/transactions/${tx.payout}`));
        await heading(page, 'Transaction');
        assert.equal(await fact(page, 'Kind / flow'), 'Payout / payout');
        assert.equal(await fact(page, 'Status'), 'SUCCESS');
        assert.match(await fact(page, 'Account'), /^•+9012 · HDFC0001234$/, 'the account number is masked');
        await screenshot(page, `dashboard-transaction-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/ledger'));
        await heading(page, 'Ledger');
        const entries = await readTable(page, 'Ledger entries of the available balance');
        // A top-up, four pay-ins and the payout's hold.
        assert.equal(entries.length, 6);
        assert.equal(entries[0]!['Balance after'], '₹10,515.25', 'the newest entry ends at the balance');
        assert.equal(entries.at(-1)!['Balance after'], '₹10,000.00', 'the oldest is the top-up');
        const paise = (t: string) => Math.round(Number(t.replace(/[₹,+]/g, '').replace('−', '-')) * 100);
        for (let i = 0; i + 1 < entries.length; i++)
          assert.equal(
            paise(entries[i]!['Balance after']!) - paise(entries[i]!.Amount!),
            paise(entries[i + 1]!['Balance after']!),
            `running balance at row ${i}`,
          );
        await screenshot(page, `dashboard-ledger-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/developers'));
        await heading(page, 'Developers');
        assert.equal(await fact(page, 'Merchant ID'), A);
        for (const name of ['Rotate API key', 'Rotate webhook secret', 'Save'])
          assert.ok(await page.getByRole('button', { name }).isVisible(), name);
        assert.ok(!(await page.content()).includes(keys.get(A)!), 'the API key is not on the page');
        await screenshot(page, `dashboard-developers-${screen}`);
        await finish(page, problems);

        // Read-only, the exceptions and differences naming the merchant: none in the sandbox.
        ({ page, problems } = await open(context, '/dashboard/exceptions'));
        await heading(page, 'Channel exceptions');
        assert.ok(await page.getByText('No exceptions.').isVisible());
        await screenshot(page, `dashboard-merchant-exceptions-${screen}`);
        await finish(page, problems);
        ({ page, problems } = await open(context, '/dashboard/reconcile'));
        await heading(page, 'Reconciliation');
        assert.ok(
          await page.getByText('Reconciliation has found no difference about your transactions.').isVisible(),
        );
        await screenshot(page, `dashboard-merchant-reconcile-${screen}`);
        await finish(page, problems);

        // The operator's pages are not the merchant's.
        for (const path of [
          '/dashboard/merchants',
          `/dashboard/merchants/${A}`,
          '/dashboard/activity',
          '/dashboard/verify',
        ]) {
          ({ page, problems } = await open(context, path, 404));
          await heading(page, 'Not found');
          await finish(page, problems, (p) => /status of 404/.test(p) && p.endsWith(`(${base}${path})`));
        }
      }
    });

    it('an operator: overview, transactions, merchants, a merchant, exceptions, reconciliation, ledger check and activity render and pass axe', async () => {
      for (const screen of screens) {
        const context = await session('operator', screen);

        let { page, problems } = await open(context, '/dashboard');
        await heading(page, 'Overview');
        assert.equal(
          await page.getByRole('combobox', { name: 'Merchant', exact: true }).inputValue(),
          '',
          'all merchants',
        );
        await screenshot(page, `dashboard-operator-overview-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/transactions'));
        await heading(page, 'Transactions');
        assert.deepEqual(sorted(await listed(page)), await inDb({}), 'every merchant’s');
        const rows = await readTable(page, 'Transactions');
        assert.equal(
          rows.find((r) => r.payment_id === tx.other)?.Merchant,
          `Other Shop ${B}`,
          'with the merchant column: its name and id',
        );
        await screenshot(page, `dashboard-operator-transactions-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/merchants'));
        await heading(page, 'Merchants');
        const merchants = await readTable(page, 'Merchants');
        for (const id of [A, B])
          assert.ok(
            merchants.some((m) => m['Merchant ID'] === id),
            id,
          );
        await screenshot(page, `dashboard-merchants-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, `/dashboard/merchants/${A}`));
        await heading(page, 'Test Shop');
        assert.deepEqual(await readTable(page, 'Balances'), [
          { Currency: 'INR', Available: '₹10,515.25', Held: '₹0.00' },
        ]);
        assert.ok(await page.getByRole('button', { name: 'Disable merchant' }).isVisible());
        await screenshot(page, `dashboard-merchant-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/exceptions'));
        await heading(page, 'Channel exceptions');
        assert.ok(await page.getByText('No exceptions.').isVisible(), 'none in the sandbox');
        await screenshot(page, `dashboard-exceptions-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/reconcile'));
        await heading(page, 'Reconciliation');
        assert.ok(await page.getByText('No reconciliation has run yet.').isVisible(), 'none in the sandbox');
        await screenshot(page, `dashboard-reconcile-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/verify'));
        await heading(page, 'Ledger check');
        await page.getByRole('heading', { level: 2, name: 'The ledger balances' }).waitFor();
        await screenshot(page, `dashboard-verify-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, '/dashboard/activity'));
        await heading(page, 'Activity');
        await screenshot(page, `dashboard-activity-${screen}`);
        await finish(page, problems);

        ({ page, problems } = await open(context, `/dashboard/ledger?merchant=${B}`));
        await heading(page, 'Ledger');
        const entries = await readTable(page, 'Ledger entries of the available balance');
        assert.equal(entries.length, 1, "B's one pay-in");
        assert.equal(entries[0]!['Balance after'], '₹300.00');
        await screenshot(page, `dashboard-operator-ledger-${screen}`);
        await finish(page, problems);
      }
    });

    it('filters with the selects and Apply show exactly the matching rows; search by payment_id, order number and UTR finds the transaction', async () => {
      for (const role of ROLES)
        for (const screen of screens) {
          const context = await session(role, screen);
          const { page, problems } = await open(context, '/dashboard/transactions');
          await filterSuccessfulPayins(page);
          const scope = role === 'merchant' ? { merchant: A } : {};
          const expected = await inDb({ ...scope, kind: 'payin', status: 'SUCCESS' });
          const mine = sorted([tx.paid, tx.formula, tx.minus, tx.resend]);
          assert.deepEqual(expected, role === 'merchant' ? mine : sorted([...mine, tx.other]), 'the fixture');
          assert.deepEqual(
            sorted(await listed(page)),
            expected,
            `${role} ${screen}: kind=payin status=SUCCESS`,
          );
          for (const r of await readTable(page, 'Transactions')) {
            assert.equal(r.Kind, 'Pay-in');
            assert.equal(r.Status, 'SUCCESS');
          }
          // The form keeps what was chosen.
          assert.equal(await page.getByLabel('Kind').inputValue(), 'payin');
          assert.equal(await page.getByLabel('Status').inputValue(), 'SUCCESS');
          if (role === 'operator') {
            // A list of the merchants, as on the overview and the ledger, not an id typed by hand.
            const merchant = page.getByRole('combobox', { name: 'Merchant', exact: true });
            assert.deepEqual(
              sorted(
                await merchant
                  .locator('option')
                  .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
              ),
              sorted(['', A, B]),
            );
            await merchant.selectOption(B);
            await Promise.all([
              page.waitForURL((u) => u.searchParams.get('merchant') === B),
              page.getByRole('button', { name: 'Apply' }).click(),
            ]);
            assert.deepEqual(await listed(page), [tx.other], 'one merchant');
          }
          await screenshot(page, `dashboard-${role}-filtered-${screen}`);

          const search = page.getByLabel('Search (payment_id, refund_id, order or refund no., UTR)');
          const cases: [string, string, string[]][] = [
            ['payment_id', tx.paid, [tx.paid]],
            [
              'merchant_order_no',
              'ord-shared-1',
              role === 'merchant' ? [tx.paid] : sorted([tx.paid, tx.other]),
            ],
            ['utr', paidUtr, [tx.paid]],
            ['payout order no', 'po-1', [tx.payout]],
          ];
          for (const [what, term, want] of cases) {
            await page.goto(`${base}/dashboard/transactions`);
            await search.fill(term);
            await Promise.all([
              page.waitForURL((u) => u.searchParams.get('q') === term),
              search.press('Enter'),
            ]);
            assert.deepEqual(
              sorted(await listed(page)),
              sorted(want),
              `${role} ${screen}: search by ${what}`,
            );
          }
          // The other merchant's payment_id finds nothing for A's user.
          await page.goto(`${base}/dashboard/transactions?q=${tx.other}`);
          assert.deepEqual(await listed(page), role === 'merchant' ? [] : [tx.other]);
          if (role === 'merchant') assert.ok(await page.getByText('No transactions match.').isVisible());
          await finish(page, problems);
        }
    });

    it('a transaction opened from the list shows its timeline, ledger journal and callback deliveries with attempts', async () => {
      for (const role of ROLES)
        for (const screen of screens) {
          const context = await session(role, screen);
          const { page, problems } = await open(context, `/dashboard/transactions?q=${paidUtr}`);
          await Promise.all([
            page.waitForURL(`${base}/dashboard/transactions/${tx.paid}`),
            page.getByRole('link', { name: tx.paid, exact: true }).click(),
          ]);
          await heading(page, 'Transaction');
          assert.equal(await fact(page, 'payment_id'), tx.paid);
          assert.equal(await fact(page, 'Order no.'), 'ord-shared-1');
          assert.equal(await fact(page, 'Amount'), '₹500.00');
          assert.equal(await fact(page, 'UTR'), paidUtr);
          assert.equal(await fact(page, 'Callback URL'), receiver.url('/callback'));

          const timeline = (await page.locator('ol.timeline li').allTextContents()).map((t) => t.trim());
          assert.ok(timeline.length >= 2, `a timeline: ${timeline.join(' | ')}`);
          assert.match(timeline[0]!, /^\d{1,2} [A-Z][a-z]{2}, \d\d:\d\d:\d\d — Created$/);
          assert.ok(
            timeline.some((t) => / — SUCCESS \(/.test(t)),
            `the success is on it: ${timeline.join(' | ')}`,
          );

          const journal = await readTable(page, 'Ledger journal');
          assert.deepEqual(
            journal.filter((j) => j.Account === 'available').map((j) => j.Amount),
            ['+₹500.00'],
            'the pay-in credits the available balance',
          );
          const paise = (t: string) => Math.round(Number(t.replace(/[₹,+]/g, '').replace('−', '-')) * 100);
          assert.ok(journal.length >= 2, 'both sides of the journal');
          assert.equal(
            journal.reduce((sum, j) => sum + paise(j.Amount!), 0),
            0,
            'the journal adds up to zero',
          );

          const deliveries = await gw.paygate.services.callbacks.list({ paymentId: tx.paid });
          assert.ok(deliveries.length >= 1);
          for (const d of deliveries) {
            const box = page.getByRole('region', { name: `Delivery ${d.delivery_id}` });
            assert.ok(await box.isVisible(), `delivery ${d.delivery_id} is shown`);
            const attempts = await readTable(page, `Attempts of ${d.delivery_id}`);
            assert.ok(attempts.length >= 1);
            assert.equal(attempts[0]!.Attempt, '1');
            assert.equal(attempts[0]!['HTTP status'], '200');
            assert.match(attempts[0]!.Latency!, /^\d+ ms$/);
          }
          await finish(page, problems);
        }
    });

    it('Resend callback: the receiver gets it again, the page lists the new delivery, and Activity says who resent what', async () => {
      for (const role of ROLES)
        for (const screen of screens) {
          const context = await session(role, screen);
          const { page, problems } = await open(context, `/dashboard/transactions/${tx.resend}`);
          const before = receiver.forPayment(tx.resend).length;
          const sections = await page.getByRole('region', { name: /^Delivery / }).count();
          await Promise.all([
            page.waitForURL(`${base}/dashboard/transactions/${tx.resend}?done=resent`),
            page.getByRole('button', { name: 'Resend callback' }).click(),
          ]);
          assert.equal(
            (await page.getByRole('status').textContent())?.trim(),
            'The callback is queued and will be sent in a moment.',
          );
          await receiver.waitFor(
            () => receiver.forPayment(tx.resend).length > before,
            `the resent callback of ${tx.resend}`,
            10_000,
          );
          const got = receiver.forPayment(tx.resend).at(-1)!;
          assert.equal(got.body.status, 'SUCCESS');
          assert.equal(got.attempt, 1, 'a fresh delivery starts at attempt 1');
          await deliveredAll(tx.resend, sections + 1);
          await page.reload();
          assert.equal(
            await page.getByRole('region', { name: /^Delivery / }).count(),
            sections + 1,
            'the new delivery',
          );

          const where = role === 'operator' ? '/dashboard/activity' : '/dashboard/developers';
          await page.goto(`${base}${where}`);
          const activity = await readTable(page, 'Activity');
          const row = activity[0]!;
          assert.equal(row.Who, EMAIL[role]);
          assert.equal(row.Action, 'resend');
          assert.equal(row.What, `resent the callback of ${tx.resend}`);
          if (role === 'operator') assert.equal(row.Merchant, A);
          await finish(page, problems);
        }

      // One resend so far for each role and screen; up to the fifth within the hour they are
      // allowed, the sixth is refused on the page.
      const { page, problems } = await open(
        await session('merchant', 'phone'),
        `/dashboard/transactions/${tx.resend}`,
      );
      const target = `${base}/dashboard/transactions/${tx.resend}/resend`;
      for (let resent = ROLES.length * screens.length; resent < 5; resent++) {
        if (page.url().endsWith('?done=resent'))
          await page.goto(`${base}/dashboard/transactions/${tx.resend}`);
        await Promise.all([
          page.waitForURL(`${base}/dashboard/transactions/${tx.resend}?done=resent`),
          page.getByRole('button', { name: 'Resend callback' }).click(),
        ]);
      }
      await deliveredAll(tx.resend, 6);
      const received = receiver.forPayment(tx.resend).length;
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST'),
        page.getByRole('button', { name: 'Resend callback' }).click(),
      ]);
      assert.equal(res.status(), 429, 'the sixth resend within the hour');
      await heading(page, 'Transaction');
      assert.match((await page.locator('.flash.error').textContent()) ?? '', /\S/, 'the page says why');
      await screenshot(page, 'dashboard-resend-limited-phone');
      assert.equal(
        (await gw.paygate.services.callbacks.list({ paymentId: tx.resend })).length,
        6,
        'nothing queued',
      );
      assert.equal(receiver.forPayment(tx.resend).length, received);
      await finish(page, problems, (p) => /status of 429/.test(p) && p.endsWith(`(${target})`));
    });

    it('Export CSV with a filter applied downloads exactly the filtered rows, header first, formula-like order numbers escaped', async () => {
      for (const role of ROLES)
        for (const screen of screens) {
          const context = await session(role, screen);
          const { page, problems } = await open(context, '/dashboard/transactions');
          await filterSuccessfulPayins(page);
          const onPage = sorted(await listed(page));
          const [download] = await Promise.all([
            page.waitForEvent('download'),
            page.getByRole('link', { name: 'Export CSV' }).click(),
          ]);
          assert.equal(download.suggestedFilename(), 'transactions.csv');
          const text = fs.readFileSync(await download.path(), 'utf8');
          assert.ok(text.startsWith(`${CSV_HEADER}\r\n`), `the header line first: ${text.slice(0, 120)}`);
          const [head, ...rows] = parseCsv(text);
          assert.equal(head!.join(','), CSV_HEADER);
          const col = (name: string) => head!.indexOf(name);
          const ids = rows.map((r) => r[col('payment_id')]!);
          assert.equal(new Set(ids).size, ids.length, 'each row once');
          assert.deepEqual(sorted(ids), onPage, `${role} ${screen}: the CSV is the filtered list`);
          assert.deepEqual(
            sorted(ids),
            await inDb({ ...(role === 'merchant' ? { merchant: A } : {}), kind: 'payin', status: 'SUCCESS' }),
          );
          for (const r of rows) {
            assert.equal(r.length, head!.length);
            assert.equal(r[col('kind')], 'payin');
            assert.equal(r[col('status')], 'SUCCESS');
            assert.match(r[col('created_at_ist')]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+05:30$/);
          }
          const byId = new Map(rows.map((r) => [r[col('payment_id')], r]));
          assert.equal(byId.get(tx.formula)![col('merchant_order_no')], "'=SUM(1+1)", '= is escaped');
          assert.equal(byId.get(tx.minus)![col('merchant_order_no')], "'-refund-5", '- is escaped');
          assert.equal(
            byId.get(tx.paid)![col('merchant_order_no')],
            'ord-shared-1',
            'plain text stays as it is',
          );
          assert.equal(byId.get(tx.paid)![col('amount')], '500.00');
          assert.equal(byId.get(tx.paid)![col('utr')], paidUtr);
          await finish(page, problems);
        }
    });

    it('developers: Rotate API key shows the new key once; it works at once and the old key gets 401 within 2 s; the webhook secret and the default callback URL change', async () => {
      for (const screen of screens) {
        const context = await session('merchant', screen);
        const old = keys.get(A)!;
        await apiAnswers(old, 200, 1); // the old key is known to (and cached by) the API
        const { page, problems } = await open(context, '/dashboard/developers');
        await Promise.all([
          page.waitForURL(`${base}/dashboard/developers/rotate-key`),
          page.getByRole('button', { name: 'Rotate API key' }).click(),
        ]);
        await heading(page, 'New API key');
        const key = (await page.locator('output.secret').textContent())?.trim() ?? '';
        assert.match(key, /^sk_test_/);
        assert.notEqual(key, old);
        await screenshot(page, `dashboard-new-key-${screen}`);
        const rotated = Date.now();
        assert.equal((await api('/wallet/balance', {}, key)).status, 200, 'the new key works at once');
        const refused = await apiAnswers(old, 401, 3_000);
        assert.equal(refused.body.error.error_code, 'AUTH_INVALID_API_KEY');
        assert.ok(
          Date.now() - rotated <= 2_500,
          `the old key is refused within 2 s (${Date.now() - rotated} ms)`,
        );
        keys.set(A, key);
        // Shown once: the developers page never shows it again.
        await Promise.all([
          page.waitForURL(`${base}/dashboard/developers`),
          page.getByRole('link', { name: 'Done' }).click(),
        ]);
        assert.ok(!(await page.content()).includes(key), 'the key is not shown again');

        await Promise.all([
          page.waitForURL(`${base}/dashboard/developers/rotate-secret`),
          page.getByRole('button', { name: 'Rotate webhook secret' }).click(),
        ]);
        await heading(page, 'New webhook secret');
        const secret = (await page.locator('output.secret').textContent())?.trim() ?? '';
        assert.match(secret, /^whsec_/);
        assert.notEqual(secret, secrets.get(A));
        secrets.set(A, secret);
        await page.goto(`${base}/dashboard/developers`);
        assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again');

        const url = receiver.url(`/default-${screen}`);
        await page.getByLabel('Callback URL', { exact: true }).fill(url);
        await Promise.all([
          page.waitForURL(`${base}/dashboard/developers?done=callback`),
          page.getByRole('button', { name: 'Save' }).click(),
        ]);
        assert.equal(
          (await page.getByRole('status').textContent())?.trim(),
          'The default callback URL is saved.',
        );
        assert.equal(await page.getByLabel('Callback URL', { exact: true }).inputValue(), url);
        const activity = (await readTable(page, 'Activity')).slice(0, 3).map((r) => [r.Who, r.Action]);
        assert.deepEqual(activity, [
          [EMAIL.merchant, 'callback_url'],
          [EMAIL.merchant, 'rotate_secret'],
          [EMAIL.merchant, 'rotate_key'],
        ]);
        await finish(page, problems);

        // A pay-in without a callback_url calls the new default, signed with the new secret.
        const p = await payin(A, 'onsite', 42, `ord-default-${screen}-${++seq}`, 'SUCCESS');
        await receiver.waitFor(
          () => receiver.forPayment(p.id).length > 0,
          'the callback to the default URL',
          10_000,
        );
        const got = receiver.forPayment(p.id)[0]!;
        assert.equal(got.path, `/default-${screen}`);
        const token = got.headers['x-verification-token'];
        assert.ok(
          verifyCallback(secret, got.raw, typeof token === 'string' ? token : undefined),
          'signed with the new secret',
        );
      }
    });

    it('an operator creates a merchant (key shown once), credits its wallet, disables and enables it, and rotates its key; Activity lists it all', async () => {
      for (const screen of screens) {
        const context = await session('operator', screen);
        const { page, problems } = await open(context, '/dashboard/merchants');
        const name = `Kirana ${screen}`;
        await page.getByLabel('Name', { exact: true }).fill(name);
        const [created] = await Promise.all([
          page.waitForResponse(
            (r) => r.url() === `${base}/dashboard/merchants` && r.request().method() === 'POST',
          ),
          page.getByRole('button', { name: 'Create merchant' }).click(),
        ]);
        assert.equal(created.status(), 201);
        await heading(page, `Merchant ${name} created`);
        const shown = (await page.locator('output.secret').allTextContents()).map((t) => t.trim());
        assert.equal(shown.length, 2, 'the key and the webhook secret');
        const [key, secret] = shown as [string, string];
        assert.match(key, /^sk_test_/);
        assert.match(secret, /^whsec_/);
        await screenshot(page, `dashboard-merchant-created-${screen}`);
        const balance = await apiAnswers(key, 200, 1);
        assert.deepEqual(balance.body, { currency: 'INR', available: 0, held: 0 }, 'the new key works');

        await Promise.all([
          page.waitForURL(/\/dashboard\/merchants\/[^/?]+$/),
          page.getByRole('link', { name: 'Done' }).first().click(),
        ]);
        const id = new URL(page.url()).pathname.split('/').at(-1)!;
        await heading(page, name);
        assert.ok(!(await page.content()).includes(key), 'the key is not shown again');

        await page.getByLabel('Credit amount (rupees)').fill('1234.50');
        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}?done=credited`),
          page.getByRole('button', { name: 'Credit wallet' }).click(),
        ]);
        assert.equal((await page.getByRole('status').textContent())?.trim(), 'The wallet is credited.');
        assert.deepEqual(await readTable(page, 'Balances'), [
          { Currency: 'INR', Available: '₹1,234.50', Held: '₹0.00' },
        ]);
        assert.equal((await api('/wallet/balance', {}, key)).body.available, 1234.5);
        await Promise.all([
          page.waitForURL(`${base}/dashboard?merchant=${id}`),
          page.getByRole('link', { name: 'Overview', exact: true }).last().click(),
        ]);
        assert.equal(await page.getByRole('combobox', { name: 'Merchant', exact: true }).inputValue(), id);
        const available = page.locator('.stat', { has: page.getByText('Available (INR)', { exact: true }) });
        assert.equal(
          await available.locator('strong').textContent(),
          '₹1,234.50',
          'the overview shows the balance',
        );

        await page.goto(`${base}/dashboard/merchants/${id}`);
        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}?done=disabled`),
          page.getByRole('button', { name: 'Disable merchant' }).click(),
        ]);
        assert.match((await page.getByRole('status').textContent()) ?? '', /The merchant is disabled/);
        assert.equal(await fact(page, 'Status'), 'disabled');
        const disabled = await apiAnswers(key, 403, 3_000);
        assert.equal(disabled.body.error.error_code, 'MERCHANT_DISABLED');
        assert.ok(disabled.ms <= 2_000, `refused within 2 s (${disabled.ms} ms)`);
        await screenshot(page, `dashboard-merchant-disabled-${screen}`);

        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}?done=enabled`),
          page.getByRole('button', { name: 'Enable merchant' }).click(),
        ]);
        assert.equal(await fact(page, 'Status'), 'active');
        const enabled = await apiAnswers(key, 200, 3_000);
        assert.ok(enabled.ms <= 2_000, `works again within 2 s (${enabled.ms} ms)`);

        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}/rotate-key`),
          page.getByRole('button', { name: 'Rotate API key' }).click(),
        ]);
        await heading(page, 'New API key');
        const newKey = (await page.locator('output.secret').textContent())?.trim() ?? '';
        assert.match(newKey, /^sk_test_/);
        assert.equal((await api('/wallet/balance', {}, newKey)).status, 200);
        const old = await apiAnswers(key, 401, 3_000);
        assert.ok(old.ms <= 2_000, `the old key is refused within 2 s (${old.ms} ms)`);

        // The webhook secret and the default callback URL, on the merchant's page.
        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}`),
          page.getByRole('link', { name: 'Done' }).click(),
        ]);
        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}/rotate-secret`),
          page.getByRole('button', { name: 'Rotate webhook secret' }).click(),
        ]);
        await heading(page, 'New webhook secret');
        const newSecret = (await page.locator('output.secret').textContent())?.trim() ?? '';
        assert.match(newSecret, /^whsec_/);
        assert.notEqual(newSecret, secret);
        await page.goto(`${base}/dashboard/merchants/${id}`);
        const url = receiver.url(`/kirana-${screen}`);
        await page.getByLabel('Callback URL', { exact: true }).fill(url);
        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants/${id}?done=callback`),
          page.getByRole('button', { name: 'Save' }).click(),
        ]);
        assert.equal((await gw.paygate.services.merchants.get(id)).callback_url, url);

        await page.goto(`${base}/dashboard/activity`);
        const mine = (await readTable(page, 'Activity'))
          .filter((r) => r.Merchant === id)
          .map((r) => [r.Who, r.Action, r.What]);
        assert.deepEqual(mine, [
          [EMAIL.operator, 'callback_url', `set the callback URL to ${url}`],
          [EMAIL.operator, 'rotate_secret', 'rotated the webhook secret'],
          [EMAIL.operator, 'rotate_key', 'rotated the API key'],
          [EMAIL.operator, 'enable', 'enabled the merchant'],
          [EMAIL.operator, 'disable', 'disabled the merchant'],
          [EMAIL.operator, 'credit', 'credited 1234.50 INR'],
          [EMAIL.operator, 'merchant_create', `created test merchant ${name}`],
        ]);
        for (const r of await readTable(page, 'Activity'))
          assert.match(
            r['Time (IST)']!,
            /^\d{1,2} [A-Z][a-z]{2}, \d\d:\d\d:\d\d$/,
            'when, as 28 Nov, 14:03:12',
          );
        await finish(page, problems);
      }
    });

    it("the new merchant's page names its two secrets apart (each in a region of its own name)", async () => {
      for (const screen of screens) {
        const { page, problems } = await open(await session('operator', screen), '/dashboard/merchants');
        await page.getByLabel('Name', { exact: true }).fill(`Dhaba ${screen}`);
        await Promise.all([
          page.waitForURL(`${base}/dashboard/merchants`),
          page.getByRole('button', { name: 'Create merchant' }).click(),
        ]);
        await heading(page, `Merchant Dhaba ${screen} created`);
        const ids = await page.evaluate(() => [...document.querySelectorAll('[id]')].map((e) => e.id));
        assert.deepEqual(
          ids.filter((id, i) => ids.indexOf(id) !== i),
          [],
          'no id is used twice (aria-labelledby would name the second section after the first)',
        );
        const keyBox = page.getByRole('region', { name: 'API key', exact: true });
        const secretBox = page.getByRole('region', { name: 'Webhook secret', exact: true });
        assert.equal(await keyBox.count(), 1, 'one region named "API key"');
        assert.equal(await secretBox.count(), 1, 'one region named "Webhook secret"');
        assert.match((await keyBox.locator('output').textContent()) ?? '', /^sk_test_/);
        assert.match((await secretBox.locator('output').textContent()) ?? '', /^whsec_/);
        await finish(page, problems);
      }
    });

    it("a merchant's user gets the 404 page for another merchant's transaction opened by URL", async () => {
      for (const screen of screens) {
        const merchant = await session('merchant', screen);
        const path = `/dashboard/transactions/${tx.other}`;
        let { page, problems } = await open(merchant, path, 404);
        await heading(page, 'Not found');
        assert.ok(!(await page.content()).includes('ord-shared-1'), 'nothing of it is shown');
        await screenshot(page, `dashboard-not-found-${screen}`);
        // Nor can it be resent: the form's post is 404 as well.
        const resend = await page.request.post(`${base}${path}/resend`, {
          form: { csrf: await csrfOf(merchant) },
          maxRedirects: 0,
        });
        assert.equal(resend.status(), 404);
        await finish(page, problems, (p) => /status of 404/.test(p) && p.endsWith(`(${base}${path})`));

        // The operator sees it.
        ({ page, problems } = await open(await session('operator', screen), path));
        assert.equal(await fact(page, 'Merchant'), `Other Shop (${B})`, 'by its name and id');
        await finish(page, problems);
      }
    });

    /** The CSRF token of a signed-in context, read from the sign-out form every page has. */
    async function csrfOf(context: BrowserContext): Promise<string> {
      const page = await context.newPage();
      await page.goto(`${base}/dashboard`);
      const token = await page.locator('form.signout input[name=csrf]').inputValue();
      await page.close();
      assert.ok(token.length >= 16);
      return token;
    }

    it('a form posted without its CSRF token, or with a wrong one, is refused with 403 and changes nothing', async () => {
      for (const role of ROLES)
        for (const screen of screens) {
          const context = await session(role, screen);
          const path = role === 'merchant' ? '/dashboard/developers' : `/dashboard/merchants/${A}`;
          const action = role === 'merchant' ? 'Rotate API key' : 'Credit wallet';
          const target = `${base}${path}/${role === 'merchant' ? 'rotate-key' : 'credit'}`;
          const before = await gw.paygate.services.wallets.balance(A, 'INR');
          for (const tamper of ['remove', 'wrong'] as const) {
            const { page, problems } = await open(context, path);
            if (role === 'operator') await page.getByLabel('Credit amount (rupees)').fill('1.00');
            await page.evaluate((how) => {
              for (const input of document.querySelectorAll<HTMLInputElement>('input[name=csrf]'))
                if (how === 'remove') input.remove();
                else input.value = 'x'.repeat(input.value.length);
            }, tamper);
            const [res] = await Promise.all([
              page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST'),
              page.getByRole('button', { name: action }).click(),
            ]);
            assert.equal(res.status(), 403, `${role} ${screen}: ${tamper}d token`);
            await heading(page, 'Not allowed');
            if (tamper === 'remove') await screenshot(page, `dashboard-csrf-refused-${screen}`);
            await finish(page, problems, (p) => /status of 403/.test(p) && p.endsWith(`(${target})`));
          }
          // Nothing changed: A's key still works (a rotation would have dropped it from the cache), the balance is the same.
          assert.equal((await api('/wallet/balance', {}, keys.get(A)!)).status, 200);
          assert.deepEqual(await gw.paygate.services.wallets.balance(A, 'INR'), before);

          // A post with the session cookie but no token field at all, outside any page.
          const page = await context.newPage();
          const bare = await page.request.post(`${base}/dashboard/developers/callback-url`, {
            form: { callback_url: 'https://evil.example/cb' },
            maxRedirects: 0,
          });
          assert.equal(bare.status(), 403);
          await page.close();
        }
      const m = await gw.paygate.services.merchants.get(A);
      assert.notEqual(m.callback_url, 'https://evil.example/cb');

      // The sign-in form has a token of its own.
      const context = await newContext('phone');
      const { page, problems } = await open(context, '/dashboard/sign-in');
      await page.getByLabel('Email').fill(EMAIL.merchant);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.evaluate(() => document.querySelector('input[name=csrf]')?.remove());
      const [res] = await Promise.all([
        page.waitForResponse(
          (r) => r.url() === `${base}/dashboard/sign-in` && r.request().method() === 'POST',
        ),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      assert.equal(res.status(), 403);
      assert.deepEqual(
        (await context.cookies()).filter((c) => c.name === SESSION_COOKIE),
        [],
        'no session without the sign-in token',
      );
      await finish(page, problems, (p) => /status of 403/.test(p));
    });

    it('Sign out ends the session: the old cookie sent again is sent to the sign-in page', async () => {
      for (const role of ROLES)
        for (const screen of screens) {
          const context = await newContext(screen);
          const page = await signIn(context, role);
          const problems = watchConsole(page);
          const captured: Cookie[] = await context.cookies();
          const cookie = captured.find((c) => c.name === SESSION_COOKIE);
          assert.ok(cookie, 'signed in');
          const header = `${SESSION_COOKIE}=${cookie.value}`;
          const before = await fetch(`${base}/dashboard/transactions`, {
            headers: { cookie: header },
            redirect: 'manual',
          });
          assert.equal(before.status, 200, 'the captured cookie works before signing out');

          await Promise.all([
            page.waitForURL(`${base}/dashboard/sign-in`),
            page.getByRole('button', { name: 'Sign out' }).click(),
          ]);
          await heading(page, 'Sign in to Paygate');
          assert.deepEqual(
            (await context.cookies()).filter((c) => c.name === SESSION_COOKIE),
            [],
          );
          await finish(page, problems);

          const replay = await newContext(screen);
          await replay.addCookies(captured);
          const { page: again, problems: more } = await open(replay, '/dashboard/transactions');
          assert.equal(
            again.url(),
            `${base}/dashboard/sign-in`,
            `${role} ${screen}: the old session is refused`,
          );
          await finish(again, more);
          await replay.close();

          const res = await fetch(`${base}/dashboard`, { headers: { cookie: header }, redirect: 'manual' });
          assert.equal(res.status, 303);
          assert.equal(res.headers.get('location'), '/dashboard/sign-in');
          const post = await fetch(`${base}/dashboard/developers/rotate-key`, {
            method: 'POST',
            headers: { cookie: header, 'content-type': 'application/x-www-form-urlencoded' },
            body: 'csrf=x',
            redirect: 'manual',
          });
          assert.equal(post.status, 303, 'a post with the old cookie does nothing either');
          await context.close();
        }
    });
  });
}
