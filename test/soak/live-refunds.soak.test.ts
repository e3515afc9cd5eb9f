/**
 * Soak: 300 live refunds of 100 Setu pay-ins while the fake Setu, at random, times out (having made
 * the refund), answers 5xx to reads and to POSTs it acted on, lags its reads, refuses refunds with
 * NPCI's reasons (at once for payments whose bank takes no online refunds, later for others), and
 * sends notifications naming refunds 0–2 times, stale ones included. Afterwards, on each database:
 * every refund final, or PENDING/PROCESSING with an exception; exactly one POST per refund at the
 * fake (it takes a repeated referenceId as a new refund, so this is Paygate's doing) and one
 * refund there; each refund's status is the fake's; `ledger verify` clean; what the ledger says
 * went to customers equals what the fake refunded.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import type { Fault, FakeRefund, FakeSetu } from '../support/fake-setu.ts';
import { skipFor } from '../support/harness.ts';
import { until, useLive } from '../support/live.ts';

const PAYINS = 100;
const REFUNDS_PER_PAYIN = 3;
const TIMEOUT_MS = 500;

function pick<T>(choices: [T, number][]): T {
  let r = Math.random();
  for (const [value, p] of choices) if ((r -= p) < 0) return value;
  return choices[choices.length - 1]![0];
}

/** Faults per call: timeouts and 5xx; a POST's 5xx comes after the refund was made. */
function chaos(operation: string): Fault | null {
  if (!operation.startsWith('refund_')) return null;
  const create = operation === 'refund_create';
  return pick<Fault | null>([
    [{ delayMs: TIMEOUT_MS + 300 }, create ? 0.05 : 0.02],
    [create ? { afterStatus: 502 } : { status: 500 }, 0.04],
    [null, 1],
  ]);
}

/** Scripts a refund the fake just made: how long it stays pending, how it ends, its notifications. */
function script(fake: FakeSetu, r: FakeRefund): Promise<void> {
  // A refund-disabled payment's refund was refused in the POST's answer; the others were pending.
  if (r.ending !== 'failed') {
    r.settleAt = Date.now() + Math.random() * 1500;
    if (Math.random() < 0.1) r.ending = 'failed';
  }
  const notices = Math.floor(Math.random() * 3);
  return (async () => {
    for (let i = 0; i < notices; i++) {
      await new Promise((done) => setTimeout(done, Math.random() * 2500));
      // Sometimes a stale "pending" after the end: only a read decides.
      await fake.notifyRefund(r, Math.random() < 0.3 ? 'refund.pending' : undefined);
    }
  })();
}

