/**
 * Pay-in creation through a channel that opens remotely: the pay-in is recorded first, the
 * channel is called outside any transaction, and its answer recorded after. A repeat of the order
 * while the call is out waits for it and gets its answer (one call, one pay-in); a failed call
 * removes the record and frees the order number; a record whose process stopped mid-call is
 * removed by the worker without a callback.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type {
  Channel,
  FinalOutcome,
  PayinInstructions,
  PayinOpening,
  PayoutState,
} from '../../src/channels/channel.ts';
import { AppError } from '../../src/errors.ts';
import type { Principal } from '../../src/merchants/merchants.service.ts';
import { OPENING_TIMEOUT_MS, PayinService } from '../../src/payins/payins.service.ts';
import { DATABASES } from '../support/databases.ts';
import { clockedWorker, skipFor, useGateway, type Gateway } from '../support/harness.ts';

/** A channel whose every opening waits until the test answers it. */
class RemoteChannel implements Channel {
  readonly name = 'remote-test';
  readonly live = false;
  readonly opensRemotely = true;
  readonly inTransitMs = 0;
  readonly calls: { opening: PayinOpening; answer(i: PayinInstructions): void; fail(e: Error): void }[] = [];
  private waiters: (() => void)[] = [];

  openPayin(opening: PayinOpening): Promise<PayinInstructions> {
    return new Promise((resolve, reject) => {
      this.calls.push({ opening, answer: resolve, fail: reject });
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** Resolves once `n` calls are out. */
  async called(n: number): Promise<void> {
    while (this.calls.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }

  async payinOutcome(): Promise<null> {
    return null;
  }

  async closePayin(): Promise<FinalOutcome> {
    return { status: 'FAILED', utr: '', channelTxnId: '' };
  }

  async submitPayout(): Promise<PayoutState> {
    throw new Error('not used');
  }

  async readPayout(): Promise<null> {
    return null;
  }

  pollDelayMs(): number {
    return 1000;
  }
}

const answer = (p: PayinOpening): PayinInstructions => ({
  channelTxnId: `CH-${p.paymentId.slice(0, 6)}`,
  payeeVpa: 'shop@remote',
  payeeName: 'Remote Shop',
});

for (const kind of DATABASES) {
  describe(`pay-ins through a remote channel on ${kind}`, { skip: await skipFor(kind) }, () => {
    const gw = useGateway(kind);

    async function setup(
      g: Gateway,
    ): Promise<{ channel: RemoteChannel; payins: PayinService; principal: Principal }> {
      const channel = new RemoteChannel();
      const payins = new PayinService(g.database, g.config, () => channel);
      const principal = await g.paygate.services.merchants.authenticate(g.merchant.api_key);
      assert.ok(principal);
      return { channel, payins, principal };
    }

    const rowsOf = (g: Gateway, orderNo: string) =>
      g.database.db
        .selectFrom('transactions')
        .select(['payment_id', 'response_json', 'channel_txn_id', 'status'])
        .where('merchant_order_no', '=', orderNo)
        .execute();

    it('records first, answers once, and a repeat waits for that answer', async () => {
      const g = gw();
      const { channel, payins, principal } = await setup(g);
      const req = { money: { amount: 250 }, merchant_order_no: 'rf-1' };
      const first = payins.create(principal, 'offsite', req);
      await channel.called(1);
      const [opening] = await rowsOf(g, 'rf-1');
      assert.equal(opening?.response_json, '', 'recorded before the channel answered');
      const repeat = payins.create(principal, 'offsite', req);
      // Another request for the same order number is refused at once, not made to wait.
      await assert.rejects(
        payins.create(principal, 'offsite', { ...req, money: { amount: 251 } }),
        (e: AppError) => e.errorCode === 'DUPLICATE_ORDER_NO',
      );
      channel.calls[0]!.answer(answer(channel.calls[0]!.opening));
      const [created, replayed] = await Promise.all([first, repeat]);
      assert.equal(created.replayed, false);
      assert.equal(replayed.replayed, true);
      const body = created.body as { payment_id: string; data: { cashier_string: string } };
      assert.deepEqual(JSON.parse(replayed.body as string), body, 'the repeat gets the same answer');
      assert.match(body.data.cashier_string, /pa=shop%40remote/);
      assert.equal(channel.calls.length, 1, 'one call to the channel');
      const rows = await rowsOf(g, 'rf-1');
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.payment_id, body.payment_id);
      assert.equal(rows[0]!.channel_txn_id, `CH-${body.payment_id.slice(0, 6)}`);
      assert.notEqual(rows[0]!.response_json, '');
      const status = await g.post('/payments/payin_status', { payment_id: body.payment_id });
      assert.equal(status.status, 200);
      assert.equal(status.body.status, 'PENDING');
    });

    it('removes the record when the channel fails, and the order number can be used again', async () => {
      const g = gw();
      const { channel, payins, principal } = await setup(g);
      const req = { money: { amount: 99.5 }, merchant_order_no: 'rf-2' };
      const first = payins.create(principal, 'onsite', req);
      await channel.called(1);
      const repeat = payins.create(principal, 'onsite', req);
      // Time for the repeat to find the order opening and start waiting on it.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(channel.calls.length, 1, 'the repeat waits instead of calling the channel');
      channel.calls[0]!.fail(new AppError('CHANNEL_UNAVAILABLE', 'The payment channel is unavailable'));
      await assert.rejects(first, (e: AppError) => e.errorCode === 'CHANNEL_UNAVAILABLE');
      await assert.rejects(repeat, (e: AppError) => e.errorCode === 'SERVICE_UNAVAILABLE');
      assert.deepEqual(await rowsOf(g, 'rf-2'), [], 'nothing left behind');

      const again = payins.create(principal, 'onsite', req);
      await channel.called(2);
      channel.calls[1]!.answer(answer(channel.calls[1]!.opening));
      const created = await again;
      assert.equal(created.replayed, false);
      assert.equal((await rowsOf(g, 'rf-2')).length, 1);
    });

    it('leaves a record whose process stopped mid-call to the worker, which removes it without a callback', async () => {
      const g = gw();
      const { channel, payins, principal } = await setup(g);
      const abandoned = payins.create(principal, 'p2p', {
        money: { amount: 10 },
        merchant_order_no: 'rf-3',
        callback_url: 'https://merchant.example/cb',
      });
      await channel.called(1);
      const [row] = await rowsOf(g, 'rf-3');
      assert.ok(row);
      const later = () => Date.now() + OPENING_TIMEOUT_MS + 1000;
      const worker = clockedWorker(g, {
        now: later,
        leaseMs: 30_000,
        pollMs: 1000,
        channels: () => undefined,
      });
      assert.ok((await worker.drain()) >= 1);
      assert.deepEqual(await rowsOf(g, 'rf-3'), []);
      const deliveries = await g.database.db
        .selectFrom('callback_deliveries')
        .select('id')
        .where('payment_id', '=', row.payment_id)
        .execute();
      assert.deepEqual(deliveries, [], 'no callback for a pay-in nobody was given');
      // The call answering after all hands nothing out: its record is gone.
      channel.calls[0]!.answer(answer(channel.calls[0]!.opening));
      await assert.rejects(abandoned, (e: AppError) => e.errorCode === 'CHANNEL_UNAVAILABLE');
      assert.deepEqual(await rowsOf(g, 'rf-3'), []);
    });
  });
}
