/**
 * Makes the README's picture of the console (docs/dashboard.png): a gateway on a throw-away SQLite
 * file, a demo merchant with a working day of sandbox transactions (pay-ins of every flow, one
 * failed and one still open, a vendor payout and a partial refund, settled by the worker), and
 * Chromium at 1280×860 signed in as the merchant's user on the transactions page.
 *
 *   node --import tsx scripts/dashboard-screenshot.ts [out.png]
 *
 * Needs Chromium at /usr/bin/chromium (Debian package `chromium`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { AccountService } from '../src/dashboard/accounts.service.ts';
import { migrate, openDatabase } from '../src/db/database.ts';
import { launchChromium } from '../test/support/browser.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.resolve(process.argv[2] ?? path.join(root, 'docs/dashboard.png'));
const EMAIL = 'accounts@ashastores.example';
const PASSWORD = 'demo-password-not-for-production';

/** The day's pay-ins, oldest first: flow, rupees, order number, outcome. */
const PAYINS: ['onsite' | 'offsite' | 'p2p', number, string, 'SUCCESS' | 'FAILED'][] = [
  ['onsite', 1_249, 'AS-2026-10471', 'SUCCESS'],
  ['offsite', 3_499, 'AS-2026-10472', 'SUCCESS'],
  ['p2p', 799, 'AS-2026-10473', 'SUCCESS'],
  ['onsite', 12_950, 'AS-2026-10474', 'SUCCESS'],
  ['onsite', 2_150.5, 'AS-2026-10475', 'FAILED'],
  ['offsite', 649, 'AS-2026-10476', 'SUCCESS'],
  ['onsite', 5_400, 'AS-2026-10477', 'SUCCESS'],
];
/** Made last, at the end of the day: an unpaid pay-in expires after PAYIN_EXPIRY_S. */
const OPEN: ['p2p', number, string] = ['p2p', 1_875, 'AS-2026-10478'];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'paygate-demo-'));
// The demo's day starts eight hours ago; each transaction moves the clock on, and it ends now.
let offset = 8 * 3600_000;
const now = () => Date.now() - offset;
const config = loadConfig({
  DATABASE_URL: `sqlite:${path.join(dir, 'demo.db')}`,
  PORT: '0',
  LOG_LEVEL: 'silent',
  SANDBOX_PAYOUT_SETTLE_MS: '200',
  PUBLIC_URL: 'https://pay.ashastores.example',
});
const database = openDatabase(config.databaseUrl);
await migrate(database);
const paygate = await buildApp({ config, database, logger: false, now });
const base = await paygate.app.listen({ port: 0, host: '127.0.0.1' });
paygate.worker.start();

try {
  const merchant = await paygate.services.merchants.create({ name: 'Asha Stores' });
  await new AccountService(database.db).createUser({
    email: EMAIL,
    role: 'merchant',
    merchantId: merchant.merchant_id,
    password: PASSWORD,
  });
  await paygate.services.wallets.topUp(merchant.merchant_id, 'INR', 20_000_00);

  async function api(url: string, body: unknown): Promise<Record<string, unknown>> {
    const res = await paygate.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${merchant.api_key}` },
      payload: body as object,
    });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    return res.json();
  }
  const step = () => (offset -= 50 * 60_000);

  const ids: string[] = [];
  for (const [flow, amount, orderNo, outcome] of PAYINS) {
    const made = await api(`/payments/${flow}/payin`, { money: { amount }, merchant_order_no: orderNo });
    ids.push(made.payment_id as string);
    await api('/sandbox/payin/complete', { payment_id: made.payment_id, status: outcome });
    step();
  }
  const payout = await api('/payments/payout', {
    money: { amount: 8_500 },
    merchant_order_no: 'VND-2026-0311',
    receiver: { name: 'Ravi Kumar Traders', account_no: '50100234567891', ifsc_code: 'HDFC0001234' },
  });
  step();
  const refund = await api('/payments/refund', {
    payment_id: ids[3],
    money: { amount: 1_295 },
    merchant_refund_no: 'AS-2026-10474-R1',
    reason: 'One item returned',
  });
  offset = 0;
  await api(`/payments/${OPEN[0]}/payin`, { money: { amount: OPEN[1] }, merchant_order_no: OPEN[2] });

  const deadline = Date.now() + 30_000;
  for (;;) {
    const p = await api('/payments/payout_status', { payment_id: payout.payment_id });
    const r = await api('/payments/refund_status', { refund_id: refund.refund_id });
    if (p.status === 'SUCCESS' && r.status === 'SUCCESS') break;
    if (Date.now() > deadline)
      throw new Error('the sandbox did not settle the payout and the refund in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 }, locale: 'en-IN' });
    await page.goto(`${base}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([
      page.waitForURL(`${base}/dashboard`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await page.goto(`${base}/dashboard/transactions`);
    await page.screenshot({ path: out });
    console.log(`wrote ${path.relative(process.cwd(), out)}`);
  } finally {
    await browser.close();
  }
} finally {
  await paygate.worker.stop();
  await paygate.app.close();
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
