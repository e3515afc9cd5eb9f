/**
 * A callback that failed every attempt (CONTRACT §11), over HTTP on both databases: the overview
 * counts the transactions whose callback failed every attempt, and the list's "Delivery failed"
 * filter finds exactly them, for the merchant's user (its own only) and the operator (every merchant,
 * or one). A resend that is delivered takes the transaction off both; one still on its way too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { getPage, postForm, signedIn } from '../support/console.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';
import { until } from '../support/live.ts';

const PASSWORD = 'correct horse battery';

/** The payment_ids linked from the list's rows. */
function listed(body: string): string[] {
  return [...body.matchAll(/<a class="mono" href="\/dashboard\/transactions\/([A-Za-z0-9]+)">/g)]
    .map((m) => m[1]!)
    .sort();
}

function failedCount(body: string): number {
  const m =
    /id="failed-deliveries"><a href="[^"]*">(\d+) transactions? whose callback failed every attempt/.exec(
      body,
    );
  assert.ok(m, 'the overview counts the failed callbacks');
  return Number(m[1]);
}

for (const kind of DATABASES) {
  describe(
    `callbacks that failed every attempt in the console (${kind})`,
    { skip: await skipFor(kind) },
    () => {
      let gw: Gateway;
      let receiver: Receiver;
      /** The receiver refuses the paths in here with a 500, and takes the rest. */
      const refusing = new Set<string>(['/down']);
      const ids: Record<'failedA1' | 'failedA2' | 'deliveredA' | 'silentA' | 'failedB', string> = {} as never;
      let B = '';
      let keyB = '';

      async function payin(key: string, order: string, callbackPath: string | null) {
        const made = await gw.post(
          '/payments/onsite/payin',
          {
            money: { amount: 100 },
            merchant_order_no: order,
            ...(callbackPath ? { callback_url: receiver.url(callbackPath) } : {}),
          },
          { key },
        );
        assert.equal(made.status, 200, made.text);
        const id = made.body.payment_id as string;
        const done = await gw.post('/sandbox/payin/complete', { payment_id: id, status: 'SUCCESS' }, { key });
        assert.equal(done.status, 200, done.text);
        return id;
      }

      async function settledDeliveries(paymentId: string, status: 'failed' | 'delivered') {
        await until(async () => {
          const list = await gw.paygate.services.callbacks.list({ paymentId });
          return list.length > 0 && list.every((d) => d.status === status);
        }, `the callback of ${paymentId} ${status}`);
      }

      before(async () => {
        receiver = await startReceiver({ answer: (req) => (refusing.has(req.path) ? 500 : 200) });
        gw = await startGateway(kind, {
          worker: true,
          env: {
            ALLOW_PRIVATE_CALLBACK_URLS: 'true',
            CALLBACK_MAX_RETRIES: '1',
            CALLBACK_RETRY_INTERVAL_MS: '50',
          },
        });
        const other = await gw.newMerchant();
        B = other.merchant_id;
        keyB = other.api_key;
        const key = gw.merchant.api_key;
        ids.failedA1 = await payin(key, 'fd-1', '/down');
        ids.failedA2 = await payin(key, 'fd-2', '/down');
        ids.deliveredA = await payin(key, 'fd-3', '/up');
        ids.silentA = await payin(key, 'fd-4', null);
        ids.failedB = await payin(keyB, 'fd-b', '/down');
        for (const id of [ids.failedA1, ids.failedA2, ids.failedB]) await settledDeliveries(id, 'failed');
        await settledDeliveries(ids.deliveredA, 'delivered');
        const accounts = testAccounts(gw.database.db);
        await accounts.createUser({
          email: 'shop@a.example',
          role: 'merchant',
          merchantId: gw.merchant.merchant_id,
          password: PASSWORD,
        });
        await accounts.createUser({
          email: 'ops@paygate.example',
          role: 'operator',
          merchantId: null,
          password: PASSWORD,
        });
      });
      after(async () => {
        await gw?.close();
        await receiver?.close();
      });

      it('are counted on the overview and found by the list filter, one merchant’s apart from another’s', async () => {
        const shop = await signedIn(gw, 'shop@a.example', PASSWORD);
        const overview = await getPage(gw, shop, '/dashboard');
        assert.equal(overview.statusCode, 200);
        assert.equal(failedCount(overview.body), 2, "A's two, not B's");
        assert.match(overview.body, /href="\/dashboard\/transactions\?delivery=failed"/);

        const list = await getPage(gw, shop, '/dashboard/transactions?delivery=failed');
        assert.equal(list.statusCode, 200);
        assert.deepEqual(listed(list.body), [ids.failedA1, ids.failedA2].sort());
        assert.match(
          list.body,
          /<option value="failed" selected>Delivery failed<\/option>/,
          'the form keeps it',
        );
        // Filters combine: the failed ones among A's pay-ins of another order number are none.
        assert.deepEqual(
          listed((await getPage(gw, shop, '/dashboard/transactions?delivery=failed&q=fd-3')).body),
          [],
        );
        assert.deepEqual(
          listed((await getPage(gw, shop, '/dashboard/transactions')).body).length,
          4,
          'all of A’s',
        );
        const csv = await getPage(gw, shop, '/dashboard/transactions.csv?delivery=failed');
        assert.deepEqual(
          csv.body
            .trim()
            .split('\r\n')
            .slice(1)
            .map((l) => l.split(',')[0])
            .sort(),
          [ids.failedA1, ids.failedA2].sort(),
          'the export of the filtered set',
        );
        assert.equal((await getPage(gw, shop, '/dashboard/transactions?delivery=maybe')).statusCode, 400);

        const ops = await signedIn(gw, 'ops@paygate.example', PASSWORD);
        assert.equal(failedCount((await getPage(gw, ops, '/dashboard')).body), 3, 'every merchant’s');
        assert.equal(failedCount((await getPage(gw, ops, `/dashboard?merchant=${B}`)).body), 1);
        assert.match(
          (await getPage(gw, ops, `/dashboard?merchant=${B}`)).body,
          new RegExp(`href="/dashboard/transactions\\?delivery=failed&amp;merchant=${B}"`),
        );
        assert.deepEqual(
          listed((await getPage(gw, ops, '/dashboard/transactions?delivery=failed')).body),
          [ids.failedA1, ids.failedA2, ids.failedB].sort(),
        );
        assert.deepEqual(
          listed((await getPage(gw, ops, `/dashboard/transactions?delivery=failed&merchant=${B}`)).body),
          [ids.failedB],
        );
      });

      it('a resend that is delivered takes the transaction off the count and the filter; one that fails again keeps it', async () => {
        const shop = await signedIn(gw, 'shop@a.example', PASSWORD);
        // The receiver takes it now: the resend is delivered.
        refusing.delete('/down');
        const resent = await postForm(gw, shop, `/dashboard/transactions/${ids.failedA1}/resend`, {});
        assert.equal(resent.statusCode, 303, resent.body.slice(0, 300));
        await until(async () => {
          const list = await gw.paygate.services.callbacks.list({ paymentId: ids.failedA1 });
          return list.some((d) => d.status === 'delivered');
        }, 'the resend delivered');
        refusing.add('/down');
        const again = await postForm(gw, shop, `/dashboard/transactions/${ids.failedA2}/resend`, {});
        assert.equal(again.statusCode, 303);
        await until(async () => {
          const list = await gw.paygate.services.callbacks.list({ paymentId: ids.failedA2 });
          return list.length === 2 && list.every((d) => d.status === 'failed');
        }, 'the second resend failed too');
        assert.equal(failedCount((await getPage(gw, shop, '/dashboard')).body), 1);
        assert.deepEqual(listed((await getPage(gw, shop, '/dashboard/transactions?delivery=failed')).body), [
          ids.failedA2,
        ]);
      });
    },
  );
}
