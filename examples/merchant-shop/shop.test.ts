/**
 * End to end: the example shop against a real `paygate serve` process, on SQLite and on
 * PostgreSQL. A customer orders, is sent to the hosted payment page, the sandbox settles the
 * pay-in, and the shop shows the order paid because a verified callback said so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paygate } from '../../client/src/index.ts';
import { createDatabase, DATABASES, type TestDatabase } from '../../test/support/databases.ts';
import { skipFor } from '../../test/support/harness.ts';
import { cli, freePort, spawnServer, type ServerProcess } from '../../test/support/process.ts';
import { createShop, type Order, type Shop } from './shop.ts';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Decided before any suite starts: the CLI below runs synchronously and would stall a later check.
const skips = new Map(await Promise.all(DATABASES.map(async (kind) => [kind, await skipFor(kind)] as const)));

for (const kind of DATABASES) {
  describe(`example shop against a paygate process on ${kind}`, { skip: skips.get(kind) }, () => {
    let db: TestDatabase;
    let gateway: ServerProcess;
    let shop: Shop;
    let shopUrl = '';
    let merchant: { api_key: string; webhook_secret: string };
    const log: string[] = [];

    before(async () => {
      db = await createDatabase(kind);
      const shopPort = await freePort();
      let port = await freePort();
      while (port === shopPort) port = await freePort();
      shopUrl = `http://127.0.0.1:${shopPort}`;
      // The gateway boots while the CLI creates the merchant (both migrate; migrations tolerate that).
      const serving = spawnServer({
        DATABASE_URL: db.url,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ALLOW_PRIVATE_CALLBACK_URLS: 'true',
        CALLBACK_RETRY_INTERVAL_MS: '500',
        CALLBACK_TIMEOUT_MS: '3000',
      });
      const created = cli(
        [
          'merchant',
          'create',
          '--name',
          'Chai Shop',
          '--callback-url',
          `${shopUrl}/paygate/callback`,
          '--json',
        ],
        // An http callback URL on loopback is allowed only where private callback URLs are.
        { DATABASE_URL: db.url, ALLOW_PRIVATE_CALLBACK_URLS: 'true' },
      );
      gateway = await serving;
      assert.equal(created.status, 0, created.stderr);
      merchant = created.json;
      const paygate = new Paygate({ apiKey: merchant.api_key, baseUrl: gateway.baseUrl, timeoutMs: 10_000 });
      shop = createShop({ paygate, webhookSecret: merchant.webhook_secret, log: (line) => log.push(line) });
      await shop.listen(shopPort);
    });

    after(async () => {
      await shop?.close();
      await gateway?.stop();
      await db?.drop();
    });

    const orderJson = async (id: string) =>
      (await (await fetch(`${shopUrl}/orders/${id}.json`)).json()) as Order;

    it('sends the customer to the payment page and marks the order paid from a verified callback', async () => {
      // The customer presses "Pay" and is redirected to Paygate's hosted page.
      const ordered = await fetch(`${shopUrl}/orders`, { method: 'POST', redirect: 'manual' });
      assert.equal(ordered.status, 303);
      const paymentUrl = ordered.headers.get('location')!;
      const [order] = [...shop.orders.values()];
      assert.ok(order);
      assert.equal(paymentUrl, `${gateway.baseUrl}/pay/${order.payment_id}`);
      const hosted = await fetch(paymentUrl);
      assert.equal(hosted.status, 200);
      assert.match(await hosted.text(), new RegExp(order.id));
      assert.equal((await orderJson(order.id)).status, 'awaiting_payment');

      // A forged callback for this order is refused and changes nothing.
      const forged = JSON.stringify({
        payment_id: order.payment_id,
        merchant_order_no: order.id,
        amount: 499.0,
        currency: 'INR',
        status: 'SUCCESS',
        utr: '111111111111',
      });
      const refused = await fetch(`${shopUrl}/paygate/callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-verification-token': '0'.repeat(64) },
        body: forged,
      });
      assert.equal(refused.status, 401);
      assert.equal((await orderJson(order.id)).status, 'awaiting_payment');

      // The sandbox settles the pay-in; Paygate calls the shop back.
      const settled = await fetch(`${gateway.baseUrl}/sandbox/payin/complete`, {
        method: 'POST',
        headers: { authorization: `Bearer ${merchant.api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ payment_id: order.payment_id, status: 'SUCCESS' }),
      });
      assert.equal(settled.status, 200, await settled.clone().text());
      const { utr } = (await settled.json()) as { utr: string };

      const paid = await waitFor(
        `order ${order.id} to be paid (gateway output:\n${gateway.output()}\nshop log:\n${log.join('\n')})`,
        async () => {
          const o = await orderJson(order.id);
          return o.status === 'awaiting_payment' ? undefined : o;
        },
      );
      assert.equal(paid.status, 'paid');
      assert.equal(paid.settled_by, 'verified callback');
      assert.equal(paid.utr, utr);
      assert.equal(shop.rejectedCallbacks, 1, 'only the forged callback was refused');

      const shown = await (await fetch(`${shopUrl}/orders/${order.id}`)).text();
      assert.match(shown, /data-status="paid"/);
      assert.match(shown, /Paid/);
    });
  });
}
