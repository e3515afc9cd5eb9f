/**
 * Soak (npm run soak): 500 live pay-ins per database against the fake Setu, each with a script of
 * what its customer and Setu do: paid with notifications in order, out of order and duplicated; paid
 * without a notification (found by polling); never paid; a failed attempt only; a payment still in
 * progress at expiry that then succeeds or fails; a payment after the pay-in FAILED; a payment of
 * another amount; a notification naming the pay-in with another UPI id. Afterwards every pay-in's
 * status is what the fake says happened, every exception is one a script injected (and every
 * injected fault has its exception), and the ledger is clean.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import type { FakePayment } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { startLive, until, type LiveGateway } from '../support/live.ts';

const PAYINS = 500;
const CONCURRENCY = 40;
const EXPIRY_S = 3;

const SCRIPTS = [
  'paid',
  'out_of_order',
  'polled',
  'unpaid',
  'failed_attempt',
  'in_progress_then_paid',
  'in_progress_then_failed',
  'late',
  'wrong_amount',
  'wrong_vpa',
] as const;
type Script = (typeof SCRIPTS)[number];

/** What a script expects: the final status, and the exception it injected (kind and reference), if any. */
interface Expected {
  paymentId: string;
  script: Script;
  status: 'SUCCESS' | 'FAILED';
  /** The payment that should have settled it (SUCCESS). */
  payment?: FakePayment;
  exception?: { kind: string; reference: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function statusOf(l: LiveGateway, id: string): Promise<string> {
  const row = await l.gw.database.db
    .selectFrom('transactions')
    .select('status')
    .where('payment_id', '=', id)
    .executeTakeFirstOrThrow();
  return row.status;
}

async function waitFinal(l: LiveGateway, id: string): Promise<void> {
  await until(async () => (await statusOf(l, id)) !== 'PENDING', `${id} final`, 120_000);
}

/** Runs one pay-in's script; answers what it should end as. */
async function run(l: LiveGateway, script: Script, n: number, kind: string): Promise<Expected> {
  const amount = 100 + (n % 97) + (n % 7) / 100;
  const res = await l.post('/payments/onsite/payin', {
    money: { amount },
    merchant_order_no: `soak-${kind}-${n}`,
  });
  assert.equal(res.status, 200, res.text);
  const id = res.body.payment_id as string;
  const setu = l.setu;
  const expiresIn = () => EXPIRY_S * 1000 + 500;
  switch (script) {
    case 'paid':
      return { paymentId: id, script, status: 'SUCCESS', payment: await setu.pay(id) };
    case 'out_of_order': {
      const payment = await setu.pay(id, {
        order: ['payment.success', 'payment.initiated', 'payment.success'],
      });
      // Setu's retry of the same event, byte for byte.
      const qr = setu.qrFor(id)!;
      const event = JSON.stringify(setu.event('payment.success', qr, payment));
      await setu.send(event);
      await setu.send(event);
      return { paymentId: id, script, status: 'SUCCESS', payment };
    }
    case 'polled':
      return { paymentId: id, script, status: 'SUCCESS', payment: await setu.pay(id, { notify: false }) };
    case 'unpaid':
      return { paymentId: id, script, status: 'FAILED' };
    case 'failed_attempt':
      await setu.pay(id, { status: 'failed' });
      return { paymentId: id, script, status: 'FAILED' };
    case 'in_progress_then_paid':
    case 'in_progress_then_failed': {
      const payment = await setu.pay(id, { status: 'pending' });
      await sleep(expiresIn() + 500);
      const succeeds = script === 'in_progress_then_paid';
      await setu.finish(payment, succeeds ? 'success' : 'failed', n % 2 === 0);
      return succeeds
        ? { paymentId: id, script, status: 'SUCCESS', payment }
        : { paymentId: id, script, status: 'FAILED' };
    }
    case 'late': {
      await waitFinal(l, id);
      setu.qrFor(id)!.status = 'active';
      const payment = await setu.pay(id);
      return {
        paymentId: id,
        script,
        status: 'FAILED',
        exception: { kind: 'payment_after_final', reference: payment.id },
      };
    }
    case 'wrong_amount': {
      const payment = await setu.pay(id, { amount: Math.round(amount * 100) + 100 });
      return {
        paymentId: id,
        script,
        status: 'FAILED',
        exception: { kind: 'amount_mismatch', reference: payment.id },
      };
    }
    case 'wrong_vpa': {
      const qr = setu.qrFor(id)!;
      const forged = {
        ...setu.event('payment.success', qr, {
          id: `forged-${kind}-${n}`,
          qrId: qr.id,
          amount: qr.amount,
          status: 'success',
          rrn: '999999999999',
          txnId: `forged-${n}`,
          customerVpa: 'someone@okaxis',
          txnTs: new Date().toISOString(),
        }),
        merchantVpa: 'another.shop@pineaxis',
      };
      assert.equal(await setu.send(JSON.stringify(forged)), 200);
      return {
        paymentId: id,
        script,
        status: 'FAILED',
        exception: { kind: 'unknown_reference', reference: `forged-${kind}-${n}` },
      };
    }
  }
}

for (const kind of DATABASES) {
  describe(`soak: live pay-ins on ${kind}`, { skip: await skipFor(kind) }, () => {
    it(`${PAYINS} pay-ins end as the fake Setu says, every difference an injected exception`, async () => {
      const l = await startLive(kind, {
        PAYIN_EXPIRY_S: String(EXPIRY_S),
        CHANNEL_POLL_MS: '500',
        CHANNEL_TIMEOUT_MS: '10000',
        SETU_MAX_RPS: '500',
        CALLBACK_RETRY_INTERVAL_MS: '1000',
      });
      try {
        const before = await l.balance();
        const expected: Expected[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (next < PAYINS) {
              const n = next++;
              expected.push(await run(l, SCRIPTS[n % SCRIPTS.length]!, n, kind));
            }
          }),
        );
        for (const e of expected) await waitFinal(l, e.paymentId);
        // Exceptions of late and misdirected payments come after their pay-in is final.
        const injected = expected.filter((e) => e.exception);
        const exceptionsOf = () =>
          l.gw.database.db
            .selectFrom('channel_exceptions')
            .select(['kind', 'reference', 'payment_id'])
            .execute();
        await until(
          async () => (await exceptionsOf()).length >= injected.length,
          'every injected exception',
          60_000,
        );
        await sleep(2000);

        const rows = await l.gw.database.db
          .selectFrom('transactions')
          .select(['payment_id', 'status', 'utr', 'amount'])
          .where('kind', '=', 'payin')
          .execute();
        const byId = new Map(rows.map((r) => [r.payment_id, r]));
        const wrong: string[] = [];
        let paid = 0;
        for (const e of expected) {
          const row = byId.get(e.paymentId)!;
          // What the fake says happened: the QR's successful payment of the pay-in's amount, made before it closed.
          const qr = l.setu.qrFor(e.paymentId)!;
          const fakePaid =
            qr.payment?.status === 'success' &&
            qr.payment.amount === Number(row.amount) &&
            e.script !== 'late';
          if (row.status !== e.status)
            wrong.push(`${e.script} ${e.paymentId}: ${row.status}, not ${e.status}`);
          if ((row.status === 'SUCCESS') !== fakePaid)
            wrong.push(`${e.script} ${e.paymentId}: ${row.status} but the fake says paid=${fakePaid}`);
          if (row.status === 'SUCCESS') {
            paid += Number(row.amount);
            if (row.utr !== qr.payment!.rrn) wrong.push(`${e.script} ${e.paymentId}: utr ${row.utr}`);
          } else if (qr.status === 'active')
            wrong.push(`${e.script} ${e.paymentId}: FAILED with its QR open`);
        }
        assert.deepEqual(wrong, []);

        const exceptions = await exceptionsOf();
        const key = (x: { kind: string; reference: string }) => `${x.kind} ${x.reference}`;
        assert.deepEqual(
          exceptions.map(key).sort(),
          injected.map((e) => key(e.exception!)).sort(),
          'exactly the injected exceptions',
        );
        for (const x of exceptions.filter((x) => x.kind !== 'unknown_reference'))
          assert.ok(
            expected.some((e) => e.paymentId === x.payment_id && e.exception?.reference === x.reference),
          );

        assert.equal(
          (await l.balance()).available - before.available,
          paid,
          'the wallet holds what was paid',
        );
        await l.ledgerOk();
        const counts = Object.fromEntries(
          SCRIPTS.map((s) => [s, expected.filter((e) => e.script === s).length]),
        );
        console.log(`soak ${kind}: ${JSON.stringify(counts)}; ${exceptions.length} exceptions`);
      } finally {
        await l.gw.close();
        await l.receiver.close();
        await l.setu.stop();
        await l.cashfree.stop();
      }
    });
  });
}
