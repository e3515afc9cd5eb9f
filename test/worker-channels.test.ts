/**
 * The worker claims each channel's due transactions on its own: a backlog on one channel (pay-ins
 * waiting on a provider's rate limit, here calls that do not answer) never holds back another
 * channel's payouts, and no channel has more than 100 of its rows in hand at once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Channel } from '../src/channels/channel.ts';
import { insertTransactions } from '../src/transactions/transactions.repository.ts';
import { DATABASES } from './support/databases.ts';
import { clockedWorker, skipFor, useGateway } from './support/harness.ts';
import { newPayin } from './support/hot-paths.ts';
import { RECEIVER, until } from './support/live.ts';

const BACKLOG = 250;

for (const kind of DATABASES) {
  describe(`the worker's claims by channel on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    it('a payout due after 250 stuck pay-ins of another channel is sent while they wait', async () => {
      const g = gw();
      const now = Date.now();
      // Pay-ins of the "slow" channel, open and due well before the payout: every call to ask
      // about one waits until the test lets them all answer (nothing paid).
      await insertTransactions(
        g.database.db,
        Array.from({ length: BACKLOG }, (_, i) => ({
          ...newPayin({
            merchantId: g.merchant.merchant_id,
            orderNo: `slow-${i}`,
            paymentId: `slow${String(i).padStart(28, '0')}`,
            keyHash: '',
            now: now - 60_000,
          }),
          channel: 'slow',
          expires_at: now + 3_600_000,
        })),
      );
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      let asked = 0;
      const sandbox = g.paygate.services.channel('sandbox')!;
      const slow: Channel = Object.assign(Object.create(sandbox) as Channel, {
        name: 'slow',
        async payinOutcome() {
          asked++;
          await answered;
          return null;
        },
      });
      await g.paygate.services.wallets.topUp(g.merchant.merchant_id, 'INR', 100_000);
      const created = await g.post('/payments/payout', {
        money: { amount: 10 },
        merchant_order_no: 'behind-the-backlog',
        receiver: RECEIVER,
      });
      assert.equal(created.status, 200, created.text);
      const worker = clockedWorker(g, {
        now: Date.now,
        leaseMs: 60_000,
        pollMs: 200,
        channels: (name) => (name === 'slow' ? slow : g.paygate.services.channel(name)),
        channelNames: ['slow', 'sandbox'],
      });
      worker.start();
      try {
        const status = async () =>
          (
            await g.database.db
              .selectFrom('transactions')
              .select('status')
              .where('payment_id', '=', created.body.payment_id as string)
              .executeTakeFirstOrThrow()
          ).status;
        await until(async () => (await status()) === 'PROCESSING', 'the payout sent');
        assert.equal(asked, 100, 'the slow channel has 100 of its rows in hand, no more');
        const leased = await g.database.db
          .selectFrom('transactions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('channel', '=', 'slow')
          .where('lease_until', 'is not', null)
          .executeTakeFirstOrThrow();
        assert.equal(Number(leased.n), 100);
        answer();
        await until(() => asked >= BACKLOG, 'the rest of the backlog asked about, once the first answered');
      } finally {
        answer();
        await worker.stop();
      }
    });
  });
}
