/**
 * The money rules where they are enforced, reached on purpose rather than by luck: the database
 * refuses a negative balance by itself; a hold the balance does not cover is refused by the wallet
 * update; one batch of payouts worth more than the balance accepts the ones that fit; and a final
 * status is written once, however many completions (and an expiry) race for it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Gateway } from '../support/harness.ts';
import { holdForPayouts } from '../../src/wallet/ledger.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
let seq = 0;
const orderNo = () => `race-${++seq}`;

async function wallet(g: Gateway, merchantId: string) {
  return g.database.db
    .selectFrom('wallets')
    .select(['available', 'held'])
    .where('merchant_id', '=', merchantId)
    .executeTakeFirstOrThrow();
}

/** The final statuses written for a payment, as transaction events. */
async function finalEvents(g: Gateway, paymentId: string): Promise<string[]> {
  const rows = await g.database.db
    .selectFrom('transaction_events')
    .select('status')
    .where('payment_id', '=', paymentId)
    .where('status', 'in', ['SUCCESS', 'FAILED'])
    .execute();
  return rows.map((e) => e.status);
}

async function count(
  g: Gateway,
  table: 'ledger_entries' | 'transaction_events' | 'callback_deliveries',
  paymentId?: string,
) {
  let q = g.database.db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n'));
  if (paymentId) q = q.where('payment_id', '=', paymentId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

for (const kind of DATABASES) {
  describe(`money rules where they are enforced, on ${kind}`, { skip: await skipFor(kind) }, () => {
    let clock = Date.now();
    const gw = useGateway(kind, { now: () => clock, env: { SANDBOX_PAYOUT_SETTLE_MS: '86400000' } });

    it('the database itself refuses a negative available or held balance', async () => {
      const g = gw();
      const m = await g.newMerchant();
      await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', 1000);
      for (const column of ['available', 'held'] as const) {
        await assert.rejects(
          g.database.db
            .updateTable('wallets')
            .set({ [column]: sql`${sql.ref(column)} - 1001` })
            .where('merchant_id', '=', m.merchant_id)
            .execute(),
          /check|constraint/i,
          column,
        );
      }
      assert.deepEqual(await wallet(g, m.merchant_id), { available: 1000, held: 0 });
    });

    it('a hold the balance does not cover is refused by the wallet update, and writes nothing', async () => {
      const g = gw();
      const m = await g.newMerchant();
      await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', 1000);
      const entries = await count(g, 'ledger_entries');
      const holds = [600, 500].map((amount) => ({
        merchantId: m.merchant_id,
        currency: 'INR',
        amount,
        paymentId: `p${'x'.repeat(30)}${amount}`.slice(0, 32),
      }));
      await assert.rejects(
        g.database.db.transaction().execute((tx) => holdForPayouts(tx, holds, clock)),
        /does not cover/,
      );
      assert.deepEqual(await wallet(g, m.merchant_id), { available: 1000, held: 0 });
      assert.equal(await count(g, 'ledger_entries'), entries);
    });

    it('one burst of payouts worth more than the balance: those that fit are accepted, the rest refused with what was left', async () => {
      const g = gw();
      const m = await g.newMerchant();
      await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', 9_500);
      // Asked for in one tick: they reach the payout writer together, so one batch holds payouts
      // worth more than the balance and its own check decides which fit.
      const replies = await Promise.all(
        Array.from({ length: 12 }, () =>
          g.post(
            '/payments/payout',
            { money: { amount: 10 }, merchant_order_no: orderNo(), receiver: RECEIVER },
            { key: m.api_key },
          ),
        ),
      );
      const accepted = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status !== 200);
      assert.equal(accepted.length, 9, replies.map((r) => r.status).join(','));
      assert.equal(refused.length, 3);
      for (const r of refused) {
        assert.equal(r.status, 400, r.text);
        assert.equal(r.body.error.error_code, 'INSUFFICIENT_BALANCE');
        assert.equal(r.body.error.metadata.available, 5);
        assert.equal(r.body.error.metadata.requested, 10);
      }
      assert.deepEqual(await wallet(g, m.merchant_id), { available: 500, held: 9_000 });
    });

    for (const what of ['pay-in', 'payout'] as const) {
      it(`writes one final status for a ${what} that ten completions race for`, async () => {
        const g = gw();
        const m = await g.newMerchant({ callbackUrl: 'https://shop.example/cb' });
        await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', 10_000);
        const created =
          what === 'payout'
            ? await g.post(
                '/payments/payout',
                { money: { amount: 10 }, merchant_order_no: orderNo(), receiver: RECEIVER },
                { key: m.api_key },
              )
            : await g.post(
                '/payments/onsite/payin',
                { money: { amount: 10 }, merchant_order_no: orderNo() },
                { key: m.api_key },
              );
        assert.equal(created.status, 200, created.text);
        const id = created.body.payment_id as string;
        const path = what === 'payout' ? '/sandbox/payout/complete' : '/sandbox/payin/complete';
        const replies = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            g.post(path, { payment_id: id, status: i % 2 ? 'FAILED' : 'SUCCESS' }, { key: m.api_key }),
          ),
        );
        const won = replies.filter((r) => r.status === 200);
        assert.equal(won.length, 1, replies.map((r) => r.status).join(','));
        for (const r of replies.filter((x) => x.status !== 200))
          assert.equal(r.body.error.error_code, 'INVALID_STATE');
        const finalStatus = won[0]!.body.status as string;
        const statusPath = what === 'payout' ? '/payments/payout_status' : '/payments/payin_status';
        assert.equal(
          (await g.post(statusPath, { payment_id: id }, { key: m.api_key })).body.status,
          finalStatus,
        );
        assert.deepEqual(await finalEvents(g, id), [finalStatus]);
        assert.equal(await count(g, 'callback_deliveries', id), 1);
        const w = await wallet(g, m.merchant_id);
        if (what === 'payout')
          assert.deepEqual(
            w,
            finalStatus === 'SUCCESS' ? { available: 9_000, held: 0 } : { available: 10_000, held: 0 },
          );
        else assert.deepEqual(w, { available: finalStatus === 'SUCCESS' ? 11_000 : 10_000, held: 0 });
      });
    }

    it('writes one final status when expiry and a completion race for a pay-in', async () => {
      const g = gw();
      const m = await g.newMerchant({ callbackUrl: 'https://shop.example/cb' });
      const created = await g.post(
        '/payments/onsite/payin',
        { money: { amount: 10 }, merchant_order_no: orderNo() },
        { key: m.api_key },
      );
      const id = created.body.payment_id as string;
      const txn = await g.database.db
        .selectFrom('transactions')
        .selectAll()
        .where('payment_id', '=', id)
        .executeTakeFirstOrThrow();
      // Due for expiry now; the completion was read as PENDING before it, as a request in flight would be.
      clock = Number(txn.expires_at) + 1;
      const [expired, completed] = await Promise.allSettled([
        g.paygate.worker.drain(),
        g.paygate.services.sandbox.settle(txn, 'SUCCESS', 'api'),
      ]);
      assert.equal(expired.status, 'fulfilled');
      const after = await g.database.db
        .selectFrom('transactions')
        .select('status')
        .where('payment_id', '=', id)
        .executeTakeFirstOrThrow();
      if (completed.status === 'fulfilled') assert.equal(after.status, 'SUCCESS');
      else {
        assert.equal(after.status, 'FAILED');
        assert.equal((completed.reason as { errorCode?: string }).errorCode, 'INVALID_STATE');
      }
      assert.deepEqual(await finalEvents(g, id), [after.status]);
      assert.equal(await count(g, 'callback_deliveries', id), 1);
      clock = Date.now();
    });
  });
}
