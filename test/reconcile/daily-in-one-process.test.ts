/**
 * The daily reconciliation at RECONCILE_AT in one process of a cluster, on both databases: two
 * processes (each its own database connection, channels and lease holder) looking at the same
 * moment run each channel once; nothing runs before the time; a holder that died mid-run leaves the
 * channel to the next process once its lease lapses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATABASES } from '../support/databases.ts';
import { skipFor } from '../support/harness.ts';
import { RECEIVER, useLive, type LiveGateway } from '../support/live.ts';
import { clusterProcess } from '../support/reconcile-cluster.ts';
import { assertLeasesDone } from '../support/reconcile-day.ts';
import { loadConfig } from '../../src/config.ts';
import { istDate, istTimeOn } from '../../src/ist.ts';

const AT = 2 * 60;
let n = 0;

const processOf = (l: LiveGateway, clock: { now: number }, holder: string) =>
  clusterProcess(l, clock, holder, AT);

async function scheduledRuns(l: LiveGateway, date: string) {
  const rows = await l.gw.database.db
    .selectFrom('reconcile_runs')
    .select(['channel', 'checked', 'finished_at'])
    .where('date', '=', date)
    .where('trigger', '=', 'schedule')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ channel: r.channel, checked: Number(r.checked), done: r.finished_at !== null }));
}

for (const kind of DATABASES) {
  describe(`scheduled reconcile on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind);

    it('runs each channel once across two processes at RECONCILE_AT, and not before it', async () => {
      const l = live();
      const res = await l.post('/payments/payout', {
        money: { amount: 310 },
        merchant_order_no: `sched-${process.pid}-${++n}`,
        receiver: RECEIVER,
      });
      assert.equal(res.status, 200, res.text);
      await l.waitStatus('payout', res.body.payment_id, 'SUCCESS');
      // Tomorrow in IST, so that "yesterday" is today, the day of the payout.
      const today = istDate(Date.now());
      const tomorrow = istDate(Date.now() + 86_400_000);
      const clock = { now: istTimeOn(tomorrow, AT) - 60_000 };
      const a = processOf(l, clock, 'process-a');
      const b = processOf(l, clock, 'process-b');
      try {
        await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
        assert.deepEqual(await scheduledRuns(l, today), [], 'nothing runs before RECONCILE_AT');
        clock.now = istTimeOn(tomorrow, AT) + 1;
        await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
        await Promise.all([a.scheduler.tick(), b.scheduler.tick()]);
        const runs = await scheduledRuns(l, today);
        assert.deepEqual(
          runs.map((r) => r.channel).sort(),
          ['cashfree', 'setu'],
          'one run per channel in the cluster',
        );
        assert.ok(runs.every((r) => r.done));
        assert.ok(runs.find((r) => r.channel === 'cashfree')!.checked >= 1);
        await assertLeasesDone(l.gw.database, today);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('leaves a dead holder’s run to the next process once its lease lapses', async () => {
      const l = live();
      const date = '2026-01-15';
      const clock = { now: istTimeOn('2026-01-16', AT) + 1 };
      // A process took the day's Cashfree run and died: its lease is neither renewed nor done.
      await l.gw.database.db
        .insertInto('reconcile_leases')
        .values({ date, channel: 'cashfree', holder: 'dead', lease_until: clock.now + 30_000, done_at: null })
        .execute();
      const next = processOf(l, clock, 'process-next');
      try {
        await next.scheduler.tick();
        assert.deepEqual(
          (await scheduledRuns(l, date)).map((r) => r.channel),
          ['setu'],
          'the held channel waits for its lease',
        );
        clock.now += 31_000;
        await next.scheduler.tick();
        assert.deepEqual(
          (await scheduledRuns(l, date)).map((r) => r.channel),
          ['setu', 'cashfree'],
        );
        const lease = await l.gw.database.db
          .selectFrom('reconcile_leases')
          .select(['holder', 'done_at'])
          .where('date', '=', date)
          .where('channel', '=', 'cashfree')
          .executeTakeFirstOrThrow();
        assert.equal(lease.holder, 'process-next');
        assert.notEqual(lease.done_at, null);
      } finally {
        await next.close();
      }
    });
  });
}

describe('RECONCILE_AT', () => {
  it('is an IST time of day as HH:MM, 02:00 by default; anything else stops start-up naming it', () => {
    assert.equal(loadConfig({}).reconcileAtMinutes, 120);
    assert.equal(loadConfig({ RECONCILE_AT: '23:59' }).reconcileAtMinutes, 1439);
    for (const bad of ['24:00', '2:00', '02:60', 'noon', '02:00:00'])
      assert.throws(
        () => loadConfig({ RECONCILE_AT: bad }),
        /RECONCILE_AT must be a time of day in IST as HH:MM/,
        bad,
      );
  });
});
