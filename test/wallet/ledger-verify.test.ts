/**
 * The ledger check (`wallet.verify()` and `paygate ledger verify`): clean after real money movements
 * of every kind, and failing loudly, naming what differs, when a wallet row or a journal is tampered with.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Gateway } from '../support/harness.ts';
import { cli } from '../support/process.ts';

let seq = 0;
const orderNo = () => `lg-${Date.now().toString(36)}-${++seq}`;
const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };

function verifyCli(g: Gateway, json = true) {
  return cli(['ledger', 'verify', ...(json ? ['--json'] : [])], { DATABASE_URL: g.testDb.url });
}

for (const kind of DATABASES) {
  describe(`ledger verification on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, { env: { PAYIN_FEE_BPS: '175' } });

    it('is clean after top-ups, pay-ins with a fee, and payouts held, paid and returned', async () => {
      const g = gw();
      const m = g.merchant;
      await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', 100_000);
      for (const [amount, status] of [
        [999.99, 'SUCCESS'],
        [0.01, 'SUCCESS'],
        [12.34, 'FAILED'],
      ] as const) {
        const p = await g.post('/payments/onsite/payin', { money: { amount }, merchant_order_no: orderNo() });
        assert.equal(
          (await g.post('/sandbox/payin/complete', { payment_id: p.body.payment_id, status })).status,
          200,
        );
      }
      const pending = await g.post('/payments/payout', {
        money: { amount: 100 },
        merchant_order_no: orderNo(),
        receiver: RECEIVER,
      });
      for (const status of ['SUCCESS', 'FAILED']) {
        const p = await g.post('/payments/payout', {
          money: { amount: 250.25 },
          merchant_order_no: orderNo(),
          receiver: RECEIVER,
        });
        assert.equal(
          (await g.post('/sandbox/payout/complete', { payment_id: p.body.payment_id, status })).status,
          200,
        );
      }
      assert.equal(pending.status, 200);
      assertShape(
        await g.post('/payments/payout', {
          money: { amount: 1_000_000 },
          merchant_order_no: orderNo(),
          receiver: RECEIVER,
        }),
        400,
      );

      // 1000.00 + (999.99 − 17.49) + 0.01 − 100.00 held − 250.25 paid = 1632.26 available.
      const balance = await g.post('/wallet/balance', {});
      assert.deepEqual(balance.body, { currency: 'INR', available: 1632.26, held: 100 });

      const report = await g.paygate.services.wallets.verify();
      assert.deepEqual(report.problems, []);
      assert.equal(report.ok, true);
      // topup, 2 pay-ins, 3 holds, 1 payout paid, 1 returned.
      assert.equal(report.journals, 8);
      assert.equal(report.wallets, 1);

      const run = verifyCli(g);
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout.trim().split('\n').length, 1);
      assert.deepEqual(run.json, { ok: true, journals: 8, wallets: 1, problems: [] });
    });

    it('fails, naming the wallet and the account, when a wallet row no longer matches its entries', async () => {
      const g = gw();
      const { merchant_id } = g.merchant;
      await g.database.db
        .updateTable('wallets')
        .set((eb) => ({ available: eb('available', '+', 1) }))
        .where('merchant_id', '=', merchant_id)
        .execute();
      try {
        const report = await g.paygate.services.wallets.verify();
        assert.equal(report.ok, false);
        assert.equal(report.problems.length, 1);
        assert.match(report.problems[0] ?? '', new RegExp(`${merchant_id}.*INR.*available.*163227.*163226`));

        const run = verifyCli(g);
        assert.notEqual(run.status, 0);
        assert.equal(run.json.ok, false);
        assert.deepEqual(run.json.problems, report.problems);
        const human = verifyCli(g, false);
        assert.notEqual(human.status, 0);
        assert.match(human.stdout + human.stderr, new RegExp(`${merchant_id}.*available`));
      } finally {
        await g.database.db
          .updateTable('wallets')
          .set((eb) => ({ available: eb('available', '-', 1) }))
          .where('merchant_id', '=', merchant_id)
          .execute();
      }
      assert.equal((await g.paygate.services.wallets.verify()).ok, true);

      await g.database.db
        .updateTable('wallets')
        .set({ held: 0 })
        .where('merchant_id', '=', merchant_id)
        .execute();
      try {
        const report = await g.paygate.services.wallets.verify();
        assert.deepEqual(report.problems.length, 1);
        assert.match(report.problems[0] ?? '', new RegExp(`${merchant_id}.*held.*is 0 paise.*10000`));
      } finally {
        await g.database.db
          .updateTable('wallets')
          .set({ held: 10_000 })
          .where('merchant_id', '=', merchant_id)
          .execute();
      }
      assert.equal((await g.paygate.services.wallets.verify()).ok, true);
    });

    it('fails, naming the journal, when an entry makes a journal unbalanced', async () => {
      const g = gw();
      await g.database.db
        .insertInto('ledger_entries')
        .values({
          journal_id: 'jnl_tampered',
          kind: 'topup',
          merchant_id: g.merchant.merchant_id,
          currency: 'INR',
          account: 'external:operator_funding',
          amount: 500,
          payment_id: null,
          created_at: Date.now(),
        })
        .execute();
      try {
        const report = await g.paygate.services.wallets.verify();
        assert.equal(report.ok, false);
        assert.deepEqual(report.problems, [
          'journal jnl_tampered does not balance: entries add up to 500 paise',
        ]);
        const run = verifyCli(g);
        assert.equal(run.status, 1);
        assert.deepEqual(run.json.problems, report.problems);
      } finally {
        await g.database.db.deleteFrom('ledger_entries').where('journal_id', '=', 'jnl_tampered').execute();
      }

      // A balanced journal that moves money into a wallet behind the wallet row's back.
      const other = await g.newMerchant();
      await g.database.db
        .insertInto('ledger_entries')
        .values(
          [
            ['available', 700],
            ['external:operator_funding', -700],
          ].map(([account, amount]) => ({
            journal_id: 'jnl_sneaky',
            kind: 'topup',
            merchant_id: other.merchant_id,
            currency: 'INR',
            account: String(account),
            amount: Number(amount),
            payment_id: null,
            created_at: Date.now(),
          })),
        )
        .execute();
      try {
        const report = await g.paygate.services.wallets.verify();
        assert.equal(report.ok, false);
        assert.equal(report.problems.length, 1);
        assert.match(report.problems[0] ?? '', new RegExp(`${other.merchant_id}.*700`));
      } finally {
        await g.database.db.deleteFrom('ledger_entries').where('journal_id', '=', 'jnl_sneaky').execute();
      }
      const clean = verifyCli(g);
      assert.equal(clean.status, 0, clean.stdout);
      assert.equal(clean.json.ok, true);
    });
  });
}

function assertShape(res: { status: number; body: any }, status: number): void {
  assert.equal(res.status, status);
  assert.equal(res.body.status, false);
  assert.equal(res.body.error.code, status);
}
