/**
 * The console's exceptions page in Chromium, at 390 px and on a desktop, with rows of each kind of
 * money (suspense, receivable, none) and a resolved one: axe finds nothing serious, the page does not
 * scroll sideways on the phone, and a credit goes through its confirmation step once. A console
 * post with a missing note or an unknown exception is 400 and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { findTransaction } from '../../src/transactions/transactions.repository.ts';
import { chromiumSkip, launchChromium, phoneContext, screenshot, watchConsole } from '../support/browser.ts';
import { type Gateway, startGateway, testAccounts } from '../support/harness.ts';
import { until } from '../support/live.ts';

const PASSWORD = 'correct-horse-battery-staple';
const RECEIVER = { name: 'Asha Rao', account_no: '123456780000', ifsc_code: 'HDFC0001234' };

describe('console exceptions in Chromium', { skip: chromiumSkip() }, () => {
  let gw: Gateway;
  let browser: Browser;
  let base: string;
  let n = 0;

  async function seed() {
    const o = gw.paygate.services.outcomes;
    const pay = async (amount: number, status?: string) => {
      const res = await gw.post('/payments/onsite/payin', {
        money: { amount },
        merchant_order_no: `b-${++n}`,
      });
      if (status) await gw.post('/sandbox/payin/complete', { payment_id: res.body.payment_id, status });
      return (await findTransaction(gw.database.db, res.body.payment_id))!;
    };
    await o.payin(
      await pay(120, 'FAILED'),
      { status: 'SUCCESS', utr: '111111111111', channelTxnId: 'x', amount: 12_000, reference: 'late-1' },
      'test',
    );
    await o.payin(
      await pay(150),
      { status: 'SUCCESS', utr: '222222222222', channelTxnId: 'x', amount: 9_900, reference: 'mm-1' },
      'test',
    );
    await o.within((s) =>
      o.untied(s, {
        kind: 'unknown_reference',
        provider: 'sandbox',
        reference: 'unk-1',
        amount: 5_000,
        detail: 'payment.success for an unknown QR',
        payment: true,
      }),
    );
    await o.within((s) =>
      o.untied(s, {
        kind: 'low_balance',
        provider: 'cashfree',
        reference: 'lb-1',
        amount: 100,
        detail: 'Cashfree reports a low balance',
      }),
    );
    await o.stuck(await pay(75), 90_000);
    const payout = await gw.post('/payments/payout', {
      money: { amount: 50 },
      merchant_order_no: `b-${++n}`,
      receiver: RECEIVER,
    });
    const id = payout.body.payment_id as string;
    await until(
      async () => (await findTransaction(gw.database.db, id))!.status === 'FAILED',
      'the payout to fail',
    );
    await o.payout(
      (await findTransaction(gw.database.db, id))!,
      {
        channelTxnId: 'x',
        outcome: { status: 'SUCCESS', utr: '333333333333', channelTxnId: 'x' },
        reversed: false,
      },
      'test',
    );
    const stuck = await gw.database.db
      .selectFrom('channel_exceptions')
      .select('id')
      .where('kind', '=', 'stuck')
      .executeTakeFirstOrThrow();
    await gw.paygate.services.exceptions.resolve(Number(stuck.id), {
      action: 'dismiss',
      note: 'paid by cash',
      actor: 'ops@paygate.example',
    });
  }

  before(async () => {
    gw = await startGateway('sqlite', {
      listen: true,
      worker: true,
      env: { AUTO_REFUND_UNMATCHED: 'false', SANDBOX_PAYOUT_SETTLE_MS: '50', WORKER_POLL_MS: '50' },
    });
    base = gw.baseUrl.replace(/\/$/, '');
    await gw.paygate.services.wallets.topUp(gw.merchant.merchant_id, 'INR', 100_000);
    await testAccounts(gw.database.db).createUser({
      email: 'ops@paygate.example',
      role: 'operator',
      merchantId: null,
      password: PASSWORD,
    });
    await seed();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  async function signIn(context: BrowserContext) {
    const page = await context.newPage();
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill('ops@paygate.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/dashboard`);
    return page;
  }

  it('lists open exceptions first at 390 px and on a desktop, and credits one through a confirmation', async () => {
    for (const [name, context] of [
      ['phone', await phoneContext(browser)],
      ['desktop', await browser.newContext({ viewport: { width: 1280, height: 900 } })],
    ] as const) {
      const page = await signIn(context);
      const problems = watchConsole(page);
      await page
        .getByText(/open exceptions?/)
        .first()
        .waitFor();
      assert.equal((await page.goto(`${base}/dashboard/exceptions`))?.status(), 200);
      const text = await page.locator('table').innerText();
      for (const kind of [
        'payment_after_final',
        'amount_mismatch',
        'unknown_reference',
        'low_balance',
        'stuck',
        'payout_after_failed',
      ])
        assert.ok(text.includes(kind), `${kind} is listed`);
      const states = await page.locator('tbody tr td:nth-child(2)').allInnerTexts();
      assert.ok(
        states.lastIndexOf('Open') < states.findIndex((s) => s.startsWith('Resolved')),
        'open ones first',
      );
      if (name === 'phone') {
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px`);
      }
      await screenshot(page, `dashboard-exceptions-${name}`);
      assert.deepEqual(problems, []);
      await context.close();
    }

    const context = await phoneContext(browser);
    const page = await signIn(context);
    const late = await gw.database.db
      .selectFrom('channel_exceptions')
      .select('id')
      .where('reference', '=', 'late-1')
      .executeTakeFirstOrThrow();
    await page.goto(`${base}/dashboard/exceptions/${late.id}`);
    await screenshot(page, 'dashboard-exception-phone');
    const before = (await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR')).available;
    await page.getByRole('button', { name: 'Credit to the merchant' }).click();
    await page.getByRole('button', { name: 'Confirm credit' }).waitFor();
    await screenshot(page, 'dashboard-exception-confirm-phone');
    assert.equal(
      (await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR')).available,
      before,
      'nothing moves before the confirmation',
    );
    const fields = Object.fromEntries(
      await page
        .locator('form[action$="/resolve"] input[type=hidden]')
        .evaluateAll((inputs) =>
          inputs.map((i) => [(i as HTMLInputElement).name, (i as HTMLInputElement).value]),
        ),
    );
    await page.getByRole('button', { name: 'Confirm credit' }).click();
    await page.getByText('The exception is resolved').waitFor();
    assert.equal(
      (await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR')).available,
      before + 12_000,
    );
    // The same confirmation posted again (a double click, a resend by the browser) moves nothing more.
    const again = await page.request.post(`${base}/dashboard/exceptions/${late.id}/resolve`, {
      form: fields,
      headers: { origin: base },
    });
    assert.equal(again.status(), 409);
    assert.equal(
      (await gw.paygate.services.wallets.balance(gw.merchant.merchant_id, 'INR')).available,
      before + 12_000,
    );
    const report = await gw.paygate.services.wallets.verify();
    assert.deepEqual(report.problems, []);
    await context.close();
  });

  it('answers 400 to a dismissal without a note and to an unknown exception, changing nothing', async () => {
    const context = await browser.newContext();
    const page = await signIn(context);
    const unk = await gw.database.db
      .selectFrom('channel_exceptions')
      .select('id')
      .where('reference', '=', 'unk-1')
      .executeTakeFirstOrThrow();
    const csrf = await page
      .goto(`${base}/dashboard/exceptions/${unk.id}`)
      .then(() => page.locator('input[name=csrf]').first().getAttribute('value'));
    const post = (path: string, form: Record<string, string>) =>
      page.request.post(`${base}${path}`, { form: { csrf: csrf!, ...form }, headers: { origin: base } });
    const noNote = await post(`/dashboard/exceptions/${unk.id}/resolve`, { action: 'dismiss', note: '' });
    assert.equal(noNote.status(), 400);
    assert.match(await noNote.text(), /note is required/);
    const unknown = await post('/dashboard/exceptions/99999/resolve', { action: 'dismiss', note: 'x' });
    assert.equal(unknown.status(), 400);
    const low = await gw.database.db
      .selectFrom('channel_exceptions')
      .select('id')
      .where('reference', '=', 'lb-1')
      .executeTakeFirstOrThrow();
    const credit = await post(`/dashboard/exceptions/${low.id}/resolve`, {
      action: 'credit',
      merchant: gw.merchant.merchant_id,
      confirm: 'yes',
      form_id: 'a'.repeat(22),
    });
    assert.equal(credit.status(), 400);
    assert.match(await credit.text(), /holds no/);
    const e = await gw.paygate.services.exceptions.get(Number(unk.id));
    assert.deepEqual([e!.resolved_at, e!.outstanding], [null, 5_000]);
    await context.close();
  });
});
