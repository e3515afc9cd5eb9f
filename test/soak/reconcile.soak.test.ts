/**
 * Reconciliation soak, for `npm run soak`: on each database, a day of 1,000 live transactions (500
 * Setu pay-ins, 500 Cashfree payouts) settled through the fakes, then 20 differences put into the
 * fakes that Paygate never heard of: late reversals, successes Paygate recorded as failed, other
 * amounts, other UTRs, a transfer the provider never received, second payments on a QR. One run
 * books what moved money through the outcomes and opens the rest as differences, 20 exceptions in
 * all; a second run books and opens nothing. Reconciliation at RECONCILE_AT across
 * processes is in `reconcile-schedule.soak.test.ts`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { cliAsync } from '../support/process.ts';
import { RECEIVER, useLive, type LiveGateway } from '../support/live.ts';
import { istDate } from '../../src/ist.ts';

const PAYINS = 500;
const PAYOUTS = 500;
const WAVE = 25;

async function inWaves<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i += WAVE)
    out.push(
      ...(await Promise.all(Array.from({ length: Math.min(WAVE, count - i) }, (_, j) => make(i + j)))),
    );
  return out;
}

async function waitAll(l: LiveGateway, kind: 'payin' | 'payout', ids: string[], status: string) {
  await inWaves(ids.length, (i) => l.waitStatus(kind, ids[i]!, status, 120_000));
}

function reconcile(l: LiveGateway, date: string) {
  return cliAsync(['reconcile', '--date', date, '--json'], {
    DATABASE_URL: l.gw.testDb.url,
    ...l.setu.env(),
    ...l.cashfree.env(),
  });
}

/** Every exception open, as `kind provider reference`, sorted. */
async function exceptionKeys(l: LiveGateway): Promise<string[]> {
  const rows = await l.gw.database.db
    .selectFrom('channel_exceptions')
    .select(['kind', 'provider', 'reference'])
    .execute();
  return rows.map((r) => `${r.kind} ${r.provider} ${r.reference}`).sort();
}

