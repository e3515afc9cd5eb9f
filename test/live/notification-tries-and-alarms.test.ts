/**
 * The bounds of intake, on both databases, on a clock the test turns: a stored notification that
 * cannot be applied is tried 5 times, then `failed` with one `notification_failed` exception, never
 * retried forever; failed signatures open one `signature_failures` exception when more than 60 come
 * within a minute at an endpoint (none for 60, none for failures spread wider), one while it is
 * open, and a new one after it was resolved; a channel is silent only while its pay-ins or payouts
 * wait past NOTIFICATION_SILENCE_S, with one `channel_silent` exception while open.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SetuNotifications } from '../../src/channels/setu/setu.notifications.ts';
import type { ChannelOutcomes } from '../../src/live/outcomes.ts';
import { APPLY_TRIES, NotificationService } from '../../src/live/notifications.service.ts';
import { SignatureFailures } from '../../src/live/signature-failures.ts';
import { ChannelSilence } from '../../src/live/silence.ts';
import { DATABASES } from '../support/databases.ts';
import { fakeSetuSignature } from '../support/fake-setu.ts';
import { skipFor, startGateway, type Gateway } from '../support/harness.ts';

const SECRET = 'setu-webhook-secret-for-tries';

for (const kind of DATABASES) {
  describe(`notification tries and alarms on ${kind}`, { skip: await skipFor(kind) }, () => {
    let gw: Gateway;
    let clock = Date.UTC(2026, 10, 28, 6, 0, 0);
    const now = () => clock;
    before(async () => {
      gw = await startGateway(kind);
    });
    after(async () => {
      await gw?.close();
    });

    const exceptions = (k: string) =>
      gw.database.db
        .selectFrom('channel_exceptions')
        .select(['id', 'provider', 'reference', 'detail', 'resolved_at'])
        .where('kind', '=', k)
        .orderBy('id')
        .execute();
    const resolve = (id: number) =>
      gw.paygate.services.exceptions.resolve(id, { action: 'dismiss', note: 'seen', actor: 'cli' });

    it(`fails a notification after ${APPLY_TRIES} failed tries with one notification_failed exception, and tries it no more`, async () => {
      // Outcomes that cannot be applied (a database that refuses what is written, a bug): every try fails.
      const refusing = {
        within: () => Promise.reject(new Error('cannot apply')),
      } as unknown as ChannelOutcomes;
      const service = new NotificationService(gw.database, [new SetuNotifications(SECRET)], refusing, {
        now,
        retryMs: 1000,
      });
      const raw = Buffer.from(JSON.stringify({ eventId: `stuck-${kind}`, eventType: 'payment.initiated' }));
      const answer = await service.receive('setu', raw, {
        'x-setu-signature': fakeSetuSignature(raw.toString(), SECRET),
      });
      assert.deepEqual(answer, { duplicate: false }, 'stored and answered, to be applied later');
      const row = () =>
        gw.database.db
          .selectFrom('channel_events')
          .select(['id', 'state', 'apply_attempts'])
          .where('event_id', '=', `stuck-${kind}`)
          .executeTakeFirstOrThrow();
      assert.equal((await row()).state, 'pending');
      let claimed = 0;
      for (let i = 0; i < APPLY_TRIES + 3; i++) {
        clock += 1000;
        claimed += await service.applyDue(10);
      }
      assert.equal(claimed, APPLY_TRIES, 'tried exactly that many times');
      const stuck = await row();
      assert.equal(stuck.state, 'failed');
      assert.equal(Number(stuck.apply_attempts), APPLY_TRIES);
      const failed = await exceptions('notification_failed');
      assert.equal(failed.length, 1);
      assert.equal(failed[0]!.reference, `event ${stuck.id}`);
      assert.match(failed[0]!.detail, /could not be applied after 5 tries/);
    });

    it('opens signature_failures for more than 60 failures within a minute, one while open, a new one after it was resolved', async () => {
      const failures = new SignatureFailures(gw.database.db, now);
      const fail = async (n: number, stepMs: number) => {
        for (let i = 0; i < n; i++) {
          clock += stepMs;
          await failures.failed('setu', '10.0.0.1');
        }
      };
      // 120 failures, each a little over a second after the last: never 61 within a minute.
      await fail(120, 1001);
      assert.deepEqual(await exceptions('signature_failures'), []);
      clock += 120_000;
      await fail(60, 100);
      assert.deepEqual(await exceptions('signature_failures'), [], 'sixty is the limit, not over it');
      await fail(1, 100);
      assert.equal((await exceptions('signature_failures')).length, 1, 'the 61st within a minute');
      await fail(500, 10);
      clock += 120_000;
      await fail(200, 10);
      const open = await exceptions('signature_failures');
      assert.equal(open.length, 1, 'one while open');
      assert.match(open[0]!.detail, /10\.0\.0\.1/);
      await resolve(open[0]!.id);
      clock += 120_000;
      await fail(61, 10);
      const all = await exceptions('signature_failures');
      assert.equal(all.length, 2, 'a new one after it was resolved');
      assert.equal(all[1]!.resolved_at, null);
      // Another endpoint is counted on its own.
      await failures.failed('cashfree', '10.0.0.1');
      assert.equal(
        (await exceptions('signature_failures')).filter((e) => e.provider === 'cashfree').length,
        0,
      );
    });

    it('is silent only while pay-ins or payouts wait past NOTIFICATION_SILENCE_S; one channel_silent while open', async () => {
      const silence = new ChannelSilence(gw.database.db, ['quietpay'], 60_000, now);
      const db = gw.database.db;
      assert.deepEqual(await silence.read(), [
        { channel: 'quietpay', lastAt: null, silenceS: null, silent: false },
      ]);
      await db
        .insertInto('channel_events')
        .values({
          provider: 'quietpay',
          event_id: `last-${kind}`,
          payment_id: null,
          reference: '',
          type: 'x',
          body: '{}',
          raw_base64: null,
          state: 'applied',
          next_action_at: null,
          lease_until: null,
          received_at: clock,
          applied_at: clock,
        })
        .execute();
      clock += 3_600_000;
      // An hour without notifications, but nothing waits: not silent.
      assert.deepEqual(await silence.read(), [
        { channel: 'quietpay', lastAt: clock - 3_600_000, silenceS: 3600, silent: false },
      ]);
      assert.equal(await silence.check(), 0);
      const created = clock;
      await db
        .insertInto('transactions')
        .values({
          ...(await sandboxPayin(gw)),
          payment_id: `pay_quiet${kind}000000000000`.slice(0, 28),
          merchant_order_no: `quiet-${kind}`,
          channel: 'quietpay',
          kind: 'payout',
          flow: 'payout',
          status: 'PROCESSING',
          created_at: created,
          finalized_at: null,
        })
        .execute();
      clock += 59_000;
      assert.equal((await silence.read())[0]!.silent, false, 'the payout waits less than the setting');
      clock += 1_000;
      assert.equal((await silence.read())[0]!.silent, true);
      assert.equal(await silence.check(), 1);
      clock += 1_000;
      assert.equal(await silence.check(), 0, 'one while open');
      const open = await exceptions('channel_silent');
      assert.equal(open.length, 1);
      assert.equal(open[0]!.provider, 'quietpay');
    });
  });
}

/** A row of the transactions table to copy: a sandbox pay-in of the gateway's merchant. */
async function sandboxPayin(gw: Gateway) {
  const res = await gw.post('/payments/onsite/payin', {
    money: { amount: 1 },
    merchant_order_no: 'row-to-copy',
  });
  assert.equal(res.status, 200, res.text);
  return gw.database.db
    .selectFrom('transactions')
    .selectAll()
    .where('payment_id', '=', res.body.payment_id)
    .executeTakeFirstOrThrow();
}
