/**
 * Customers' disputes of live pay-ins (CONTRACT §10 "Disputes", §8 PAYMENT_DISPUTED), on both
 * databases, through the Setu adapter with its calls to the fake Setu checked by the spec proxy, and
 * Setu's dispute notifications signed by the fake in the shape of Setu's disputes page: a
 * `dispute.created` opens one `dispute` exception and the pay-in cannot be refunded (409) while it
 * is open; `dispute-lost` refunds the refundable part to the customer through Setu from the
 * merchant's balance, and what the balance lacks is owed on the exception until a debit; `dispute-won`
 * (by the CLI) closes it and refunds are taken again; Setu's own `dispute.lost` does what the
 * operator's would. The ledger is verified after every test.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { getPage, postForm, signedIn } from '../support/console.ts';
import { DATABASES } from '../support/databases.ts';
import { FakeCashfree } from '../support/fake-cashfree.ts';
import { FakeSetu, type FakePayment } from '../support/fake-setu.ts';
import { skipFor, testAccounts } from '../support/harness.ts';
import { RECEIVER, until, useLive, type LiveGateway } from '../support/live.ts';
import { cliAsync } from '../support/process.ts';
import { SETU_SPEC, startSpecProxy, type SpecProxy } from '../support/spec-proxy.ts';

const databaseSkip = { sqlite: await skipFor('sqlite'), postgres: await skipFor('postgres') };
const POLL_MS = 300;

let n = 0;
const next = () => `${process.pid}-${++n}`;

/** The merchant a test pays in to: its key and id. */
interface Shop {
  key: string;
  merchantId: string;
}

const shopOf = (l: LiveGateway): Shop => ({ key: l.merchant.api_key, merchantId: l.merchant.merchant_id });

/** A live pay-in of `amount` rupees paid through the fake Setu (by notification). */
async function paidIn(
  l: LiveGateway,
  shop: Shop,
  amount: number,
): Promise<{ id: string; payment: FakePayment }> {
  const res = await l.gw.post(
    '/payments/onsite/payin',
    { money: { amount }, merchant_order_no: `dp-${next()}` },
    { key: shop.key },
  );
  assert.equal(res.status, 200, res.text);
  const id = res.body.payment_id as string;
  l.setu.notifyUrl = `${l.gw.baseUrl}/channels/setu/notifications`;
  const payment = await l.setu.pay(id);
  await until(async () => {
    const status = await l.gw.post('/payments/payin_status', { payment_id: id }, { key: shop.key });
    return status.body?.status === 'SUCCESS';
  }, `pay-in ${id} SUCCESS`);
  return { id, payment };
}

function refund(l: LiveGateway, shop: Shop, paymentId: string, amount: number) {
  return l.gw.post(
    '/payments/refund',
    { payment_id: paymentId, money: { amount }, merchant_refund_no: `dr-${next()}` },
    { key: shop.key },
  );
}

async function balanceOf(l: LiveGateway, merchantId: string) {
  const b = await l.gw.paygate.services.wallets.balance(merchantId, 'INR');
  return { available: b.available, held: b.held };
}

/** The dispute exceptions of a pay-in. */
function disputeExceptions(l: LiveGateway, paymentId: string) {
  return l.gw.database.db
    .selectFrom('channel_exceptions')
    .selectAll()
    .where('kind', '=', 'dispute')
    .where('payment_id', '=', paymentId)
    .execute()
    .then((rows) =>
      rows.map((r) => ({
        ...r,
        id: Number(r.id),
        amount: Number(r.amount),
        outstanding: Number(r.outstanding),
      })),
    );
}

/** The refunds of a pay-in as stored. */
function refundRows(l: LiveGateway, paymentId: string) {
  return l.gw.database.db
    .selectFrom('transactions')
    .selectAll()
    .where('refund_of', '=', paymentId)
    .orderBy('created_at')
    .execute();
}

async function waitRefundStatus(l: LiveGateway, refundId: string, want: string): Promise<void> {
  await until(async () => {
    const r = await l.gw.database.db
      .selectFrom('transactions')
      .select('status')
      .where('payment_id', '=', refundId)
      .executeTakeFirstOrThrow();
    return r.status === want;
  }, `refund ${refundId} ${want}`);
}

/** A dispute of the whole payment, opened by Setu's notification; its exception. */
async function disputed(l: LiveGateway, id: string, payment: FakePayment, amount = payment.amount) {
  const disputeId = `DSP${next().replace('-', '')}`;
  assert.equal(await l.setu.notifyDispute(payment, { id: disputeId, amount }), 200);
  const [e] = await disputeExceptions(l, id);
  assert.ok(e, 'a dispute exception on the pay-in');
  return { e, disputeId };
}

