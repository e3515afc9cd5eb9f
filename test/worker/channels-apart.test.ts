/**
 * The worker claims each channel's due transactions on its own: a backlog on one channel (pay-ins
 * waiting on a provider's rate limit, here calls that do not answer) never holds back another
 * channel's payouts, and no channel has more than 100 of its rows in hand at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Channel } from '../../src/channels/channel.ts';
import { insertTransactions } from '../../src/transactions/transactions.repository.ts';
import type { TransactionWorker } from '../../src/worker/transaction.worker.ts';
import { DATABASES } from '../support/databases.ts';
import { clockedWorker, skipFor, useGateway, type Gateway } from '../support/harness.ts';
import { newPayin } from '../support/hot-paths.ts';
import { RECEIVER, until } from '../support/live.ts';
import { paidMerchant, refund } from '../support/refunds.ts';

const BACKLOG = 250;
/** Longer than any wait below: only a wake-up can end the worker's wait in time. */
const POLL_MS = 10_000;
const LATE_MS = 300;

/**
 * 250 open pay-ins of a channel "slow…", due a minute ago, and a worker that claims it and the
 * sandbox: every call that asks "slow…" about a pay-in waits until `answer()` (then: nothing paid).
 */
async function slowBacklog(g: Gateway, tag: string) {
  const now = Date.now();
  await insertTransactions(
    g.database.db,
    Array.from({ length: BACKLOG }, (_, i) => ({
      ...newPayin({
        merchantId: g.merchant.merchant_id,
        orderNo: `${tag}-${i}`,
        paymentId: `${tag}${String(i).padStart(32 - tag.length, '0')}`,
        keyHash: '',
        now: now - 60_000,
      }),
      channel: `slow${tag}`,
      expires_at: now + 3_600_000,
    })),
  );
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const state = { asked: 0, askedLate: 0 };
  const sandbox = g.paygate.services.channel('sandbox')!;
  const slow: Channel = Object.assign(Object.create(sandbox) as Channel, {
    name: `slow${tag}`,
    async payinOutcome() {
      state.asked++;
      await answered;
      return null;
    },
  });
  // A third channel, whose one pay-in falls due LATE_MS after the others: no wake-up announces it.
  await insertTransactions(g.database.db, [
    {
      ...newPayin({
        merchantId: g.merchant.merchant_id,
        orderNo: `${tag}-late`,
        paymentId: `late${tag}${'0'.repeat(28 - tag.length)}`,
        keyHash: '',
        now,
      }),
      channel: `late${tag}`,
      next_action_at: now + LATE_MS,
      expires_at: now + 3_600_000,
    },
  ]);
  const late: Channel = Object.assign(Object.create(sandbox) as Channel, {
    name: `late${tag}`,
    async payinOutcome() {
      state.askedLate++;
      return null;
    },
  });
  const byName = new Map([slow, late].map((c) => [c.name, c]));
  const worker: TransactionWorker = clockedWorker(g, {
    now: Date.now,
    leaseMs: 60_000,
    pollMs: POLL_MS,
    channels: (name) => byName.get(name) ?? g.paygate.services.channel(name),
    channelNames: [slow.name, 'sandbox', late.name],
  });
  return { worker, state, answer };
}

async function leasedSlow(g: Gateway, tag: string): Promise<number> {
  const row = await g.database.db
    .selectFrom('transactions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('channel', '=', `slow${tag}`)
    .where('lease_until', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const kind of DATABASES) {
  describe(`the worker's claims by channel on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('a payout created while 250 pay-ins of another channel wait is sent at once', async () => {
      const g = gw();
      const { worker, state, answer } = await slowBacklog(g, 'sent');
      await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 100_000);
      worker.start();
      try {
        await until(() => state.asked === 100, 'the slow channel asked about its first pay-ins');
        const created = await g.post('/payments/payout', {
          money: { amount: 10 },
          merchant_order_no: 'behind-the-backlog',
          receiver: RECEIVER,
        });
        assert.equal(created.status, 200, created.text);
        // What the gateway's own worker is told of a new payout (`onCreated`).
        worker.created();
        const status = async () =>
          (
            await g.database.db
              .selectFrom('transactions')
              .select('status')
              .where('payment_id', '=', created.body.payment_id as string)
              .executeTakeFirstOrThrow()
          ).status;
        await until(async () => (await status()) === 'PROCESSING', 'the payout sent', POLL_MS / 4);
        assert.equal(state.asked, 100, 'the slow channel has 100 of its rows in hand, no more');
        assert.equal(await leasedSlow(g, 'sent'), 100);
        answer();
        await until(() => state.asked >= BACKLOG, 'the rest of the backlog, once the first answered');
      } finally {
        answer();
        await worker.stop();
      }
    });

    it('a worker stopped while a channel is full claims nothing more', async () => {
      const g = gw();
      const { worker, state, answer } = await slowBacklog(g, 'stop');
      worker.start();
      await until(() => state.asked === 100, 'the slow channel asked about its first pay-ins');
      // The late pay-in is due now; the worker waits for room or its poll, and is stopped.
      await new Promise((resolve) => setTimeout(resolve, LATE_MS + 100));
      assert.equal(state.askedLate, 0);
      const stopped = worker.stop();
      answer();
      await stopped;
      assert.equal(state.asked, 100);
      assert.equal(state.askedLate, 0, 'the late pay-in, due when the worker stopped, was not claimed');
      assert.equal(await leasedSlow(g, 'stop'), 0, 'the rows it had in hand were given back when answered');
    });
  });
}

for (const kind of DATABASES) {
  describe(`polls with no outcome yet on ${kind}`, { skip: await skipFor(kind) }, () => {
    // Sandbox payouts and refunds settle an hour after they are sent: every read before is "not yet".
    const gw = useGateway(kind, { env: { SANDBOX_PAYOUT_SETTLE_MS: '3600000' } });

    it('a PROCESSING payout and refund read as not final are given back, due at their next poll', async () => {
      const g = gw();
      const m = await paidMerchant(g, 100_000);
      const payout = await m.post('/payments/payout', {
        money: { amount: 10 },
        merchant_order_no: 'poll-again',
        receiver: RECEIVER,
      });
      assert.equal(payout.status, 200, payout.text);
      const refunded = await m.post('/payments/refund', refund(await m.paidIn(100), 5));
      assert.equal(refunded.status, 200, refunded.text);
      const ids = [payout.body.payment_id as string, refunded.body.refund_id as string];
      let now = Date.now();
      const worker = clockedWorker(g, { now: () => now, leaseMs: 60_000, pollMs: 1000 });
      const rows = () =>
        g.database.db
          .selectFrom('transactions')
          .select(['payment_id', 'status', 'next_action_at', 'lease_until'])
          .where('payment_id', 'in', ids)
          .orderBy('payment_id')
          .execute();
      await worker.drain();
      const sent = await rows();
      assert.deepEqual(
        sent.map((r) => r.status),
        ['PROCESSING', 'PROCESSING'],
      );
      // Each is read at its next poll, and given back to be read at the one after.
      now = Math.max(...sent.map((r) => r.next_action_at!)) + 1;
      assert.ok((await worker.drain()) >= 2);
      for (const r of await rows()) {
        assert.equal(r.status, 'PROCESSING', r.payment_id);
        assert.equal(r.lease_until, null, `${r.payment_id} given back`);
        assert.ok(r.next_action_at! > now, `${r.payment_id} due again after this read`);
      }
    });
  });
}