for (const kind of DATABASES) {
  describe(`reconcile soak on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, { PAYIN_EXPIRY_S: '30' });

    it(`finds exactly the 20 differences among ${PAYINS + PAYOUTS} live transactions, once`, async () => {
      const l = live();
      const stamp = `${process.pid}-${Date.now()}`;
      const payins = await inWaves(PAYINS, async (i) => {
        const res = await l.post('/payments/onsite/payin', {
          money: { amount: 100 + (i % 50) },
          merchant_order_no: `soak-in-${stamp}-${i}`,
        });
        assert.equal(res.status, 200, res.text);
        return res.body.payment_id as string;
      });
      // Two pay-ins nobody pays: they expire FAILED.
      const unpaid = payins.slice(0, 2);
      const paid = payins.slice(2);
      await inWaves(paid.length, (i) => l.setu.pay(paid[i]!));
      // Two payouts the provider fails.
      l.cashfree.ending = 'FAILED';
      const failing = await inWaves(2, async (i) => {
        const res = await l.post('/payments/payout', {
          money: { amount: 500 },
          merchant_order_no: `soak-fail-${stamp}-${i}`,
          receiver: RECEIVER,
        });
        assert.equal(res.status, 200, res.text);
        return res.body.payment_id as string;
      });
      await waitAll(l, 'payout', failing, 'FAILED');
      l.cashfree.ending = 'SUCCESS';
      const payouts = await inWaves(PAYOUTS - 2, async (i) => {
        const res = await l.post('/payments/payout', {
          money: { amount: 200 + (i % 70) },
          merchant_order_no: `soak-out-${stamp}-${i}`,
          receiver: RECEIVER,
        });
        assert.equal(res.status, 200, res.text);
        return res.body.payment_id as string;
      });
      await waitAll(l, 'payin', paid, 'SUCCESS');
      await waitAll(l, 'payout', payouts, 'SUCCESS');
      await waitAll(l, 'payin', unpaid, 'FAILED');

      // Twenty differences Paygate does not see: eleven at Setu, nine at Cashfree.
      const expected: string[] = [];
      let reversed = 0;
      const qr = (id: string) => l.setu.qrFor(id)!;
      for (const id of paid.slice(0, 3)) {
        const p = qr(id).payment!;
        p.amount += 1;
        expected.push(`reconcile_mismatch setu ${p.id} amount=${p.amount}`);
      }
      for (const [i, id] of paid.slice(3, 6).entries()) {
        const p = qr(id).payment!;
        p.rrn = `77700000000${i}`;
        expected.push(`reconcile_mismatch setu ${p.id} utr=${p.rrn}`);
      }
      for (const id of [...paid.slice(6, 9), ...unpaid]) {
        const second = await l.setu.pay(id, { notify: false });
        expected.push(`payment_after_final setu ${second.id}`);
      }
      const transfer = (id: string) => l.cashfree.transfers.get(id)!;
      for (const id of payouts.slice(0, 2)) {
        transfer(id).status = 'REVERSED';
        expected.push(`reversal cashfree ${id}`);
        reversed += Math.round(transfer(id).transfer_amount * 100);
      }
      for (const id of payouts.slice(2, 4)) {
        transfer(id).transfer_amount += 0.01;
        const paise = Math.round(transfer(id).transfer_amount * 100);
        expected.push(`reconcile_mismatch cashfree ${transfer(id).cf_transfer_id} amount=${paise}`);
      }
      for (const [i, id] of payouts.slice(4, 6).entries()) {
        transfer(id).transfer_utr = `88800000000${i}`;
        expected.push(
          `reconcile_mismatch cashfree ${transfer(id).cf_transfer_id} utr=${transfer(id).transfer_utr}`,
        );
      }
      l.cashfree.transfers.delete(payouts[6]!);
      expected.push(`reconcile_mismatch cashfree ${payouts[6]} status=NOT_FOUND`);
      for (const id of failing) {
        transfer(id).status = 'SUCCESS';
        transfer(id).transfer_utr = '999000000001';
        expected.push(`payout_after_failed cashfree ${id}`);
      }
      assert.equal(expected.length, 20);
      const balance = await l.balance();

      const today = istDate(Date.now());
      const first = await reconcile(l, today);
      assert.equal(first.status, 0, first.stderr + first.stdout);
      assert.deepEqual(first.json.runs, [
        {
          date: today,
          channel: 'setu',
          checked: PAYINS,
          matched: PAYINS - 11,
          mismatched: 11,
          unreadable: 0,
        },
        {
          date: today,
          channel: 'cashfree',
          checked: PAYOUTS,
          matched: PAYOUTS - 9,
          mismatched: 9,
          unreadable: 0,
        },
      ]);
      // What moved money is booked through the outcomes (a second payment into suspense, a reversal
      // back to the merchant, a success after FAILED kept aside); the rest opens its difference.
      assert.deepEqual(await exceptionKeys(l), expected.sort());
      const after = await l.balance();
      assert.deepEqual(
        after,
        { ...balance, available: balance.available + reversed },
        'the reversals credited',
      );
      await l.ledgerOk();

      const again = await reconcile(l, today);
      assert.equal(again.status, 0, again.stderr + again.stdout);
      // The second run also reads the refunds of the five payments kept in suspense (created today);
      // the reversed transfers now agree, and so do those paid after FAILED (their money owed on an
      // exception); what differs is still found, and kept already.
      assert.deepEqual(
        again.json.runs.map((r: Record<string, unknown>) => [r.channel, r.checked, r.matched, r.mismatched]),
        [
          ['setu', PAYINS + 5, PAYINS + 5 - 11, 11],
          ['cashfree', PAYOUTS, PAYOUTS - 7 + failing.length, 7 - failing.length],
        ],
      );
      assert.deepEqual(await exceptionKeys(l), expected.sort(), 'a second run opens nothing new');
      assert.deepEqual(await l.balance(), after, 'a second run books nothing again');
      await l.ledgerOk();
    });
  });
}
