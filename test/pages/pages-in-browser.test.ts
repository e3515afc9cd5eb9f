/**
 * The hosted payment pages in a real browser on a phone-sized screen: Chromium against a gateway
 * listening on real HTTP, the customer tapping the sandbox buttons, and for P2P the merchant's own
 * (local) return page receiving the customer. Screenshots land in test/artifacts/.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, phoneContext, screenshot, watchConsole } from '../support/browser.ts';
import { startGateway, type Gateway } from '../support/harness.ts';

/** The merchant's return page: records each visit and answers a small HTML page. */
async function startReturnServer(): Promise<{ url: string; visits: URL[]; close(): Promise<void> }> {
  const visits: URL[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/return') visits.push(url);
    res.writeHead(url.pathname === '/return' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><html lang="en"><title>Shop</title><link rel="icon" href="data:,"><h1>Back at the shop</h1></html>',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    visits,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('hosted payment pages in Chromium on a phone', { skip: chromiumSkip() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let context: BrowserContext;
  let shop: Awaited<ReturnType<typeof startReturnServer>>;
  // The gateway's clock runs with real time, shifted when a test needs a request to expire.
  let shift = 0;
  let seq = 0;

  before(async () => {
    [gw, browser, shop] = await Promise.all([
      startGateway('sqlite', {
        listen: true,
        env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true' },
        now: () => Date.now() + shift,
      }),
      launchChromium(),
      startReturnServer(),
    ]);
    context = await phoneContext(browser);
    // Generous for a busy machine, yet a missing navigation fails well inside the suite's budget.
    context.setDefaultTimeout(15_000);
  });

  after(async () => {
    await context?.close();
    await browser?.close();
    await shop?.close();
    await gw?.close();
  });

  async function payin(flow: 'onsite' | 'offsite' | 'p2p', extra: Record<string, unknown> = {}) {
    const orderNo = `web-${++seq}`;
    const res = await gw.post(`/payments/${flow}/payin`, {
      money: { amount: 123456.5 },
      merchant_order_no: orderNo,
      ...extra,
    });
    assert.equal(res.status, 200, res.text);
    const url = new URL(flow === 'offsite' ? res.body.data.cashier_url : res.body.payment_url);
    return { id: res.body.payment_id as string, orderNo, url: `${gw.baseUrl}${url.pathname}` };
  }

  async function payinStatus(id: string): Promise<string> {
    return (await gw.post('/payments/payin_status', { payment_id: id })).body.status;
  }

  /** Opens a page and checks what a phone user needs: no sideways scrolling, thumb-sized targets. */
  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    const problems = watchConsole(page);
    const res = await page.goto(url);
    assert.ok(res, 'navigated');
    assert.deepEqual(
      problems.filter((m) => !/status of 404/.test(m)),
      [],
      'the page loads without console errors (CSP violations included)',
    );
    const layout = await page.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      smallTargets: [...document.querySelectorAll('a, button')]
        .map((el) => ({ text: (el.textContent ?? '').trim(), box: el.getBoundingClientRect() }))
        .filter(({ box }) => box.height < 44 && box.width > 0)
        .map(({ text }) => text),
    }));
    assert.ok(layout.overflow <= 0, `no horizontal scrolling at 390 px (overflow ${layout.overflow}px)`);
    assert.deepEqual(layout.smallTargets, [], 'every link and button is at least 44 px tall');
    return { page, problems };
  }

  it('onsite: shows amount, order, QR and buttons; "Simulate success" shows the result and the pay-in turns SUCCESS', async () => {
    const p = await payin('onsite');
    const { page, problems } = await open(p.url);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Test Shop');
    assert.equal((await page.locator('.amount').textContent())?.trim(), '₹1,23,456.50');
    assert.ok(await page.getByText(p.orderNo, { exact: true }).isVisible());
    const qr = page.getByRole('img', { name: 'UPI QR code to pay ₹1,23,456.50 to Test Shop' });
    assert.ok(await qr.isVisible());
    const box = await qr.boundingBox();
    assert.ok(box && box.width >= 200, `the QR is large enough to scan (${box?.width}px)`);
    assert.ok(await page.getByRole('link', { name: 'Google Pay' }).isVisible());
    assert.match((await page.locator('time.left').textContent()) ?? '', /^1[45] min \d\d s$/);
    await screenshot(page, 'onsite-pending');

    await page.getByRole('button', { name: 'Simulate success' }).click();
    await page.getByRole('heading', { name: 'Payment successful' }).waitFor();
    assert.equal(new URL(page.url()).pathname, new URL(p.url).pathname, 'back on the payment page');
    assert.match((await page.locator('dd.mono').last().textContent()) ?? '', /^\d{12}$/, 'the UTR is shown');
    assert.equal(await page.getByRole('button').count(), 0, 'no buttons on a final payment');
    await screenshot(page, 'onsite-success');
    assert.equal(await payinStatus(p.id), 'SUCCESS');
    assert.deepEqual(problems, [], 'no console errors (CSP violations included)');
    await page.close();
  });

  it('P2P: after "Simulate success" the customer lands on the merchant\'s redirect_url with the right parameters', async () => {
    const p = await payin('p2p', { redirect_url: `${shop.url}/return?cart=42` });
    const { page, problems } = await open(p.url);
    assert.ok(await page.getByRole('img', { name: /UPI QR code/ }).isVisible());
    await screenshot(page, 'p2p-pending');
    // The answer to the button's POST is held until the page's own poll has seen SUCCESS: the page
    // must leave the result to that navigation, not reload as well and send the customer back twice.
    const path = new URL(p.url).pathname;
    const reloads: string[] = [];
    page.on('request', (r) => {
      if (r.isNavigationRequest() && r.method() === 'GET' && new URL(r.url()).pathname === path)
        reloads.push(r.url());
    });
    await page.route(`**${path}/simulate`, async (route) => {
      // Sent on by Playwright, the POST lacks the browser's own Sec-Fetch-Site: given as the browser sends it.
      const headers = { ...(await route.request().allHeaders()), 'sec-fetch-site': 'same-origin' };
      const answer = await route.fetch({ maxRedirects: 0, headers });
      // The pay-in is SUCCESS once the answer is in, so the poll's next status read says so.
      await page.waitForEvent('requestfinished', (r) => r.url().endsWith(`${path}/status`));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await route.fulfill({ response: answer }).catch(() => undefined);
    });
    await page.getByRole('button', { name: 'Simulate success' }).click();
    await page.waitForURL((u) => u.pathname === '/return');
    assert.deepEqual(reloads, [], 'the page did not reload while the POST was under way');
    await page.getByRole('heading', { name: 'Back at the shop' }).waitFor();
    const landed = new URL(page.url());
    assert.equal(landed.origin, shop.url);
    assert.deepEqual(Object.fromEntries(landed.searchParams), {
      cart: '42',
      payment_id: p.id,
      merchant_order_no: p.orderNo,
      status: 'SUCCESS',
    });
    assert.equal(shop.visits.length, 1);
    assert.equal(shop.visits[0]?.searchParams.get('payment_id'), p.id);
    assert.equal(await payinStatus(p.id), 'SUCCESS');
    // Coming back to the provider page sends the customer straight on to the merchant.
    await page.goto(p.url);
    assert.equal(new URL(page.url()).pathname, '/return');
    assert.equal(shop.visits.length, 2);
    assert.deepEqual(problems, [], 'no console errors; form-action allowed the redirect to the merchant');
    await page.close();
  });

  it('cashier: "Simulate failure" from the keyboard shows the failure and the pay-in turns FAILED', async () => {
    const p = await payin('offsite');
    const { page, problems } = await open(p.url);
    await screenshot(page, 'cashier-pending');
    // Reachable and usable without a pointer: focus the button and press Enter.
    const fail = page.getByRole('button', { name: 'Simulate failure' });
    await fail.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Payment failed' }).waitFor();
    assert.equal(await page.locator('[data-status]').textContent(), 'Failed');
    assert.equal(await page.locator('[data-status]').getAttribute('data-status'), 'FAILED');
    await screenshot(page, 'cashier-failed');
    assert.equal(await payinStatus(p.id), 'FAILED');
    assert.deepEqual(problems, []);
    await page.close();
  });

  for (const screen of ['phone', 'desktop'] as const) {
    it(`follows the payment on a ${screen}: a settlement through the API shows the result within 5 s, without a reload by the customer; the countdown moves`, async () => {
      const p = await payin('onsite');
      const { page, problems } = await open(p.url);
      if (screen === 'desktop') await page.setViewportSize({ width: 1280, height: 900 });
      const first = await page.locator('time.left').getAttribute('datetime');
      await page.waitForFunction(
        (was) => document.querySelector('time.left')?.getAttribute('datetime') !== was,
        first,
        { timeout: 3_000 },
      );
      const settled = Date.now();
      const done = await gw.post('/sandbox/payin/complete', { payment_id: p.id, status: 'SUCCESS' });
      assert.equal(done.status, 200, done.text);
      await page.getByRole('heading', { name: 'Payment successful' }).waitFor({ timeout: 5_000 });
      const tookMs = Date.now() - settled;
      assert.ok(tookMs < 5_000, `the page followed in ${tookMs} ms`);
      await screenshot(page, `onsite-followed-${screen}`);
      assert.deepEqual(problems, [], 'no console errors: the script and its status requests pass the CSP');
      await page.close();
    });
  }

  it("P2P follows the payment too: the customer lands on the merchant's redirect_url within 5 s", async () => {
    const p = await payin('p2p', { redirect_url: `${shop.url}/return?cart=77` });
    const { page, problems } = await open(p.url);
    const visits = shop.visits.length;
    const done = await gw.post('/sandbox/payin/complete', { payment_id: p.id, status: 'FAILED' });
    assert.equal(done.status, 200, done.text);
    await page.waitForURL((u) => u.pathname === '/return', { timeout: 5_000 });
    assert.equal(new URL(page.url()).searchParams.get('status'), 'FAILED');
    assert.equal(shop.visits.length, visits + 1);
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('puts the app buttons above the QR on a phone and the QR first on a wide screen; the UPI id has a working Copy button', async () => {
    const p = await payin('onsite');
    const { page } = await open(p.url);
    const top = async (selector: string) => (await page.locator(selector).boundingBox())!.y;
    assert.ok((await top('.apps-card')) < (await top('.scan')), 'phone: apps first');
    const copy = page.getByRole('button', { name: 'Copy' });
    assert.ok(await copy.isVisible(), 'the script shows the Copy button');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.baseUrl });
    await copy.click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    assert.equal(
      await page.evaluate(() => navigator.clipboard.readText()),
      await page.locator('#vpa').textContent(),
    );
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.ok((await top('.scan')) < (await top('.apps-card')), 'wide screen: QR first');
    await screenshot(page, 'onsite-desktop');
    await page.close();
  });

  it('shows an expired request and a not-found page cleanly', async () => {
    const p = await payin('onsite');
    shift = (gw.config.payinExpiryS + 1) * 1000;
    try {
      const { page, problems } = await open(p.url);
      await page.getByRole('heading', { name: 'Payment request expired' }).waitFor();
      assert.equal(await page.getByRole('button').count(), 0);
      await screenshot(page, 'onsite-expired');
      const unknown = `${gw.baseUrl}/pay/${'X'.repeat(32)}`;
      const missing = await page.goto(unknown);
      assert.equal(missing?.status(), 404);
      await page.getByRole('heading', { name: 'Payment not found' }).waitFor();
      await screenshot(page, 'not-found');
      // Chromium logs the 404 of the document itself; anything else would be a problem.
      assert.deepEqual(
        problems.filter((m) => !m.endsWith(`(${unknown})`)),
        [],
      );
      await page.close();
    } finally {
      shift = 0;
    }
  });
});
