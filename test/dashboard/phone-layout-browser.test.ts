/**
 * The console on a phone (CONTRACT §11): Chromium at 390×844 opens every console page, as a
 * merchant's user and as an operator, with rows in every table, and finds no element whose content
 * is wider than its box (nothing scrolls or spills sideways), every table cell on screen, each
 * transaction's amount and status on screen, chart text drawn at 11 px or more, a compact header
 * whose menu works, and no serious axe-core violation. The hosted payment page's UPI id wraps only
 * after its '@' or a '.', never inside a word. The layout does not depend on the database: SQLite only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { recordException } from '../../src/exceptions/exceptions.repository.ts';
import { finishRun, openDifference, startRun } from '../../src/reconcile/reconcile.repository.ts';
import {
  assertAccessible,
  chromiumSkip,
  launchChromium,
  PagePool,
  phoneContext,
  screenshot,
} from '../support/browser.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import {
  amountAndStatus,
  cellsOffScreen,
  chartTextSizes,
  sidewaysOverflow,
  type Overflow,
} from '../support/phone-layout.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

const PASSWORD = 'correct-horse-battery-staple';
const EMAIL = {
  merchant: 'accounts.receivable@ashastores-bengaluru.example',
  operator: 'operations.on-call@paygate.example',
};
/** A live-looking UPI id: long enough that a 390 px payment page must wrap it. */
const VPA = 'ashastores.koramangala.bengaluru@okhdfcbank';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ConsolePage {
  role: 'merchant' | 'operator' | 'signed-out';
  path: string;
  h1: string;
  /** Table rows the page must show (it is checked with data, not empty). */
  rows: number;
  status?: number;
}

