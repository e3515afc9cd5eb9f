/**
 * A merchant's user reads, and only reads, the exceptions and reconciliation differences that name
 * its merchant or its transactions (CONTRACT §11), over HTTP on both databases: another merchant's,
 * or one naming nobody, is 404 and not listed; every UPI id on them is masked as §17 shows one
 * (`al***@okaxis`); no action is offered, and a complete, valid resolve form posted by the merchant's
 * user is 404 and moves nothing, while the operator's same form resolves it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordException } from '../../src/exceptions/exceptions.repository.ts';
import { finishRun, openDifference, startRun } from '../../src/reconcile/reconcile.repository.ts';
import { DATABASES } from '../support/databases.ts';
import { getPage, postForm, signedIn, type ConsoleBrowser } from '../support/console.ts';
import { type Gateway, skipFor, startGateway, testAccounts } from '../support/harness.ts';

const PASSWORD = 'correct horse battery';
const PAYER = 'ashwini.rao@okaxis';

/** The exception ids linked from the exceptions list. */
function listedExceptions(body: string): number[] {
  return [...body.matchAll(/<a href="\/dashboard\/exceptions\/(\d+)">(?:View|Resolve) #\d+<\/a>/g)]
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

for (const kind of DATABASES) {
  describe(
    `a merchant's user reads its exceptions and differences (${kind})`,
    { skip: await skipFor(kind) },
    () => {
      let gw: Gateway;
      let A = '';
      let B = '';
      const exc = {} as Record<'onPayin' | 'onMerchant' | 'ofB' | 'nobody' | 'diffA' | 'diffB', number>;
      let payinA = '';
      let payinB = '';
      let runA = 0;
      let runB = 0;
      let shop: ConsoleBrowser;
      let ops: ConsoleBrowser;

      async function paid(key: string, order: string) {
        const made = await gw.post(
          '/payments/onsite/payin',
          { money: { amount: 80 }, merchant_order_no: order },
          { key },
        );
        await gw.post(
          '/sandbox/payin/complete',
          { payment_id: made.body.payment_id, status: 'SUCCESS' },
          { key },
        );
        return made.body.payment_id as string;
      }

      async function resolvedAt(id: number) {
        const r = await gw.database.db
          .selectFrom('channel_exceptions')
          .select(['resolved_at', 'resolution'])
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        return r.resolved_at === null ? null : Number(r.resolved_at);
      }

      before(async () => {
        gw = await startGateway(kind);
        A = gw.merchant.merchant_id;
        const other = await gw.newMerchant();
        B = other.merchant_id;
        payinA = await paid(gw.merchant.api_key, 'exc-a');
        payinB = await paid(other.api_key, 'exc-b');
        const db = gw.database.db;
        const at = Date.now();
        const record = async (e: Parameters<typeof recordException>[1]) =>
          (await recordException(db, e, at))!;
        exc.onPayin = await record({
          kind: 'amount_mismatch',
          provider: 'setu',
          paymentId: payinA,
          merchantId: A,
          reference: 'setu-pay-a',
          amount: 7_900,
          detail: `payment.success from ${PAYER} of 79.00 for a pay-in of 80.00`,
        });
        exc.onMerchant = await record({
          kind: 'unknown_reference',
          provider: 'setu',
          paymentId: null,
          merchantId: A,
          reference: 'setu-pay-unknown',
          amount: 5_000,
          detail: `payment.success from ${PAYER}, which names no pay-in here`,
        });
        exc.ofB = await record({
          kind: 'amount_mismatch',
          provider: 'setu',
          paymentId: payinB,
          merchantId: B,
          reference: 'setu-pay-b',
          amount: 100,
          detail: 'a payment of B',
        });
        exc.nobody = await record({
          kind: 'low_balance',
          provider: 'cashfree',
          paymentId: null,
          reference: 'lb-1',
          amount: null,
          detail: 'Cashfree reports a low balance',
        });
        runA = await startRun(db, { date: '2026-11-24', channel: 'setu', trigger: 'cli' }, at);
        await openDifference(
          db,
          runA,
          {
            channel: 'setu',
            reference: 'setu-pay-a2',
            field: 'utr',
            providerValue: `633201${PAYER}`,
            paygateValue: '633201000000',
            paymentId: payinA,
            amount: 8_000,
          },
          at,
        );
        await finishRun(db, runA, { checked: 1, matched: 0, mismatched: 1, unreadable: 0, opened: 1 }, at);
        runB = await startRun(db, { date: '2026-11-25', channel: 'setu', trigger: 'cli' }, at);
        await openDifference(
          db,
          runB,
          {
            channel: 'setu',
            reference: 'setu-pay-b2',
            field: 'status',
            providerValue: 'success',
            paygateValue: 'FAILED',
            paymentId: payinB,
            amount: 8_000,
          },
          at,
        );
        await finishRun(db, runB, { checked: 1, matched: 0, mismatched: 1, unreadable: 0, opened: 1 }, at);
        const ids = await db
          .selectFrom('reconcile_mismatches')
          .select(['exception_id', 'payment_id'])
          .execute();
        exc.diffA = Number(ids.find((r) => r.payment_id === payinA)!.exception_id);
        exc.diffB = Number(ids.find((r) => r.payment_id === payinB)!.exception_id);

        const accounts = testAccounts(db);
        await accounts.createUser({
          email: `a-${kind}@shop.example`,
          role: 'merchant',
          merchantId: A,
          password: PASSWORD,
        });
        await accounts.createUser({
          email: `ops-${kind}@paygate.example`,
          role: 'operator',
          merchantId: null,
          password: PASSWORD,
        });
        shop = await signedIn(gw, `a-${kind}@shop.example`, PASSWORD);
        ops = await signedIn(gw, `ops-${kind}@paygate.example`, PASSWORD);
      });
      after(() => gw.close());

      it('lists those naming the merchant or its transactions, masks UPI ids, and offers no action', async () => {
        const list = await getPage(gw, shop, '/dashboard/exceptions');
        assert.equal(list.statusCode, 200);
        assert.deepEqual(
          listedExceptions(list.body),
          [exc.onPayin, exc.onMerchant, exc.diffA].sort((a, b) => a - b),
        );
        assert.ok(!list.body.includes(PAYER), 'the payer’s UPI id is not shown whole');
        assert.ok(list.body.includes('as***@okaxis'), 'it is masked as §17 shows one');
        assert.doesNotMatch(list.body, />Resolve #/);
        assert.match(list.body, /<a href="\/dashboard\/exceptions"[^>]*>Exceptions<\/a>/, 'in the menu');

        for (const id of [exc.onPayin, exc.onMerchant, exc.diffA]) {
          const page = await getPage(gw, shop, `/dashboard/exceptions/${id}`);
          assert.equal(page.statusCode, 200, `exception ${id}`);
          assert.ok(!page.body.includes(PAYER));
          assert.doesNotMatch(page.body, /\/resolve"/, 'no resolve form');
          assert.doesNotMatch(page.body, /<button class="btn/, 'no action button');
        }
        // Another merchant's, one naming nobody, an unknown one and a malformed id: 404 alike.
        for (const path of [exc.ofB, exc.nobody, exc.diffB, 999_999, 'x1'])
          assert.equal(
            (await getPage(gw, shop, `/dashboard/exceptions/${path}`)).statusCode,
            404,
            String(path),
          );

        // The operator sees them all, with their actions.
        const all = await getPage(gw, ops, '/dashboard/exceptions');
        assert.deepEqual(
          listedExceptions(all.body),
          Object.values(exc).sort((a, b) => a - b),
        );
        assert.ok(all.body.includes(PAYER), 'operators read the UPI id whole');
        assert.match((await getPage(gw, ops, `/dashboard/exceptions/${exc.onPayin}`)).body, /\/resolve"/);
      });

      it('a resolve form posted by the merchant’s user is 404 and changes nothing; the operator’s resolves', async () => {
        const form = { action: 'dismiss', note: 'checked with the customer' };
        for (const id of [exc.onPayin, exc.ofB]) {
          const res = await postForm(gw, shop, `/dashboard/exceptions/${id}/resolve`, form);
          assert.equal(res.statusCode, 404, `exception ${id}`);
          assert.equal(await resolvedAt(id), null, 'still open');
        }
        const done = await postForm(gw, ops, `/dashboard/exceptions/${exc.onPayin}/resolve`, form);
        assert.equal(done.statusCode, 303, done.body.slice(0, 300));
        assert.notEqual(await resolvedAt(exc.onPayin), null);
        // Resolved, it reads as such to the merchant, without naming the operator.
        const page = await getPage(gw, shop, `/dashboard/exceptions/${exc.onPayin}`);
        assert.match(page.body, /Resolved: dismiss/);
        assert.ok(!page.body.includes(`ops-${kind}@paygate.example`), 'the operator is not named');
        assert.match(page.body, /Paygate operator/);
      });

      it('reconciliation: its own differences, masked, and no run that has none of them', async () => {
        const list = await getPage(gw, shop, '/dashboard/reconcile');
        assert.equal(list.statusCode, 200);
        assert.ok(list.body.includes(payinA), 'its difference');
        assert.ok(!list.body.includes(payinB), 'not B’s');
        assert.ok(!list.body.includes(PAYER) && list.body.includes('63***@okaxis'), 'masked');
        assert.match(list.body, /<time datetime="2026-11-24">24 Nov<\/time>/);
        assert.doesNotMatch(list.body, /#Checked|Checked</, 'no run’s counts of every merchant');
        const run = await getPage(gw, shop, `/dashboard/reconcile/${runA}`);
        assert.equal(run.statusCode, 200);
        assert.ok(run.body.includes(payinA));
        assert.match(run.body, /<h1>Reconciliation 24 Nov<\/h1>/);
        assert.equal((await getPage(gw, shop, `/dashboard/reconcile/${runB}`)).statusCode, 404, 'only B’s');
        assert.equal((await getPage(gw, shop, '/dashboard/reconcile/999999')).statusCode, 404);
        // The operator sees both runs.
        const runs = await getPage(gw, ops, '/dashboard/reconcile');
        for (const id of [runA, runB])
          assert.match(runs.body, new RegExp(`href="/dashboard/reconcile/${id}"`));
        assert.ok((await getPage(gw, ops, `/dashboard/reconcile/${runB}`)).body.includes(payinB));
      });
    },
  );
}
