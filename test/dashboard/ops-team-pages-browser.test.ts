/**
 * What a merchant's ops team reads in the console (CONTRACT §11), in Chromium at 1280 px and at
 * 390 px, on both databases, with data behind every page: a FAILED payout's page names its reason;
 * the overview counts a callback that failed every attempt, and its link lists that pay-in; a
 * pay-in's page shows the customer details it was created with; the merchant's exceptions page lists
 * the exception on its pay-in with the payer's UPI id masked. The text is read as it is drawn, every
 * page is axe-clean and nothing on it scrolls sideways.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { recordException } from '../../src/exceptions/exceptions.repository.ts';
import { chromiumSkip, launchChromium, phoneContext, screenshot, watchConsole } from '../support/browser.ts';
import { DATABASES } from '../support/databases.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { until } from '../support/live.ts';
import { sidewaysOverflow } from '../support/phone-layout.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

const PASSWORD = 'correct-horse-battery-staple';
const EMAIL = 'ops.team@ashastores.example';
const CUSTOMER = { user_name: 'Asha Rao', phone_number: '+919812345678', email: 'asha@example.com' };
const PAYER = 'ashwini.rao@okaxis';

for (const kind of DATABASES) {
  describe(
    `a merchant's ops team reads its console (${kind})`,
    { skip: chromiumSkip() || (await skipFor(kind)) },
    () => {
      let gw: Gateway;
      let browser: Browser;
      let receiver: Receiver;
      const contexts: BrowserContext[] = [];
      let payoutId = '';
      let payinId = '';
      let exceptionId = 0;

      before(async () => {
        // Every callback is refused: with one retry 50 ms later, it has failed every attempt at once.
        [gw, browser, receiver] = await Promise.all([
          startGateway(kind, {
            listen: true,
            worker: true,
            env: {
              ALLOW_PRIVATE_CALLBACK_URLS: 'true',
              CALLBACK_MAX_RETRIES: '1',
              CALLBACK_RETRY_INTERVAL_MS: '50',
              SANDBOX_PAYOUT_SETTLE_MS: '50',
            },
          }),
          launchChromium(),
          startReceiver({ answer: () => 500 }),
        ]);
        const A = gw.merchant.merchant_id;
        await gw.paygate.services.wallets.topUp(A, 'INR', 1_000_00);
        const payout = await gw.post('/payments/payout', {
          money: { amount: 10 },
          merchant_order_no: `ops-po-${kind}`,
          receiver: { name: 'Ravi Kumar', account_no: '123456780000', ifsc_code: 'HDFC0001234' },
        });
        assert.equal(payout.status, 200, payout.text);
        payoutId = payout.body.payment_id;
        const payin = await gw.post('/payments/onsite/payin', {
          money: { amount: 80 },
          merchant_order_no: `ops-pi-${kind}`,
          user_details: CUSTOMER,
          callback_url: receiver.url('/down'),
        });
        assert.equal(payin.status, 200, payin.text);
        payinId = payin.body.payment_id;
        const done = await gw.post('/sandbox/payin/complete', { payment_id: payinId, status: 'SUCCESS' });
        assert.equal(done.status, 200, done.text);
        exceptionId = (await recordException(
          gw.database.db,
          {
            kind: 'amount_mismatch',
            provider: 'setu',
            paymentId: payinId,
            merchantId: A,
            reference: 'setu-pay-ops',
            amount: 7_900,
            detail: `payment.success from ${PAYER} of 79.00 for a pay-in of 80.00`,
          },
          Date.now(),
        ))!;
        await testAccounts(gw.database.db).createUser({
          email: EMAIL,
          role: 'merchant',
          merchantId: A,
          password: PASSWORD,
        });
        await until(async () => {
          const row = await gw.database.db
            .selectFrom('transactions')
            .select('status')
            .where('payment_id', '=', payoutId)
            .executeTakeFirstOrThrow();
          return row.status === 'FAILED';
        }, 'the payout FAILED by the sandbox rule');
        await until(async () => {
          const list = await gw.paygate.services.callbacks.list({ paymentId: payinId });
          return list.length > 0 && list.every((d) => d.status === 'failed');
        }, "the pay-in's callback failed every attempt");
      });
      after(async () => {
        for (const c of contexts) await c.close().catch(() => {});
        await browser?.close();
        await gw?.close();
        await receiver?.close();
      });

      async function signIn(screen: 'desktop' | 'phone'): Promise<Page> {
        const context =
          screen === 'phone'
            ? await phoneContext(browser)
            : await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-IN' });
        context.setDefaultTimeout(15_000);
        contexts.push(context);
        const page = await context.newPage();
        await page.goto(`${gw.baseUrl}/dashboard/sign-in`);
        await page.getByLabel('Email').fill(EMAIL);
        await page.getByLabel('Password').fill(PASSWORD);
        await Promise.all([
          page.waitForURL(`${gw.baseUrl}/dashboard`),
          page.getByRole('button', { name: 'Sign in' }).click(),
        ]);
        return page;
      }

      /** The drawn text of the fact named `term` on a transaction's page. */
      async function fact(page: Page, term: string): Promise<string> {
        const dd = page.locator(`dl.facts dt:text-is("${term}") + dd`).first();
        assert.ok(await dd.isVisible(), `${term} is shown`);
        return (await dd.innerText()).trim();
      }

      /**
       * Checks the page as it is: axe-clean, and nothing scrolls sideways. On a phone no element is
       * wider than its box; at 1280 px the page is not, and a table wider than the page scrolls
       * only inside its own focusable region, as the console draws wide tables there.
       */
      async function looked(page: Page, name: string, screen: 'desktop' | 'phone'): Promise<void> {
        await screenshot(page, name);
        const over = await sidewaysOverflow(page);
        if (screen === 'phone') assert.deepEqual(over, [], `${name}: nothing scrolls sideways`);
        else
          assert.deepEqual(
            over.filter((o) => !o.element.startsWith('div.scroll ')),
            [],
            `${name}: the page does not scroll sideways`,
          );
      }

      for (const screen of ['desktop', 'phone'] as const)
        it(`${screen}: a FAILED payout's reason, a failed callback counted and found, the customer, the exceptions`, async () => {
          const page = await signIn(screen);
          const problems = watchConsole(page);

          await page.goto(`${gw.baseUrl}/dashboard/transactions/${payoutId}`);
          assert.equal(await fact(page, 'Status'), 'FAILED');
          assert.equal(
            await fact(page, 'Failure reason'),
            'sandbox rule: a payout to an account number ending in 0000 fails',
          );
          await looked(page, `ops-failed-payout-${screen}`, screen);

          await page.goto(`${gw.baseUrl}/dashboard`);
          const count = page.locator('#failed-deliveries');
          assert.equal((await count.innerText()).trim(), '1 transaction whose callback failed every attempt');
          await looked(page, `ops-overview-${screen}`, screen);
          await Promise.all([
            page.waitForURL(`${gw.baseUrl}/dashboard/transactions?delivery=failed`),
            count.getByRole('link').click(),
          ]);
          const listed = page.locator('main').getByRole('link', { name: /^[A-Za-z0-9]{32}$/ });
          assert.deepEqual(
            await listed.allInnerTexts(),
            [payinId],
            'the pay-in whose callback failed, alone',
          );
          assert.ok(await listed.first().isVisible());
          assert.equal(
            await page
              .locator('#f-delivery')
              .evaluate((s) => (s as HTMLSelectElement).selectedOptions[0]!.text),
            'Delivery failed',
            'the filter shows what it holds',
          );
          await looked(page, `ops-failed-deliveries-${screen}`, screen);

          await Promise.all([
            page.waitForURL(`${gw.baseUrl}/dashboard/transactions/${payinId}`),
            listed.first().click(),
          ]);
          assert.equal(
            await fact(page, 'Customer'),
            `${CUSTOMER.user_name} · ${CUSTOMER.phone_number} · ${CUSTOMER.email}`,
          );
          await looked(page, `ops-payin-customer-${screen}`, screen);

          await page.goto(`${gw.baseUrl}/dashboard/exceptions`);
          const view = page.getByRole('link', { name: `View #${exceptionId}` });
          assert.ok(await view.isVisible(), 'the exception on its pay-in is listed');
          const text = await page.locator('main').innerText();
          assert.match(text, /amount_mismatch/);
          assert.ok(text.includes('as***@okaxis'), "the payer's UPI id, masked");
          assert.ok(!text.includes(PAYER), 'never whole');
          assert.equal(await page.getByRole('button', { name: /Resolve/ }).count(), 0, 'read-only');
          await looked(page, `ops-exceptions-${screen}`, screen);

          assert.deepEqual(problems, [], 'no console errors');
        });
    },
  );
}
