/** The hosted payment pages as a customer's browser and the merchant see them. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { PAGE_JS_HASH } from '../../src/pages/pages.script.ts';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Gateway } from '../support/harness.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
let orderSeq = 0;
const orderNo = () => `pg-${++orderSeq}`;

async function get(gw: Gateway, url: string) {
  const res = await gw.app.inject({ method: 'GET', url });
  return { status: res.statusCode, headers: res.headers, html: res.body };
}

async function post(gw: Gateway, url: string, payload: string, headers: Record<string, string> = FORM) {
  const res = await gw.app.inject({ method: 'POST', url, payload, headers });
  return { status: res.statusCode, headers: res.headers, html: res.body };
}

async function payin(gw: Gateway, flow: 'onsite' | 'offsite' | 'p2p', extra: Record<string, unknown> = {}) {
  const res = await gw.post(`/payments/${flow}/payin`, {
    money: { amount: 123456.5, currency: 'INR' },
    merchant_order_no: orderNo(),
    ...extra,
  });
  assert.equal(res.status, 200, res.text);
  const url: string = flow === 'offsite' ? res.body.data.cashier_url : res.body.payment_url;
  return { id: res.body.payment_id as string, path: new URL(url).pathname, body: res.body };
}

async function status(gw: Gateway, id: string) {
  const res = await gw.post('/payments/payin_status', { payment_id: id });
  assert.equal(res.status, 200, res.text);
  return res.body as { status: string; utr: string; money: { amount: number } };
}

async function available(gw: Gateway) {
  return (await gw.post('/wallet/balance', {})).body.available as number;
}

function assertSecurityHeaders(headers: Record<string, unknown>, html: string) {
  assert.match(String(headers['content-type']), /^text\/html; charset=utf-8/);
  const csp = String(headers['content-security-policy']);
  const directives = Object.fromEntries(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...v]) => [name, v]),
  );
  assert.deepEqual(directives['default-src'], ["'none'"]);
  assert.deepEqual(directives['frame-ancestors'], ["'none'"]);
  assert.deepEqual(directives['base-uri'], ["'none'"]);
  assert.deepEqual(directives['img-src'], ["'self'", 'data:']);
  assert.equal(directives['form-action']?.[0], "'self'");
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  // At most one script, the page's own, allowed by exactly its hash; it may only ask this origin.
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  assert.ok(scripts.length <= 1, 'one script at most');
  assert.deepEqual(directives['script-src'], [PAGE_JS_HASH]);
  for (const js of scripts)
    assert.equal(`'sha256-${createHash('sha256').update(js).digest('base64')}'`, PAGE_JS_HASH);
  assert.deepEqual(directives['connect-src'], ["'self'"]);
  // The inline stylesheet is allowed by exactly its hash.
  const css = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1];
  assert.ok(css, 'the page has its stylesheet');
  assert.deepEqual(directives['style-src'], [
    `'sha256-${createHash('sha256').update(css).digest('base64')}'`,
  ]);
  assert.doesNotMatch(
    html.replace(/<script>[\s\S]*?<\/script>/g, ''),
    /<script|\sstyle=|\son[a-z]+=/i,
    'no other script, no inline style attribute or handler',
  );
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'same-origin');
  assert.equal(headers['cache-control'], 'no-store');
}

for (const kind of DATABASES) {
  describe(`hosted payment pages on ${kind}`, { skip: await skipFor(kind) }, () => {
    // The pages compute time left from the gateway's clock; this one moves only when told to.
    let clock = Date.UTC(2026, 0, 15, 6, 30);
    const gw = useGateway(kind, { now: () => clock, env: { ALLOW_PRIVATE_CALLBACK_URLS: 'true' } });

    it('shows the payee UPI id, the app buttons before the QR, and on results the test badge, the words, the time in IST and "notified" only with a callback URL', async () => {
      const m = await gw().newMerchant();
      const vpa = (
        await gw()
          .database.db.selectFrom('merchants')
          .select('vpa')
          .where('id', '=', m.merchant_id)
          .executeTakeFirstOrThrow()
      ).vpa;
      const made = await gw().post(
        '/payments/onsite/payin',
        { money: { amount: 10 }, merchant_order_no: orderNo() },
        { key: m.api_key },
      );
      const path = `/pay/${made.body.payment_id}`;
      const pending = (await get(gw(), path)).html;
      // The UPI id whole, with a line-break opportunity after its '@' and each '.' (none inside a word).
      const shown =
        /<dt>Pay to UPI ID<\/dt><dd><span class="mono vpa" id="vpa">([^<]*(?:<wbr>[^<]*)*)<\/span>/.exec(
          pending,
        );
      assert.ok(shown, 'the payee UPI id');
      assert.equal(shown[1]!.replaceAll('<wbr>', ''), vpa);
      assert.equal(shown[1], vpa.replace(/([@.])/g, '$1<wbr>'));
      assert.ok(
        pending.indexOf('id="apps-h"') < pending.indexOf('id="scan-h"'),
        'app buttons come first on a phone',
      );
      await gw().post(
        '/sandbox/payin/complete',
        { payment_id: made.body.payment_id, status: 'SUCCESS' },
        { key: m.api_key },
      );
      const paid = (await get(gw(), path)).html;
      assert.match(paid, /<span class="test">Test mode<\/span>/);
      assert.match(paid, /<dd data-status="SUCCESS">Paid<\/dd>/);
      assert.match(paid, /<dt>Paid on<\/dt><dd>\d{1,2} \w{3} 20\d\d, \d{1,2}:\d\d [ap]m IST<\/dd>/);
      assert.doesNotMatch(paid, /merchant has been notified/, 'no callback URL: nobody is notified');
      const withCallback = await gw().newMerchant({ callbackUrl: 'https://shop.example/cb' });
      const other = await gw().post(
        '/payments/onsite/payin',
        { money: { amount: 10 }, merchant_order_no: orderNo() },
        { key: withCallback.api_key },
      );
      await gw().post(
        '/sandbox/payin/complete',
        { payment_id: other.body.payment_id, status: 'SUCCESS' },
        { key: withCallback.api_key },
      );
      assert.match((await get(gw(), `/pay/${other.body.payment_id}`)).html, /The merchant has been notified/);
    });

    it('shows a pay-in that the worker failed at its expiry as expired, not as a failed payment', async () => {
      const p = await payin(gw(), 'onsite');
      const at = clock;
      clock += (gw().config.payinExpiryS + 1) * 1000;
      try {
        await gw().paygate.worker.drain();
        assert.equal((await gw().post('/payments/payin_status', { payment_id: p.id })).body.status, 'FAILED');
        const html = (await get(gw(), p.path)).html;
        assert.match(html, /<h1[^>]*>Payment request expired<\/h1>/);
        assert.doesNotMatch(html, /Payment failed|did not go through/);
      } finally {
        clock = at;
      }
    });

    it("answers a page's status request: this payment only, no key, its status and seconds left", async () => {
      const p = await payin(gw(), 'onsite');
      const res = await gw().app.inject({ url: `${p.path}/status` });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(JSON.parse(res.body), { status: 'PENDING', seconds_left: gw().config.payinExpiryS });
      assert.equal(
        (await gw().post('/sandbox/payin/complete', { payment_id: p.id, status: 'SUCCESS' })).status,
        200,
      );
      assert.deepEqual(JSON.parse((await gw().app.inject({ url: `${p.path}/status` })).body), {
        status: 'SUCCESS',
        seconds_left: 0,
      });
      // Another flow's page, an unknown id, a payout: not found.
      assert.equal((await gw().app.inject({ url: `/p2p/${p.id}/status` })).statusCode, 404);
      assert.equal((await gw().app.inject({ url: `/pay/${'Z'.repeat(32)}/status` })).statusCode, 404);
    });

    it('shows the onsite page without an API key: merchant, amount in Indian format, order, QR, app links, time left, sandbox buttons', async () => {
      const p = await payin(gw(), 'onsite');
      assert.equal(p.path, `/pay/${p.id}`);
      const res = await get(gw(), p.path);
      assert.equal(res.status, 200);
      assertSecurityHeaders(res.headers, res.html);
      const { html } = res;
      assert.match(html, /<html lang="en">/);
      assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
      assert.match(html, /<h1[^>]*>Test Shop<\/h1>/);
      assert.match(html, /₹1,23,456\.50/);
      assert.ok(
        html.includes(`<dt>Order number</dt><dd class="mono">pg-${orderSeq}</dd>`),
        'order number shown',
      );
      assert.match(
        html,
        /<svg class="qr" role="img" aria-labelledby="qr-title"[^>]*><title id="qr-title">UPI QR code to pay ₹1,23,456\.50 to Test Shop<\/title><path/,
      );
      const tr = `tr=${p.id}`;
      for (const scheme of ['upi://pay?', 'tez://upi/pay?', 'phonepe://pay?', 'paytmmp://pay?']) {
        assert.ok(html.includes(`href="${scheme}pa=`), `${scheme} link`);
      }
      assert.ok(
        html.includes(`am=123456.50&amp;cu=INR&amp;${tr}&amp;tn=pg-${orderSeq}"`),
        'the links carry the amount, payment id and order',
      );
      assert.match(html, /<time class="left" datetime="PT15M0S" data-seconds="900">15 min 00 s<\/time>/);
      assert.match(html, new RegExp(`<form class="sim" method="post" action="/pay/${p.id}/simulate">`));
      assert.match(
        html,
        /<button class="btn ok" type="submit" name="status" value="SUCCESS">Simulate success<\/button>/,
      );
      assert.match(
        html,
        /<button class="btn fail" type="submit" name="status" value="FAILED">Simulate failure<\/button>/,
      );
    });

    it('shows the P2P page and the offsite cashier page the same way', async () => {
      const p2p = await payin(gw(), 'p2p');
      const off = await payin(gw(), 'offsite');
      assert.equal(off.path, `/cashier/${off.id}`);
      for (const p of [p2p, off]) {
        const res = await get(gw(), p.path);
        assert.equal(res.status, 200);
        assertSecurityHeaders(res.headers, res.html);
        assert.match(res.html, /₹1,23,456\.50/);
        assert.match(res.html, /<svg class="qr"/);
        assert.ok(res.html.includes(`action="${p.path}/simulate"`));
      }
      // The cashier shows the same intent the API handed out as cashier_string.
      const cashier = await get(gw(), off.path);
      assert.ok(cashier.html.includes(`href="${off.body.data.cashier_string.replaceAll('&', '&amp;')}"`));
    });

    it('counts time left down with the clock and shows an expired request without buttons', async () => {
      const p = await payin(gw(), 'onsite');
      clock += 14 * 60_000 + 5_000;
      assert.match((await get(gw(), p.path)).html, /datetime="PT0M55S" data-seconds="55">55 s</);
      clock += 55_000;
      const expired = await get(gw(), p.path);
      assert.equal(expired.status, 200);
      assert.match(expired.html, /Payment request expired/);
      assert.doesNotMatch(expired.html, /Simulate success|<svg/);
      // The customer can no longer pay it here; the worker fails it.
      assert.equal((await post(gw(), `${p.path}/simulate`, 'status=SUCCESS')).status, 303);
      assert.equal((await status(gw(), p.id)).status, 'PENDING');
    });

    it('escapes the merchant name and the order number', async () => {
      const m = await gw().paygate.services.merchants.create({ name: 'Chai & <Snacks> "Co"' });
      const res = await gw().post(
        '/payments/onsite/payin',
        { money: { amount: 10 }, merchant_order_no: '<b>o&1</b>' },
        { key: m.api_key },
      );
      const page = await get(gw(), `/pay/${res.body.payment_id}`);
      assert.match(page.html, /<h1[^>]*>Chai &amp; &lt;Snacks&gt; &quot;Co&quot;<\/h1>/);
      assert.ok(page.html.includes('&lt;b&gt;o&amp;1&lt;/b&gt;'));
      assert.doesNotMatch(page.html, /<b>|<Snacks>/);
    });

    it("answers a 404 page for an unknown id, a payout id and another flow's page", async () => {
      await gw().paygate.services.wallets.topUp(gw().merchant.merchant_id, 'INR', 100_000);
      const payout = await gw().post('/payments/payout', {
        money: { amount: 100 },
        merchant_order_no: orderNo(),
        receiver: { name: 'Asha', account_no: '123456789012', ifsc_code: 'HDFC0001234' },
      });
      assert.equal(payout.status, 200, payout.text);
      const onsite = await payin(gw(), 'onsite');
      const paths = [
        `/pay/${'A'.repeat(32)}`,
        '/pay/not-an-id',
        `/p2p/${'b'.repeat(32)}`,
        `/cashier/${'9'.repeat(32)}`,
        `/pay/${payout.body.payment_id}`,
        `/p2p/${payout.body.payment_id}`,
        `/p2p/${onsite.id}`,
        `/cashier/${onsite.id}`,
      ];
      for (const path of paths) {
        const res = await get(gw(), path);
        assert.equal(res.status, 404, path);
        assertSecurityHeaders(res.headers, res.html);
        assert.match(res.html, /<h1[^>]*>Payment not found<\/h1>/);
      }
      const sim = await post(gw(), `/pay/${payout.body.payment_id}/simulate`, 'status=SUCCESS');
      assert.equal(sim.status, 404);
    });

    it('"Simulate success" settles the pay-in: 303 to the page, status SUCCESS with a UTR, wallet credited, result shown', async () => {
      const before = await available(gw());
      const p = await payin(gw(), 'onsite');
      const res = await post(gw(), `${p.path}/simulate`, 'status=SUCCESS');
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, p.path);
      const s = await status(gw(), p.id);
      assert.equal(s.status, 'SUCCESS');
      assert.match(s.utr, /^\d{12}$/);
      assert.equal(await available(gw()), before + 123456.5);
      const page = await get(gw(), p.path);
      assert.equal(page.status, 200);
      assert.match(page.html, /<h1[^>]*>Payment successful<\/h1>/);
      assert.ok(page.html.includes(`<dt>UTR</dt><dd class="mono">${s.utr}</dd>`));
      assert.match(page.html, /₹1,23,456\.50/);
      assert.doesNotMatch(page.html, /Simulate success|<svg|upi:\/\/pay/);
    });

    it('"Simulate failure" fails the pay-in and leaves the wallet alone', async () => {
      const before = await available(gw());
      const p = await payin(gw(), 'offsite');
      const res = await post(gw(), `${p.path}/simulate`, 'status=FAILED');
      assert.equal(res.status, 303);
      assert.equal(res.headers.location, p.path);
      const s = await status(gw(), p.id);
      assert.equal(s.status, 'FAILED');
      assert.equal(s.utr, '');
      assert.equal(await available(gw()), before);
      const page = await get(gw(), p.path);
      assert.match(page.html, /<h1[^>]*>Payment failed<\/h1>/);
      assert.doesNotMatch(page.html, /Simulate failure|<dt>UTR/);
    });

    it('posting again on a final pay-in changes nothing and goes back to the page', async () => {
      const p = await payin(gw(), 'onsite', { callback_url: 'http://127.0.0.1:9/cb' });
      assert.equal((await post(gw(), `${p.path}/simulate`, 'status=SUCCESS')).status, 303);
      const first = await status(gw(), p.id);
      const balance = await available(gw());
      for (const again of ['status=FAILED', 'status=SUCCESS']) {
        const res = await post(gw(), `${p.path}/simulate`, again);
        assert.equal(res.status, 303);
        assert.equal(res.headers.location, p.path);
      }
      assert.deepEqual(await status(gw(), p.id), first);
      assert.equal(await available(gw()), balance);
      const deliveries = await gw()
        .database.db.selectFrom('callback_deliveries')
        .select('id')
        .where('payment_id', '=', p.id)
        .execute();
      assert.equal(deliveries.length, 1, 'one final status, one callback');
    });

    it('P2P: after the final status the customer goes (303) to redirect_url with payment_id, merchant_order_no and status', async () => {
      const p = await payin(gw(), 'p2p', {
        redirect_url: 'https://shop.example/return?cart=7&note=a%20b#done',
      });
      const page = await get(gw(), p.path);
      assert.match(
        String(page.headers['content-security-policy']),
        /form-action 'self' https:\/\/shop\.example;/,
      );
      const res = await post(gw(), `${p.path}/simulate`, 'status=SUCCESS');
      assert.equal(res.status, 303);
      const order = `pg-${orderSeq}`;
      const expected = `https://shop.example/return?cart=7&note=a%20b&payment_id=${p.id}&merchant_order_no=${order}&status=SUCCESS#done`;
      assert.equal(res.headers.location, expected);
      const target = new URL(String(res.headers.location));
      assert.equal(target.searchParams.get('payment_id'), p.id);
      assert.equal(target.searchParams.get('merchant_order_no'), order);
      assert.equal(target.searchParams.get('status'), 'SUCCESS');
      assert.equal((await status(gw(), p.id)).status, 'SUCCESS');
      // Opening the provider page again, or posting again, sends the customer back to the merchant.
      const again = await get(gw(), p.path);
      assert.equal(again.status, 303);
      assert.equal(again.headers.location, expected);
      const repost = await post(gw(), `${p.path}/simulate`, 'status=FAILED');
      assert.equal(repost.headers.location, p.path);
      assert.equal((await status(gw(), p.id)).status, 'SUCCESS');
    });

    it('P2P: a redirect_url without a query gets one; a failure is reported as FAILED; an order number is encoded', async () => {
      const n = ++orderSeq;
      const order = `p2p #${n}&x`;
      const res = await gw().post('/payments/p2p/payin', {
        money: { amount: 5 },
        merchant_order_no: order,
        redirect_url: 'http://127.0.0.1:9/back',
      });
      assert.equal(res.status, 200, res.text);
      const path = `/p2p/${res.body.payment_id}`;
      const sim = await post(gw(), `${path}/simulate`, 'status=FAILED');
      assert.equal(
        sim.headers.location,
        `http://127.0.0.1:9/back?payment_id=${res.body.payment_id}&merchant_order_no=p2p%20%23${n}%26x&status=FAILED`,
      );
      assert.equal(new URL(String(sim.headers.location)).searchParams.get('merchant_order_no'), order);
    });

    it('P2P without a redirect_url shows the result on the provider page', async () => {
      const p = await payin(gw(), 'p2p');
      const page = await get(gw(), p.path);
      assert.match(String(page.headers['content-security-policy']), /form-action 'self';/);
      const res = await post(gw(), `${p.path}/simulate`, 'status=SUCCESS');
      assert.equal(res.headers.location, p.path);
      const result = await get(gw(), p.path);
      assert.equal(result.status, 200);
      assert.match(result.html, /Payment successful/);
    });

    it('rejects bad form input with an HTML error page and settles nothing', async () => {
      const p = await payin(gw(), 'onsite');
      const cases: [string, Record<string, string>, number][] = [
        ['status=MAYBE', FORM, 400],
        ['status=success', FORM, 400],
        ['', FORM, 400],
        ['other=1', FORM, 400],
        ['status=SUCCESS&status=FAILED', FORM, 400],
        ['status=%E0%A4', FORM, 400],
        [`status=SUCCESS&pad=${'x'.repeat(4096)}`, FORM, 413],
        ['{"status":"SUCCESS"}', { 'content-type': 'application/json' }, 415],
        ['status=SUCCESS', { 'content-type': 'text/plain' }, 415],
        ['status=SUCCESS', { ...FORM, 'sec-fetch-site': 'cross-site' }, 403],
      ];
      for (const [payload, headers, code] of cases) {
        const res = await post(gw(), `${p.path}/simulate`, payload, headers);
        assert.equal(res.status, code, `${payload} ${JSON.stringify(headers)}`);
        assert.match(String(res.headers['content-type']), /^text\/html/);
        assert.match(res.html, /<h1/);
      }
      assert.equal((await gw().app.inject({ method: 'POST', url: `${p.path}/simulate` })).statusCode, 400);
      assert.equal((await status(gw(), p.id)).status, 'PENDING');
    });

    it('shows no buttons for a pay-in on a live channel and refuses to simulate it', async () => {
      const p = await payin(gw(), 'onsite');
      // A live bank adapter is not built yet; mark the row as one to see the page treat it as real.
      await gw()
        .database.db.updateTable('transactions')
        .set({ channel: 'bank' })
        .where('payment_id', '=', p.id)
        .execute();
      const page = await get(gw(), p.path);
      assert.equal(page.status, 200);
      assert.match(page.html, /<svg class="qr"/);
      assert.doesNotMatch(page.html, /Simulate|<form/);
      const res = await post(gw(), `${p.path}/simulate`, 'status=SUCCESS');
      assert.equal(res.status, 403);
      assert.equal((await status(gw(), p.id)).status, 'PENDING');
    });
  });
}