describe('disputes of live pay-ins through Setu', () => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let proxy: SpecProxy;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    proxy = await startSpecProxy(SETU_SPEC, setu.url);
  });

  after(async () => {
    await proxy?.stop();
    await setu?.stop();
    await cashfree?.stop();
  });

  for (const kind of DATABASES) {
    describe(`on ${kind}`, { skip: databaseSkip[kind] }, () => {
      const live = useLive(kind, { CHANNEL_POLL_MS: String(POLL_MS), CHANNEL_TIMEOUT_MS: '3000' }, () => ({
        fakes: { setu, cashfree },
        proxies: { setu: proxy.url },
      }));
      afterEach(async () => {
        setu.refundSettleMs = 0;
        await live().ledgerOk();
      });

      it('dispute.created opens one dispute exception with its amount and Setu id; a refund is 409 PAYMENT_DISPUTED and holds nothing; the pay-in page shows it; the console records it won', async () => {
        const l = live();
        const shop = shopOf(l);
        const { id, payment } = await paidIn(l, shop, 120);
        const disputeId = `DSP${next().replace('-', '')}`;
        const before = await l.balance();
        assert.equal(await setu.notifyDispute(payment, { id: disputeId, amount: 12000 }), 200);
        // Setu retries: the same dispute again opens nothing more.
        assert.equal(await setu.notifyDispute(payment, { id: disputeId, amount: 12000 }), 200);
        const exceptions = await disputeExceptions(l, id);
        assert.equal(exceptions.length, 1);
        assert.equal(exceptions[0]!.reference, disputeId);
        assert.equal(exceptions[0]!.amount, 12000);
        assert.equal(exceptions[0]!.merchant_id, shop.merchantId);
        assert.equal(exceptions[0]!.resolved_at, null);
        const refused = await refund(l, shop, id, 10);
        assert.equal(refused.status, 409, refused.text);
        assert.equal(refused.body.error.error_code, 'PAYMENT_DISPUTED');
        assert.deepEqual(await l.balance(), before, 'nothing held');
        assert.equal((await refundRows(l, id)).length, 0, 'no refund recorded');
        // An operator sees the dispute on the pay-in's page, and no refund form.
        const email = `ops-dsp-${kind}-${next()}@example.com`;
        await testAccounts(l.gw.database.db).createUser({
          email,
          role: 'operator',
          merchantId: null,
          password: 'correct horse battery',
        });
        const browser = await signedIn(l.gw, email, 'correct horse battery');
        const page = await getPage(l.gw, browser, `/dashboard/transactions/${id}`);
        assert.equal(page.statusCode, 200);
        assert.ok(page.body.includes('<h2 id="disputes-h">Disputes</h2>'), 'a disputes section');
        assert.ok(page.body.includes(disputeId), "Setu's dispute id on the page");
        assert.ok(page.body.includes('A dispute of this pay-in is open'), 'the refund form is replaced');
        assert.ok(!page.body.includes('id="refund-amount"'), 'no refund form');
        const exceptionPage = await getPage(l.gw, browser, `/dashboard/exceptions/${exceptions[0]!.id}`);
        assert.ok(exceptionPage.body.includes('value="dispute-lost"'), 'the console offers dispute-lost');
        assert.ok(exceptionPage.body.includes('value="dispute-won"'), 'the console offers dispute-won');
        // The operator records it won in the console: a confirmation first, then the pay-in is refundable again.
        const resolveUrl = `/dashboard/exceptions/${exceptions[0]!.id}/resolve`;
        const confirm = await postForm(l.gw, browser, resolveUrl, {
          action: 'dispute-won',
          merchant: '',
          note: '',
        });
        assert.equal(confirm.statusCode, 200, confirm.body.slice(0, 300));
        assert.ok(confirm.body.includes('The dispute closes'), 'the confirmation says what happens');
        const formId = /name="form_id" value="([^"]+)"/.exec(confirm.body)![1]!;
        const done = await postForm(l.gw, browser, resolveUrl, {
          action: 'dispute-won',
          merchant: '',
          note: '',
          form_id: formId,
          confirm: 'yes',
        });
        assert.equal(done.statusCode, 303, done.body.slice(0, 300));
        assert.equal((await disputeExceptions(l, id))[0]!.resolution, 'dispute-won');
        assert.equal((await refund(l, shop, id, 10)).status, 200, 'refundable again');
      });

      it('dispute-lost refunds the refundable part through Setu from the merchant balance, with no callback, and closes the exception', async () => {
        const l = live();
        const shop = shopOf(l);
        const { id, payment } = await paidIn(l, shop, 300);
        // 100.00 refunded before the dispute: 200.00 is what is left to refund.
        const first = await refund(l, shop, id, 100);
        assert.equal(first.status, 200, first.text);
        await waitRefundStatus(l, first.body.refund_id, 'SUCCESS');
        const { e } = await disputed(l, id, payment, 30000);
        const before = await l.balance();
        // Setu's refunds stay pending a while, so that the hold is seen before the refund settles.
        setu.refundSettleMs = 1500;
        const resolved = await l.gw.paygate.services.exceptions.resolve(e.id, {
          action: 'dispute-lost',
          actor: 'ops@example.com',
        });
        assert.equal(resolved.changed, true);
        assert.equal(resolved.exception.resolved_at !== null, true, 'closed: the balance covered it');
        assert.equal(resolved.exception.resolution, 'dispute-lost');
        assert.deepEqual(await l.balance(), {
          available: before.available - 20000,
          held: before.held + 20000,
        });
        const lostRefund = (await refundRows(l, id)).find((r) => r.payment_id !== first.body.refund_id)!;
        assert.equal(Number(lostRefund.amount), 20000);
        assert.equal(lostRefund.callback_url, null);
        await waitRefundStatus(l, lostRefund.payment_id, 'SUCCESS');
        assert.equal(setu.refundPosts(lostRefund.payment_id).length, 1, 'one Setu refund');
        assert.equal(setu.refundPosts(lostRefund.payment_id)[0]!.body.paymentId, payment.id);
        assert.deepEqual(await l.balance(), { available: before.available - 20000, held: before.held });
        // A repeat changes nothing; the pay-in is refunded in full.
        const again = await l.gw.paygate.services.exceptions.resolve(e.id, {
          action: 'dispute-lost',
          actor: 'ops@example.com',
        });
        assert.equal(again.changed, false);
        assert.equal((await refundRows(l, id)).length, 2);
        const more = await refund(l, shop, id, 1);
        assert.equal(more.status, 400, more.text);
        assert.equal(more.body.error.error_code, 'REFUND_EXCEEDS_PAYMENT');
        await new Promise((r) => setTimeout(r, 200));
        assert.equal(
          l.receiver.received.filter((r) => r.body?.refund_id === lostRefund.payment_id).length,
          0,
          'no refund callback',
        );
      });

      it('dispute-lost when the balance lacks part of it: the rest is owed on the exception, and a debit clears it', async () => {
        const l = live();
        // A merchant of its own whose balance is only what its pay-in brought, most of it paid out.
        const created = await l.gw.paygate.services.merchants.create({
          name: 'Dispute Shop',
          live: true,
          vpa: `dispute.${kind}@pineaxis`,
          setuVpaId: [...setu.vpas.values()].find((v) => v.vpa === `dispute.${kind}@pineaxis`)?.id ?? null,
          callbackUrl: l.receiver.url('/dispute'),
        });
        const shop = { key: created.api_key, merchantId: created.merchant_id };
        const { id, payment } = await paidIn(l, shop, 500);
        const payout = await l.gw.post(
          '/payments/payout',
          { money: { amount: 400 }, merchant_order_no: `dpo-${next()}`, receiver: RECEIVER },
          { key: shop.key },
        );
        assert.equal(payout.status, 200, payout.text);
        await until(async () => {
          const status = await l.gw.post(
            '/payments/payout_status',
            { payment_id: payout.body.payment_id },
            { key: shop.key },
          );
          return status.body?.status === 'SUCCESS';
        }, 'the payout SUCCESS');
        const before = await balanceOf(l, shop.merchantId);
        assert.deepEqual(before, { available: 10000, held: 0 });
        const { e } = await disputed(l, id, payment);
        setu.refundSettleMs = 1500;
        const resolved = await l.gw.paygate.services.exceptions.resolve(e.id, {
          action: 'dispute-lost',
          actor: 'cli',
        });
        assert.equal(resolved.exception.resolved_at, null, 'open while the merchant owes');
        assert.equal(resolved.exception.holds, 'receivable');
        assert.equal(Number(resolved.exception.outstanding), 40000);
        const after = await balanceOf(l, shop.merchantId);
        assert.equal(after.available, 0, 'all of the balance held');
        assert.equal(after.held, 50000, 'the whole refund held');
        await l.ledgerOk();
        const [lostRefund] = await refundRows(l, id);
        assert.equal(Number(lostRefund!.amount), 50000);
        await waitRefundStatus(l, lostRefund!.payment_id, 'SUCCESS');
        await l.ledgerOk();
        // §13's conservation: available + held = credited − paid out (the payout, the refund) + open receivable.
        const settled = await balanceOf(l, shop.merchantId);
        assert.equal(settled.available + settled.held, 50000 - (40000 + 50000) + 40000);
        // The merchant's balance grows; the operator takes the debt from it.
        await l.gw.paygate.services.wallets.topUp(shop.merchantId, 'INR', 100000);
        const debited = await l.gw.paygate.services.exceptions.resolve(e.id, {
          action: 'debit',
          actor: 'cli',
        });
        assert.equal(debited.exception.resolved_at !== null, true);
        assert.equal(Number(debited.exception.outstanding), 0);
        assert.equal((await balanceOf(l, shop.merchantId)).available, 100000 - 40000);
      });

      it('dispute-won (by the CLI) closes the exception and the pay-in can be refunded again', async () => {
        const l = live();
        const shop = shopOf(l);
        const { id, payment } = await paidIn(l, shop, 80);
        const { e } = await disputed(l, id, payment);
        assert.equal((await refund(l, shop, id, 10)).status, 409);
        const run = await cliAsync(
          ['exceptions', 'resolve', String(e.id), '--action', 'dispute-won', '--json'],
          {
            DATABASE_URL: l.gw.testDb.url,
            ...setu.env(proxy.url),
          },
        );
        assert.equal(run.status, 0, run.stderr);
        assert.equal(run.json.changed, true);
        const [closed] = await disputeExceptions(l, id);
        assert.equal(closed!.resolution, 'dispute-won');
        assert.match(closed!.resolved_by ?? '', /^cli:./);
        // The other outcome can no longer be recorded; a refund is taken again.
        await assert.rejects(
          l.gw.paygate.services.exceptions.resolve(e.id, { action: 'dispute-lost', actor: 'cli' }),
          (err: any) => err.errorCode === 'INVALID_STATE',
        );
        const ok = await refund(l, shop, id, 10);
        assert.equal(ok.status, 200, ok.text);
        await waitRefundStatus(l, ok.body.refund_id, 'SUCCESS');
      });

      it('a dispute of a payment that no pay-in here has opens a dispute exception naming none; lost refunds nothing', async () => {
        const l = live();
        const stranger: FakePayment = {
          id: `PAY${next().replace('-', '')}`,
          qrId: 'none',
          amount: 5000,
          status: 'success',
          rrn: String(100_000_000_000 + n),
          txnId: `SET${next().replace('-', '')}`,
          customerVpa: 'someone@bank',
          txnTs: new Date().toISOString(),
        };
        const disputeId = `DSP${next().replace('-', '')}`;
        assert.equal(await setu.notifyDispute(stranger, { id: disputeId, amount: 5000 }), 200);
        const e = await l.gw.database.db
          .selectFrom('channel_exceptions')
          .selectAll()
          .where('kind', '=', 'dispute')
          .where('reference', '=', disputeId)
          .executeTakeFirstOrThrow();
        assert.equal(e.payment_id, null);
        assert.ok(e.detail.includes('names no Setu pay-in here'), e.detail);
        const before = await l.balance();
        const resolved = await l.gw.paygate.services.exceptions.resolve(Number(e.id), {
          action: 'dispute-lost',
          actor: 'cli',
        });
        assert.equal(resolved.exception.resolution, 'dispute-lost');
        assert.deepEqual(await l.balance(), before, 'no money moved');
      });

      it("Setu's own dispute.lost refunds as dispute-lost does, once; a later dispute.won changes nothing", async () => {
        const l = live();
        const shop = shopOf(l);
        const { id, payment } = await paidIn(l, shop, 60);
        const { e, disputeId } = await disputed(l, id, payment);
        assert.equal(
          await setu.notifyDispute(payment, { id: disputeId, amount: 6000, status: 'in-review' }),
          200,
        );
        assert.equal((await disputeExceptions(l, id))[0]!.resolved_at, null, 'in review: still open');
        assert.equal(await setu.notifyDispute(payment, { id: disputeId, amount: 6000, status: 'lost' }), 200);
        assert.equal(await setu.notifyDispute(payment, { id: disputeId, amount: 6000, status: 'lost' }), 200);
        assert.equal(await setu.notifyDispute(payment, { id: disputeId, amount: 6000, status: 'won' }), 200);
        const [closed] = await disputeExceptions(l, id);
        assert.equal(closed!.id, e.id);
        assert.equal(closed!.resolution, 'dispute-lost');
        assert.equal(closed!.resolved_by, 'channel');
        const refunds = await refundRows(l, id);
        assert.equal(refunds.length, 1, 'one refund');
        await waitRefundStatus(l, refunds[0]!.payment_id, 'SUCCESS');
        assert.equal(setu.refundPosts(refunds[0]!.payment_id).length, 1);
      });
    });
  }
});
