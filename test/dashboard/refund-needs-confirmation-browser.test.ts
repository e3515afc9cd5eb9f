/**
 * A refund from the console (CONTRACT §11, §12) in Chromium, at 1280 px and at 390 px, on both
 * databases: the pay-in's refund form starts empty; a partial amount typed is shown on a second
 * screen that names the amount, the pay-in and the customer; nothing is refunded until Confirm (not
 * by the review, not by Cancel), and then exactly the amount typed. Every screen is axe-clean and,
 * on the phone, does not scroll sideways.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, launchChromium, phoneContext, screenshot, watchConsole } from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { sidewaysOverflow } from '../support/phone-layout.ts';

const PASSWORD = 'correct-horse-battery-staple';
const CUSTOMER = { user_name: 'Asha Rao', phone_number: '+919812345678', email: 'asha@example.com' };

for (const kind of DATABASES) {
  describe(
    `a console refund is confirmed on a second screen (${kind})`,
    { skip: chromiumSkip() || (await skipFor(kind)) },
    () => {
      let gw: Gateway;
      let browser: Browser;
      const contexts: BrowserContext[] = [];
      let n = 0;

      before(async () => {
        [gw, browser] = await Promise.all([
          startGateway(kind, { listen: true, worker: true, env: { SANDBOX_PAYOUT_SETTLE_MS: '60000' } }),
          launchChromium(),
        ]);
        await testAccounts(gw.database.db).createUser({
          email: 'owner@shop.example',
          role: 'merchant',
          merchantId: gw.merchant.merchant_id,
          password: PASSWORD,
        });
      });
      after(async () => {
        for (const c of contexts) await c.close().catch(() => {});
        await browser?.close();
        await gw?.close();
      });

      async function paidIn(amount: number): Promise<string> {
        const made = await gw.post('/payments/onsite/payin', {
          money: { amount },
          merchant_order_no: `cr-${kind}-${++n}`,
          user_details: CUSTOMER,
        });
        assert.equal(made.status, 200, made.text);
        const id = made.body.payment_id as string;
        assert.equal(
          (await gw.post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' })).status,
          200,
        );
        return id;
      }

      const refundsOf = async (paymentId: string) =>
        (
          await gw.database.db
            .selectFrom('transactions')
            .select(['payment_id', 'amount'])
            .where('refund_of', '=', paymentId)
            .execute()
        ).map((r) => ({ id: r.payment_id, amount: Number(r.amount) }));

      async function signIn(screen: 'desktop' | 'phone'): Promise<Page> {
        const context =
          screen === 'phone'
            ? await phoneContext(browser)
            : await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-IN' });
        context.setDefaultTimeout(15_000);
        contexts.push(context);
        const page = await context.newPage();
        await page.goto(`${gw.baseUrl}/dashboard/sign-in`);
        await page.getByLabel('Email').fill('owner@shop.example');
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([
          page.waitForURL(`${gw.baseUrl}/dashboard`),
          page.getByRole('button', { name: 'Sign in' }).click(),
        ]);
        return page;
      }

      async function fits(page: Page, screen: string) {
        if (screen === 'phone')
          assert.deepEqual(await sidewaysOverflow(page), [], `${page.url()} fits 390 px`);
      }

      for (const screen of ['desktop', 'phone'] as const)
        it(`${screen}: starts empty, names amount, pay-in and customer, refunds nothing before Confirm, then exactly what was typed`, async () => {
          const paymentId = await paidIn(100);
          const page = await signIn(screen);
          const problems = watchConsole(page);
          await page.goto(`${gw.baseUrl}/dashboard/transactions/${paymentId}`);
          const amount = page.getByLabel(/^Refund amount/);
          assert.equal(await amount.inputValue(), '', 'no amount filled in');
          await screenshot(page, `refund-form-${screen}`);

          // Review: the second screen, and nothing held or recorded yet.
          await amount.fill('12.34');
          await page.getByLabel('Reason (optional)').fill('One item returned');
          await page.getByRole('button', { name: 'Review refund' }).click();
          await page.getByRole('heading', { level: 1, name: 'Confirm refund', exact: true }).waitFor();
          const text = (await page.locator('main').textContent()) ?? '';
          assert.match(text, /Confirm: refund ₹12\.34 to the customer/);
          assert.ok(text.includes(paymentId), 'the pay-in');
          for (const v of Object.values(CUSTOMER)) assert.ok(text.includes(v), `the customer: ${v}`);
          assert.ok(text.includes('One item returned'), 'the reason');
          assert.deepEqual(await refundsOf(paymentId), [], 'the review refunds nothing');
          await screenshot(page, `refund-confirm-${screen}`);
          await fits(page, screen);

          // Cancel goes back to the pay-in, and nothing is refunded.
          await Promise.all([
            page.waitForURL(`${gw.baseUrl}/dashboard/transactions/${paymentId}`),
            page.getByRole('link', { name: 'Cancel' }).click(),
          ]);
          assert.deepEqual(await refundsOf(paymentId), [], 'Cancel refunds nothing');
          assert.equal(await page.getByLabel(/^Refund amount/).inputValue(), '', 'empty again');

          // Confirm: exactly the amount typed, once.
          await page.getByLabel(/^Refund amount/).fill('12.34');
          await page.getByRole('button', { name: 'Review refund' }).click();
          await Promise.all([
            page.waitForURL(`${gw.baseUrl}/dashboard/transactions/${paymentId}?done=refunded`),
            page.getByRole('button', { name: 'Confirm refund of ₹12.34' }).click(),
          ]);
          const made = await refundsOf(paymentId);
          assert.equal(made.length, 1);
          assert.equal(made[0]!.amount, 1_234, 'exactly the amount typed');
          const status = await gw.post('/payments/refund_status', { refund_id: made[0]!.id });
          assert.equal(status.body.money.amount, 12.34, 'as the API reads it back');
          // The page now says at most 87.66 is left, and still fills nothing in.
          assert.match((await page.getByLabel(/^Refund amount/).getAttribute('placeholder')) ?? '', /0\.00/);
          assert.match(
            (await page.locator('label[for="refund-amount"]').textContent()) ?? '',
            /at most 87\.66/,
          );
          assert.equal(await page.getByLabel(/^Refund amount/).inputValue(), '');
          await screenshot(page, `refund-done-${screen}`);
          await fits(page, screen);
          assert.deepEqual(problems, [], 'no console errors');
          await page.close();
        });

      it('more than is left is refused on the review screen, before anything is held', async () => {
        const paymentId = await paidIn(10);
        const page = await signIn('desktop');
        await page.goto(`${gw.baseUrl}/dashboard/transactions/${paymentId}`);
        await page.getByLabel(/^Refund amount/).fill('10.01');
        const [res] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/refund') && r.request().method() === 'POST'),
          page.getByRole('button', { name: 'Review refund' }).click(),
        ]);
        assert.equal(res.status(), 400);
        assert.match((await page.getByRole('alert').textContent()) ?? '', /exceed/);
        assert.deepEqual(await refundsOf(paymentId), []);
        await screenshot(page, 'refund-refused-desktop');
        await page.close();
      });
    },
  );
}