for (const kind of DATABASES) {
  describe(`soak: live refunds under a misbehaving Setu on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, {
      CHANNEL_POLL_MS: '300',
      CHANNEL_TIMEOUT_MS: String(TIMEOUT_MS),
      SETU_MAX_RPS: '200',
    });
    afterEach(async () => live().ledgerOk());

    it(`${PAYINS * REFUNDS_PER_PAYIN} refunds: one POST each, every one final or explained, the money adds up`, async () => {
      const l = live();
      const fake = l.setu;
      const payins: { id: string; amount: number }[] = [];
      for (let i = 0; i < PAYINS; i += 20) {
        payins.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(20, PAYINS - i) }, async (_, j) => {
              const amount = 300 + ((i + j) % 37) * 100 + 25; // paise: 3.25 to 39.25 rupees
              const ask = () =>
                l.post('/payments/onsite/payin', {
                  money: { amount: amount / 100 },
                  merchant_order_no: `soak-r-${kind}-${i + j}`,
                });
              let res = await ask();
              // CHANNEL_TIMEOUT_MS is short here: a QR Setu did not open in time is asked for again.
              for (let tries = 1; res.status === 503 && tries < 10; tries++) res = await ask();
              assert.equal(res.status, 200, res.text);
              const payment = await fake.pay(res.body.payment_id);
              // A tenth of the customers' banks take no online refunds.
              if ((i + j) % 10 === 3) fake.refundDisabled.add(payment.id);
              return { id: res.body.payment_id as string, amount };
            }),
          )),
        );
      }
      for (const p of payins) await l.waitStatus('payin', p.id, 'SUCCESS', 30_000);

      fake.refundReadLagMs = 200;
      // Pending in the POST's answer; each refund's script then says when and how it ends.
      fake.refundSettleMs = 60_000;
      fake.chaos = chaos;
      const scripted = new Set<string>();
      const plays: Promise<void>[] = [];
      const watcher = setInterval(() => {
        for (const r of fake.refunds.values()) {
          if (scripted.has(r.id)) continue;
          scripted.add(r.id);
          plays.push(script(fake, r));
        }
      }, 10);
      try {
        const ids: string[] = [];
        for (let k = 0; k < REFUNDS_PER_PAYIN; k++) {
          for (let i = 0; i < payins.length; i += 25) {
            ids.push(
              ...(await Promise.all(
                payins.slice(i, i + 25).map(async (p, j) => {
                  const res = await l.post('/payments/refund', {
                    payment_id: p.id,
                    money: { amount: Math.floor(p.amount / REFUNDS_PER_PAYIN) / 100 },
                    merchant_refund_no: `soak-rf-${kind}-${k}-${i + j}`,
                  });
                  assert.equal(res.status, 200, res.text);
                  return res.body.refund_id as string;
                }),
              )),
            );
          }
        }

        const db = l.gw.database.db;
        const open = () =>
          db
            .selectFrom('transactions')
            .select([
              'payment_id',
              'status',
              'submit_attempts',
              'not_found_at',
              'next_action_at',
              'lease_until',
            ])
            .where('payment_id', 'in', ids)
            .where('status', 'in', ['PENDING', 'PROCESSING'])
            .execute();
        const explained = async () => {
          const rows = await open();
          if (rows.length === 0) return true;
          const withException = await db
            .selectFrom('channel_exceptions')
            .select('payment_id')
            .where(
              'payment_id',
              'in',
              rows.map((r) => r.payment_id),
            )
            .execute();
          return new Set(withException.map((e) => e.payment_id)).size === rows.length;
        };
        await until(explained, 'every refund final or explained', 240_000).catch(async (err: unknown) => {
          const rows = await open();
          for (const o of rows.slice(0, 5)) {
            const made = fake.refundsFor(o.payment_id);
            const calls = fake.requests.filter(
              (r) =>
                r.body?.referenceId === o.payment_id || made.some((m) => r.path.endsWith(`/refunds/${m.id}`)),
            );
            console.log(
              JSON.stringify({ made: made.map((m) => ({ ...m, status: fake.refundStatus(m) })) }),
              JSON.stringify(
                await db
                  .selectFrom('transactions')
                  .selectAll()
                  .where('payment_id', '=', o.payment_id)
                  .execute(),
              ),
            );
            console.log(
              JSON.stringify({ ...o, now: Date.now() }),
              calls.map((c) => `${c.method} ${c.at}`).join(', '),
            );
          }
          console.log(`open ${rows.length} of ${ids.length}`);
          throw err;
        });
        fake.chaos = null;
        await Promise.all(plays);
        // Let the last notifications land.
        await new Promise((r) => setTimeout(r, 1000));

        const rows = await db
          .selectFrom('transactions')
          .select(['payment_id', 'status', 'channel_txn_id', 'failure_reason', 'utr'])
          .where('payment_id', 'in', ids)
          .execute();
        let refundedAtFake = 0;
        const statuses: Record<string, number> = {};
        for (const r of rows) {
          assert.equal(fake.refundPosts(r.payment_id).length, 1, `one POST for ${r.payment_id}`);
          const made = fake.refundsFor(r.payment_id);
          assert.equal(made.length, 1, `one refund at Setu for ${r.payment_id}`);
          const status = fake.refundStatus(made[0]!);
          statuses[r.status] = (statuses[r.status] ?? 0) + 1;
          if (r.status === 'SUCCESS' || r.status === 'FAILED') {
            assert.equal(r.status, status.toUpperCase(), `${r.payment_id} as Setu has it`);
            assert.equal(r.channel_txn_id, made[0]!.id);
          }
          if (r.status === 'SUCCESS') assert.equal(r.utr, made[0]!.crn);
          if (r.status === 'FAILED')
            assert.match(r.failure_reason ?? '', /^refund-(disabled R21|failed U28): /);
          if (status === 'success') refundedAtFake += made[0]!.amount;
        }
        const ledger = await db
          .selectFrom('ledger_entries')
          .select((eb) => eb.fn.sum<number>('amount').as('total'))
          .where('account', '=', 'external:customer_refunds')
          .where('payment_id', 'in', ids)
          .executeTakeFirstOrThrow();
        assert.equal(
          Number(ledger.total ?? 0),
          refundedAtFake,
          'what the ledger refunded is what Setu refunded',
        );
        const exceptions = await db
          .selectFrom('channel_exceptions')
          .select(['kind'])
          .where('payment_id', 'in', ids)
          .execute();
        console.log(
          `[${kind}] ${ids.length} refunds ${JSON.stringify(statuses)}; calls to the fake ${fake.requests.length}; exceptions ${exceptions.length}`,
        );
      } finally {
        clearInterval(watcher);
        fake.chaos = null;
      }
    });
  });
}
