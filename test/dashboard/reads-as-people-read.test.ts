/**
 * The console reads as a merchant's team reads (CONTRACT §11), over HTTP on both databases: dates
 * as `28 Nov` in IST (times, the overview's chart and its table), never `2026-11-28` or `11-28`; the
 * success rate says it is of pay-ins, and counts only them; the header names the merchant by its
 * name; a transaction's page shows the customer details it was created with (a refund, its pay-in's).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DAY_MS, IST_OFFSET_MS } from '../../src/ist.ts';
import { DATABASES } from '../support/databases.ts';
import { getPage, signedIn, type ConsoleBrowser } from '../support/console.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { until } from '../support/live.ts';

const PASSWORD = 'correct horse battery';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An instant's IST day as the console should write it, worked out here: `28 Nov`. */
function istLabel(at: number): string {
  const d = new Date(at + IST_OFFSET_MS);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/** The visible text of a page: its tags and the attributes in them dropped. */
function visibleText(body: string): string {
  return body.replace(/<[^>]*>/g, ' ');
}

for (const kind of DATABASES) {
  describe(`the console reads as people read (${kind})`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    let shop: ConsoleBrowser;
    const ids = {} as Record<'paid' | 'failed' | 'plain' | 'payout' | 'refund', string>;
    let keyOf = '';

    before(async () => {
      gw = await startGateway(kind, { worker: true, env: { SANDBOX_PAYOUT_SETTLE_MS: '50' } });
      const m = await gw.paygate.services.merchants.create({ name: 'Asha Stores Bengaluru' });
      const key = m.api_key;
      keyOf = key;
      await gw.paygate.services.wallets.topUp(m.merchant_id, 'INR', 10_000_00);
      const payin = async (order: string, status: 'SUCCESS' | 'FAILED', extra: object = {}) => {
        const made = await gw.post(
          '/payments/onsite/payin',
          { money: { amount: 100 }, merchant_order_no: order, ...extra },
          { key },
        );
        assert.equal(made.status, 200, made.text);
        await gw.post('/sandbox/payin/complete', { payment_id: made.body.payment_id, status }, { key });
        return made.body.payment_id as string;
      };
      ids.paid = await payin('rd-1', 'SUCCESS', {
        user_details: { user_name: 'Asha Rao', phone_number: '+919812345678', email: 'asha@example.com' },
      });
      ids.failed = await payin('rd-2', 'FAILED');
      ids.plain = await payin('rd-3', 'SUCCESS');
      await payin('rd-4', 'SUCCESS');
      // Two payouts that fail (account ending 0000): they are no part of the pay-in success rate.
      for (const n of [1, 2]) {
        const p = await gw.post(
          '/payments/payout',
          {
            money: { amount: 10 },
            merchant_order_no: `rd-po-${n}`,
            receiver: { name: 'Ravi', account_no: '123456780000', ifsc_code: 'HDFC0001234' },
            user_details: { user_name: 'Ravi Kumar', email: 'ravi@example.com' },
          },
          { key },
        );
        assert.equal(p.status, 200, p.text);
        ids.payout = p.body.payment_id;
      }
      const refund = await gw.post(
        '/payments/refund',
        { payment_id: ids.paid, money: { amount: 10 }, merchant_refund_no: 'rd-rf' },
        { key },
      );
      ids.refund = refund.body.refund_id;
      await until(async () => {
        const r = await gw.database.db
          .selectFrom('transactions')
          .select('status')
          .where('kind', '=', 'payout')
          .where('merchant_id', '=', m.merchant_id)
          .execute();
        return r.length === 2 && r.every((t) => t.status === 'FAILED');
      }, 'the payouts to fail');
      await testAccounts(gw.database.db).createUser({
        email: `asha-${kind}@stores.example`,
        role: 'merchant',
        merchantId: m.merchant_id,
        password: PASSWORD,
      });
      shop = await signedIn(gw, `asha-${kind}@stores.example`, PASSWORD);
    });
    after(() => gw.close());

    it('dates read 28 Nov (IST): times, the chart and the figures by day; no ISO dates or 11-28 on any page', async () => {
      const now = Date.now();
      const today = istLabel(now);
      const overview = (await getPage(gw, shop, '/dashboard')).body;
      // The chart's labels, under every fifth bar (wide) and every seventh (narrow) counted back from today.
      const labels = [...overview.matchAll(/<text [^>]*text-anchor="middle">([^<]*)<\/text>/g)].map(
        (m) => m[1],
      );
      assert.ok(labels.length >= 10, `chart labels: ${labels.join(', ')}`);
      assert.equal(labels.filter((l) => l === today).length, 2, 'today under the last bar of both drawings');
      assert.ok(labels.includes(istLabel(now - 5 * DAY_MS)), 'five days back on the wide one');
      for (const l of labels) assert.match(l!, /^\d{1,2} [A-Z][a-z]{2}$/);
      assert.match(
        overview,
        new RegExp(`<td data-label="Day \\(IST\\)"><time datetime="[0-9-]{10}">${today}</time></td>`),
      );

      const pages = [
        '/dashboard',
        '/dashboard/transactions',
        `/dashboard/transactions/${ids.paid}`,
        `/dashboard/transactions/${ids.payout}`,
        '/dashboard/ledger',
        '/dashboard/developers',
      ];
      for (const path of pages) {
        const text = visibleText((await getPage(gw, shop, path)).body);
        assert.doesNotMatch(text, /\b\d{4}-\d\d-\d\d\b/, `${path}: no ISO date in what is read`);
        assert.doesNotMatch(text, /(^|\s)\d\d-\d\d(\s|$)/, `${path}: no month-day pair`);
      }
      const detail = (await getPage(gw, shop, `/dashboard/transactions/${ids.paid}`)).body;
      assert.match(
        detail,
        new RegExp(
          `<dt>Created \\(IST\\)</dt><dd><time datetime="[^"]+">${today}, \\d\\d:\\d\\d:\\d\\d</time>`,
        ),
      );
    });

    it('the success rate is of pay-ins, and says so', async () => {
      const overview = (await getPage(gw, shop, '/dashboard')).body;
      // Three pay-ins succeeded, one failed; the two failed payouts are not counted in it.
      assert.match(overview, /<p>Pay-in success rate, 30 days<\/p><strong>75\.0%<\/strong>/);
      assert.match(overview, /<p>Payout success rate, 30 days<\/p><strong>0\.0%<\/strong>/);
      assert.doesNotMatch(
        visibleText(overview),
        /(^|[^-])\bSuccess rate\b/,
        'no success rate of nothing named',
      );
    });

    it('the header names the merchant by its name', async () => {
      const body = (await getPage(gw, shop, '/dashboard/transactions')).body;
      const header = /<header>[\s\S]*<\/header>/.exec(body)![0];
      assert.match(header, /asha-[a-z]+@stores\.example · Asha Stores Bengaluru/);
      const id = /<dt>Merchant ID<\/dt><dd class="mono">([^<]+)</.exec(
        (await getPage(gw, shop, '/dashboard/developers')).body,
      )![1]!;
      assert.ok(!header.includes(id), 'not its id');
    });

    it('a transaction shows the customer details it was created with', async () => {
      const customer = (path: string) =>
        getPage(gw, shop, path).then((r) => /<dt>Customer[^<]*<\/dt><dd>([^<]*)<\/dd>/.exec(r.body)?.[1]);
      assert.equal(
        await customer(`/dashboard/transactions/${ids.paid}`),
        'Asha Rao · +919812345678 · asha@example.com',
      );
      assert.equal(await customer(`/dashboard/transactions/${ids.plain}`), 'No details given');
      assert.equal(await customer(`/dashboard/transactions/${ids.payout}`), 'Ravi Kumar · ravi@example.com');
      // A P2P pay-in also shows where the customer is sent back to.
      const p2p = await gw.post(
        '/payments/p2p/payin',
        {
          money: { amount: 5 },
          merchant_order_no: 'rd-p2p',
          redirect_url: 'https://shop.example/thanks',
          user_details: { user_name: 'Meera' },
        },
        { key: keyOf },
      );
      assert.equal(p2p.status, 200, p2p.text);
      const p2pPage = (await getPage(gw, shop, `/dashboard/transactions/${p2p.body.payment_id}`)).body;
      assert.equal(await customer(`/dashboard/transactions/${p2p.body.payment_id}`), 'Meera');
      assert.match(
        p2pPage,
        /<dt>Redirect URL<\/dt><dd><span class="mono">https:\/\/shop\.example\/thanks<\/span>/,
      );
      const refund = (await getPage(gw, shop, `/dashboard/transactions/${ids.refund}`)).body;
      assert.match(
        refund,
        /<dt>Customer \(of the pay-in\)<\/dt><dd>Asha Rao · \+919812345678 · asha@example\.com<\/dd>/,
      );
    });
  });
}
