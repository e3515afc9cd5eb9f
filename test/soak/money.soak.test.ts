/**
 * A soak of the money rules, for `npm run soak` (not `npm test`): on each database, 400 payouts and
 * 300 pay-ins arrive in waves of 50 against a wallet that covers about half the payouts, while the
 * worker settles payouts by itself and the sandbox completes the same payments with a random outcome,
 * each completion sent three times at once. Throughout, the balance is never negative; at the end
 * every payment has exactly one final status, the one its status query shows, the wallet equals the
 * top-up plus the successful pay-ins minus the successful payouts, nothing is held, and the ledger
 * check is clean. Outcomes come from a seeded generator, so a failure reproduces.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor, useGateway, type Gateway } from '../support/harness.ts';

const RECEIVER = { name: 'Asha Rao', account_no: '123456789012', ifsc_code: 'HDFC0001234' };
const PAYOUTS = 400;
const PAYINS = 300;
const WAVE = 50;

/** mulberry32: a small seeded generator, so that a failing run can be repeated exactly. */
function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Payment {
  kind: 'payin' | 'payout';
  id: string;
  paise: number;
}

async function balance(g: Gateway, key: string): Promise<{ available: number; held: number }> {
  const res = await g.post('/wallet/balance', {}, { key });
  assert.equal(res.status, 200, res.text);
  return { available: Math.round(res.body.available * 100), held: Math.round(res.body.held * 100) };
}

for (const kind of DATABASES) {
  describe(`money soak on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind, {
      worker: true,
      env: { SANDBOX_PAYOUT_SETTLE_MS: '30', WORKER_POLL_MS: '50', PAYIN_FEE_BPS: '0' },
    });

    it(`keeps every rule through ${PAYOUTS} payouts and ${PAYINS} pay-ins settled by racing completions`, async () => {
      const g = gw();
      const random = generator(kind === 'sqlite' ? 26 : 2026);
      const m = await g.newMerchant();
      const key = m.api_key;
      const TOP_UP = 100_000;
      await g.paygate.services.wallets.topUp(m.merchant_id, 'INR', TOP_UP);
      const payments: Payment[] = [];
      let refused = 0;
      let lowest = TOP_UP;

      const kinds = [...Array<'payout'>(PAYOUTS).fill('payout'), ...Array<'payin'>(PAYINS).fill('payin')];
      kinds.sort(() => random() - 0.5);
      for (let start = 0; start < kinds.length; start += WAVE) {
        const wave = kinds.slice(start, start + WAVE).map(async (k, i) => {
          const paise = 100 + Math.floor(random() * 4_900);
          const body = { money: { amount: paise / 100 }, merchant_order_no: `soak-${kind}-${start + i}` };
          const created =
            k === 'payout'
              ? await g.post('/payments/payout', { ...body, receiver: RECEIVER }, { key })
              : await g.post('/payments/onsite/payin', body, { key });
          if (created.status === 400 && created.body.error.error_code === 'INSUFFICIENT_BALANCE') {
            refused++;
            return;
          }
          assert.equal(created.status, 200, created.text);
          const id = created.body.payment_id as string;
          payments.push({ kind: k, id, paise });
          const status = random() < 0.7 ? 'SUCCESS' : 'FAILED';
          const replies = await Promise.all(
            Array.from({ length: 3 }, () =>
              g.post(`/sandbox/${k}/complete`, { payment_id: id, status }, { key }),
            ),
          );
          // The worker may settle a payout first; otherwise exactly one completion wins.
          const won = replies.filter((r) => r.status === 200).length;
          assert.ok(won <= 1, replies.map((r) => r.text).join('\n'));
          for (const r of replies.filter((x) => x.status !== 200))
            assert.equal(r.body.error.error_code, 'INVALID_STATE', r.text);
        });
        await Promise.all(wave);
        const b = await balance(g, key);
        assert.ok(b.available >= 0 && b.held >= 0, JSON.stringify(b));
        lowest = Math.min(lowest, b.available);
      }

      const payoutIds = payments.filter((p) => p.kind === 'payout').map((p) => p.id);
      const deadline = Date.now() + 60_000;
      for (;;) {
        const open = await g.database.db
          .selectFrom('transactions')
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where('payment_id', 'in', payoutIds)
          .where('status', 'not in', ['SUCCESS', 'FAILED'])
          .executeTakeFirstOrThrow();
        if (Number(open.n) === 0) break;
        assert.ok(Date.now() < deadline, `${open.n} payouts still open after a minute`);
        await new Promise((r) => setTimeout(r, 100));
      }

      let expected = TOP_UP;
      for (const p of payments) {
        const path = p.kind === 'payout' ? '/payments/payout_status' : '/payments/payin_status';
        const shown = (await g.post(path, { payment_id: p.id }, { key })).body.status as string;
        const finals = await g.database.db
          .selectFrom('transaction_events')
          .select('status')
          .where('payment_id', '=', p.id)
          .where('status', 'in', ['SUCCESS', 'FAILED'])
          .execute();
        assert.deepEqual(
          finals.map((e) => e.status),
          [shown],
          `${p.kind} ${p.id}: one final status, the one shown`,
        );
        if (shown === 'SUCCESS') expected += p.kind === 'payin' ? p.paise : -p.paise;
      }
      assert.ok(refused > 0, 'the wallet ran short at some point, so the balance check was exercised');
      assert.deepEqual(await balance(g, key), { available: expected, held: 0 });
      const report = await g.paygate.services.wallets.verify();
      assert.ok(report.ok, report.problems.join('\n'));
      assert.ok(lowest >= 0);
    });
  });
}
