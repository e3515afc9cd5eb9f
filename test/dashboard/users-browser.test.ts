/**
 * The console's Users page and account page in Chromium on a phone (390×844): they pass axe, the
 * page does not scroll sideways, and a password is changed and a user disabled through the forms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { chromiumSkip, launchChromium, phoneContext, screenshot, watchConsole } from '../support/browser.ts';
import { type Gateway, startGateway, testAccounts } from '../support/harness.ts';

const PASSWORD = 'correct-horse-battery-staple';

describe('console users in Chromium on a phone', { skip: chromiumSkip() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let base: string;

  before(async () => {
    gw = await startGateway('sqlite', { listen: true });
    base = gw.baseUrl.replace(/\/$/, '');
    const accounts = testAccounts(gw.database.db);
    await accounts.createUser({
      email: 'ops@paygate.example',
      role: 'operator',
      merchantId: null,
      password: PASSWORD,
    });
    await accounts.createUser({
      email: 'owner@shop.example',
      role: 'merchant',
      merchantId: gw.merchant.merchant_id,
      password: PASSWORD,
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  async function signIn(email: string, password = PASSWORD): Promise<BrowserContext> {
    const context = await phoneContext(browser);
    const page = await context.newPage();
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/dashboard`);
    await page.close();
    return context;
  }

  /** The page itself never scrolls sideways at 390 px. */
  async function noSidewaysScroll(context: BrowserContext, path: string) {
    const page = await context.newPage();
    const problems = watchConsole(page);
    assert.equal((await page.goto(`${base}${path}`))?.status(), 200, path);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow} px`);
    return { page, problems };
  }

  it('the account page changes the password; the Users page disables a user, who is then signed out', async () => {
    const owner = await signIn('owner@shop.example');
    const { page, problems } = await noSidewaysScroll(owner, '/dashboard/account');
    await screenshot(page, 'dashboard-account-phone');
    const next = 'another-long-passphrase';
    await page.getByLabel('Current password').fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill(next);
    await page.getByLabel('New password again').fill(next);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password is changed').waitFor();
    await screenshot(page, 'dashboard-account-changed-phone');
    assert.deepEqual(problems, []);

    const ops = await signIn('ops@paygate.example');
    const users = await noSidewaysScroll(ops, '/dashboard/users');
    await screenshot(users.page, 'dashboard-users-phone');
    await users.page.getByRole('button', { name: 'Disable owner@shop.example' }).click();
    await users.page.getByText('The user is disabled').waitFor();
    await users.page.getByRole('button', { name: 'Enable owner@shop.example' }).waitFor();
    assert.deepEqual(users.problems, []);

    const after = await owner.newPage();
    await after.goto(`${base}/dashboard`);
    assert.equal(after.url(), `${base}/dashboard/sign-in`, 'the disabled user is signed out');
    await owner.close();
    await ops.close();
  });
});