describe('the console on a phone (390×844)', { skip: chromiumSkip() || (await skipFor('sqlite')) }, () => {
  let gw: Gateway;
  let browser: Browser;
  let receiver: Receiver;
  const contexts = new Map<string, BrowserContext>();
  const visits = new PagePool();
  let A: string;
  let B: string;
  let paid = '';
  let payout = '';
  let refund = '';
  let runId = 0;
  let exceptionId = 0;
  /** Per page: the elements that overflowed sideways. */
  const found = new Map<string, Overflow[]>();

  async function api(path: string, body: unknown, key = gw.merchant.api_key) {
    const res = await fetch(`${gw.baseUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as any;
    assert.equal(res.status, 200, JSON.stringify(json));
    return json;
  }

  async function payin(
    flow: string,
    amount: number,
    orderNo: string,
    status: 'SUCCESS' | 'FAILED' | null,
    key?: string,
  ) {
    const made = await api(
      `/payments/${flow}/payin`,
      {
        money: { amount },
        merchant_order_no: orderNo,
        callback_url: receiver.url('/callbacks/paygate/payins'),
      },
      key,
    );
    if (status) await api('/sandbox/payin/complete', { payment_id: made.payment_id, status }, key);
    return made.payment_id as string;
  }

  async function until(what: string, ok: () => Promise<boolean>) {
    const deadline = Date.now() + 15_000;
    while (!(await ok())) {
      assert.ok(Date.now() < deadline, `${what} within 15 s`);
      await delay(50);
    }
  }

  before(async () => {
    [gw, browser, receiver] = await Promise.all([
      startGateway('sqlite', {
        listen: true,
        worker: true,
        env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true', SANDBOX_PAYOUT_SETTLE_MS: '50' },
      }),
      launchChromium(),
      startReceiver(),
    ]);
    A = gw.merchant.merchant_id;
    const other = await gw.newMerchant();
    B = other.merchant_id;
    const accounts = testAccounts(gw.database.db);
    await accounts.createUser({ email: EMAIL.merchant, role: 'merchant', merchantId: A, password: PASSWORD });
    await accounts.createUser({
      email: EMAIL.operator,
      role: 'operator',
      merchantId: null,
      password: PASSWORD,
    });

    // A: every kind, flow and outcome, with order numbers as long as the API takes.
    await gw.paygate.services.wallets.topUp(A, 'INR', 25_000_00);
    paid = await payin('onsite', 48_999.5, 'INV-2026-11-BLR-000184-RETAIL-01', 'SUCCESS');
    await payin('offsite', 1_249, 'INV-2026-11-BLR-000185-RETAIL-SHP-02', 'FAILED');
    await payin('p2p', 399, 'INV-2026-11-BLR-000186-RETAIL-SHP-03', null);
    for (let i = 0; i < 4; i++)
      await payin('onsite', 1_000 + i * 250.75, `ORD${'7'.repeat(28)}${i}`, 'SUCCESS');
    payout = (
      await api('/payments/payout', {
        money: { amount: 12_500 },
        merchant_order_no: 'STL-2026-11-25-VENDOR-PAY-000042',
        receiver: {
          name: 'Venkataramanan Subramaniam Enterprises',
          account_no: '918020045671234',
          ifsc_code: 'UTIB0000123',
        },
        callback_url: receiver.url('/callbacks/paygate/payouts'),
      })
    ).payment_id;
    refund = (
      await api('/payments/refund', {
        payment_id: paid,
        money: { amount: 2_499.5 },
        merchant_refund_no: 'RFND-2026-11-BLR-000184-PART-01',
        reason: 'Customer returned two of the five items ordered; partial refund as agreed on the phone',
      })
    ).refund_id;
    await payin('onsite', 3_100, 'ORD-B-000001', 'SUCCESS', other.api_key);
    await payin('onsite', 750, 'ORD-B-000002', 'SUCCESS', other.api_key);

    const status = async (path: string, body: object) => (await api(path, body)).status as string;
    await until(
      'the payout settles',
      async () => (await status('/payments/payout_status', { payment_id: payout })) === 'SUCCESS',
    );
    await until(
      'the refund settles',
      async () => (await status('/payments/refund_status', { refund_id: refund })) === 'SUCCESS',
    );
    await until('the pay-in callback is delivered', async () => {
      const list = await gw.paygate.services.callbacks.list({ paymentId: paid });
      return list.length > 0 && list.every((d) => d.status === 'delivered');
    });

    // What only live channels produce: channel exceptions and a reconciliation run with differences.
    const at = Date.now();
    exceptionId = (await recordException(
      gw.database.db,
      {
        kind: 'amount_mismatch',
        provider: 'setu',
        paymentId: paid,
        reference: 'setu-payment-0f8c2b7e-4d1a-4c7b-9a55-3e21c0ffee42',
        amount: 4_899_950,
        detail:
          'Setu reported a payment of 48,999.00 for a pay-in of 48,999.50 on QR product-instance 9b2d1c4e-77aa-4f0e',
      },
      at,
    ))!;
    await recordException(
      gw.database.db,
      {
        kind: 'unknown_reference',
        provider: 'cashfree',
        paymentId: null,
        reference: 'cf_transfer_7781250066123',
        amount: null,
        detail: 'TRANSFER_SUCCESS for a transfer_id Paygate never sent',
      },
      at,
    );
    runId = await startRun(
      gw.database.db,
      { date: '2026-11-24', channel: 'cashfree', trigger: 'schedule' },
      at,
    );
    await openDifference(
      gw.database.db,
      runId,
      {
        channel: 'cashfree',
        reference: payout,
        field: 'utr',
        providerValue: 'UTIBR52026112400001234567',
        paygateValue: 'UTIBR52026112400001234568',
        paymentId: payout,
        amount: 1_250_000,
      },
      at,
    );
    await finishRun(
      gw.database.db,
      runId,
      { checked: 1, matched: 0, mismatched: 1, unreadable: 0, opened: 1 },
      at,
    );
  });

  after(async () => {
    for (const c of contexts.values()) await c.close().catch(() => {});
    await browser?.close();
    await receiver?.close();
    await gw?.close();
    const pages = [...found.keys()].length;
    const elements = [...found.values()].reduce((n, list) => n + list.length, 0);
    console.log(`# phone layout: ${pages} page views checked, ${elements} elements overflowing sideways`);
  });

  async function session(role: 'merchant' | 'operator' | 'signed-out'): Promise<BrowserContext> {
    const known = contexts.get(role);
    if (known) return known;
    const context = await phoneContext(browser);
    context.setDefaultTimeout(15_000);
    contexts.set(role, context);
    if (role !== 'signed-out') {
      const page = await context.newPage();
      await page.goto(`${gw.baseUrl}/dashboard/sign-in`);
      await page.getByLabel('Email').fill(EMAIL[role]);
      await page.getByLabel('Password').fill(PASSWORD);
      await Promise.all([
        page.waitForURL(`${gw.baseUrl}/dashboard`),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      await page.close();
    }
    return context;
  }

  /** Opens a page and checks everything a phone needs; returns what was wrong. */
  async function check(p: ConsolePage, shot: string): Promise<string[]> {
    const { page, problems } = await visits.take(await session(p.role));
    const res = await page.goto(`${gw.baseUrl}${p.path}`);
    const wrong: string[] = [];
    const where = `${p.role} ${p.path}`;
    assert.equal(res?.status(), p.status ?? 200, where);
    await page.getByRole('heading', { level: 1, name: p.h1, exact: true }).waitFor();
    const rows = await page.locator('tbody tr').count();
    assert.ok(rows >= p.rows, `${where}: ${rows} table rows, at least ${p.rows} expected`);

    const overflow = await sidewaysOverflow(page);
    found.set(where, overflow);
    for (const o of overflow)
      wrong.push(`${where}: ${o.element} is ${o.scrollWidth}px wide in ${o.clientWidth}px`);
    for (const c of await cellsOffScreen(page)) wrong.push(`${where}: off screen: ${c}`);
    for (const region of ['Transactions', 'Refunds of this pay-in'])
      for (const [i, r] of (await amountAndStatus(page, region)).entries()) {
        assert.ok(r.amount && r.status, `${where}: ${region} row ${i} has an amount and a status`);
        if (!r.amountOnScreen || !r.statusOnScreen)
          wrong.push(
            `${where}: ${region} row ${i}: amount ${r.amount} ${r.amountOnScreen ? 'on' : 'off'} screen, status ${r.status} ${r.statusOnScreen ? 'on' : 'off'} screen`,
          );
      }
    for (const t of await chartTextSizes(page))
      if (t.px < 11) wrong.push(`${where}: chart text "${t.text}" drawn at ${t.px}px`);
    await screenshot(page, shot); // checks the page with axe first
    const allowed = (text: string) =>
      p.status !== undefined && new RegExp(`status of ${p.status}`).test(text);
    assert.deepEqual(
      problems.filter((t) => !allowed(t)),
      [],
      `${where}: no console errors`,
    );
    visits.done(page);
    return wrong;
  }

  it('every console page, as a merchant’s user and as an operator: nothing overflows sideways, every cell and each amount and status on screen, chart text ≥ 11 px, axe clean', async () => {
    const pages: ConsolePage[] = [
      { role: 'signed-out', path: '/dashboard/sign-in', h1: 'Sign in to Paygate', rows: 0 },
      { role: 'merchant', path: '/dashboard', h1: 'Overview', rows: 30 },
      { role: 'merchant', path: '/dashboard/transactions', h1: 'Transactions', rows: 9 },
      { role: 'merchant', path: `/dashboard/transactions/${paid}`, h1: 'Transaction', rows: 3 },
      { role: 'merchant', path: `/dashboard/transactions/${payout}`, h1: 'Transaction', rows: 2 },
      { role: 'merchant', path: `/dashboard/transactions/${refund}`, h1: 'Transaction', rows: 1 },
      { role: 'merchant', path: '/dashboard/ledger', h1: 'Ledger', rows: 8 },
      { role: 'merchant', path: '/dashboard/developers', h1: 'Developers', rows: 1 },
      { role: 'merchant', path: '/dashboard/exceptions', h1: 'Channel exceptions', rows: 2 },
      {
        role: 'merchant',
        path: `/dashboard/exceptions/${exceptionId}`,
        h1: `Exception #${exceptionId}`,
        rows: 0,
      },
      { role: 'merchant', path: '/dashboard/reconcile', h1: 'Reconciliation', rows: 1 },
      { role: 'merchant', path: `/dashboard/reconcile/${runId}`, h1: 'Reconciliation 24 Nov', rows: 1 },
      { role: 'merchant', path: `/dashboard/transactions?delivery=failed`, h1: 'Transactions', rows: 0 },
      { role: 'merchant', path: '/dashboard/account', h1: 'Your account', rows: 0 },
      { role: 'merchant', path: '/dashboard/no-such-page', h1: 'Not found', rows: 0, status: 404 },
      { role: 'operator', path: '/dashboard', h1: 'Overview', rows: 30 },
      { role: 'operator', path: `/dashboard?merchant=${A}`, h1: 'Overview', rows: 30 },
      { role: 'operator', path: '/dashboard/transactions', h1: 'Transactions', rows: 11 },
      {
        role: 'operator',
        path: `/dashboard/transactions?merchant=${A}&kind=payin`,
        h1: 'Transactions',
        rows: 7,
      },
      { role: 'operator', path: `/dashboard/transactions/${paid}`, h1: 'Transaction', rows: 3 },
      { role: 'operator', path: '/dashboard/ledger', h1: 'Ledger', rows: 0 },
      { role: 'operator', path: `/dashboard/ledger?merchant=${A}`, h1: 'Ledger', rows: 8 },
      { role: 'operator', path: '/dashboard/merchants', h1: 'Merchants', rows: 2 },
      { role: 'operator', path: `/dashboard/merchants/${A}`, h1: 'Test Shop', rows: 2 },
      { role: 'operator', path: '/dashboard/exceptions', h1: 'Channel exceptions', rows: 3 },
      {
        role: 'operator',
        path: `/dashboard/exceptions/${exceptionId}`,
        h1: `Exception #${exceptionId}`,
        rows: 0,
      },
      { role: 'operator', path: '/dashboard/reconcile', h1: 'Reconciliation', rows: 1 },
      { role: 'operator', path: `/dashboard/reconcile/${runId}`, h1: 'Reconciliation 24 Nov', rows: 1 },
      { role: 'operator', path: '/dashboard/verify', h1: 'Ledger check', rows: 0 },
      { role: 'operator', path: '/dashboard/users', h1: 'Users', rows: 2 },
      { role: 'operator', path: '/dashboard/activity', h1: 'Activity', rows: 2 },
      { role: 'operator', path: '/dashboard/account', h1: 'Your account', rows: 0 },
    ];
    const wrong: string[] = [];
    for (const [i, p] of pages.entries())
      wrong.push(
        ...(await check(
          p,
          `console-phone-${String(i).padStart(2, '0')}-${p.role}-${p.h1.toLowerCase().replace(/\W+/g, '-')}`,
        )),
      );
    assert.ok(B, 'a second merchant');
    assert.deepEqual(wrong, [], `${pages.length} pages at 390×844:\n${wrong.join('\n')}`);
  });

  it('a page that shows a secret once (a rotated webhook secret) fits too', async () => {
    const page = await (await session('merchant')).newPage();
    await page.goto(`${gw.baseUrl}/dashboard/developers`);
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/rotate-secret')),
      page.getByRole('button', { name: 'Rotate webhook secret' }).click(),
    ]);
    await page.getByRole('heading', { level: 2, name: 'Webhook secret' }).waitFor();
    assert.deepEqual(await sidewaysOverflow(page), []);
    await assertAccessible(page, 'the new webhook secret');
    await page.close();
  });

  it('the header and menu are compact: one row of at most 64 px; the menu opens over the page and its links work', async () => {
    for (const role of ['merchant', 'operator'] as const) {
      const page = await (await session(role)).newPage();
      await page.goto(`${gw.baseUrl}/dashboard/transactions`);
      const header = await page.locator('body > header').boundingBox();
      assert.ok(header && header.height <= 64, `${role}: the header is ${header?.height}px tall`);
      const h1 = await page.getByRole('heading', { level: 1 }).boundingBox();
      assert.ok(h1 && h1.y < 120, `${role}: the page's heading starts ${h1?.y}px down`);

      await page.getByText('Menu', { exact: true }).click();
      const nav = page.getByRole('navigation', { name: 'Dashboard' });
      const links = nav.getByRole('link');
      assert.equal(await links.count(), role === 'operator' ? 10 : 7, 'every page, and the account');
      for (const link of await links.all()) {
        const box = (await link.boundingBox())!;
        assert.ok(box.x >= 0 && box.x + box.width <= 390, `${await link.textContent()} on screen`);
        assert.ok(box.height >= 44, 'a finger-sized target');
      }
      assert.equal(
        await nav.getByRole('link', { name: 'Transactions' }).getAttribute('aria-current'),
        'page',
      );
      assert.deepEqual(await sidewaysOverflow(page), [], 'the open menu fits');
      await assertAccessible(page, `${role}: the open menu`);
      await Promise.all([
        page.waitForURL(`${gw.baseUrl}/dashboard/ledger`),
        nav.getByRole('link', { name: 'Ledger', exact: true }).click(),
      ]);
      await page.getByRole('heading', { level: 1, name: 'Ledger' }).waitFor();
      await page.close();
    }
  });

  it('the payment page wraps its UPI id only after the @ or a dot, never inside a word', async () => {
    const m = await gw.paygate.services.merchants.create({ name: 'Asha Stores', vpa: VPA });
    const made = await api(
      '/payments/onsite/payin',
      { money: { amount: 1_499 }, merchant_order_no: 'ORD-VPA-1' },
      m.api_key,
    );
    const page = await (await session('signed-out')).newPage();
    await page.goto(`${gw.baseUrl}/pay/${made.payment_id}`);
    const vpa = page.locator('#vpa');
    assert.equal(await vpa.textContent(), VPA);
    // Where the laid-out text starts a new line: the characters before each break.
    const breaks = await vpa.evaluate((el) => {
      const text = el.textContent ?? '';
      const range = document.createRange();
      const tops: number[] = [];
      let i = 0;
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (let j = 0; j < node.textContent!.length; j++, i++) {
          range.setStart(node, j);
          range.setEnd(node, j + 1);
          tops.push(Math.round(range.getBoundingClientRect().top));
        }
      const out: string[] = [];
      for (let k = 1; k < tops.length; k++) if (tops[k]! > tops[k - 1]!) out.push(text.slice(0, k));
      return out;
    });
    for (const before of breaks) assert.match(before, /[@.]$/, `a line ends after "${before}"`);
    assert.deepEqual(await sidewaysOverflow(page), []);
    await page.close();
  });
});
