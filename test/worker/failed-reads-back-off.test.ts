/**
 * Reads that a provider answers 5xx back off (CONTRACT §10, "again with backoff"), on both
 * databases, through the Cashfree document (spec proxy) with CHANNEL_POLL_MS at 1 s: a transfer
 * whose reads fail for 10 s is read at most 6 times in those 10 s, the wait doubling with each
 * failure whichever process reads it; and while Cashfree answers 5xx to every call, its calls back
 * off as a whole (`paygate_channel_backoff_seconds` shows it), one probe a back-off apart, and
 * resume within one poll interval of its recovery.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeCashfree, type CashfreeRequest } from '../support/fake-cashfree.ts';
import { FakeSetu } from '../support/fake-setu.ts';
import { onEachDatabase } from '../support/harness.ts';
import { until, useLive, type LiveGateway } from '../support/live.ts';
import { CASHFREE_SPEC, type SpecProxy, useSpecProxy } from '../support/spec-proxy.ts';
import { payout, posts, reads } from '../support/live-payouts.ts';

const POLL_MS = 1000;
const OUTAGE_MS = 10_000;
const FIVE_HUNDRED = { status: 500, body: { type: 'api_error', code: 'internal_error', message: 'down' } };

/** The back-off the gateway's /metrics shows for Cashfree, in seconds. */
async function backoffShown(l: LiveGateway): Promise<number> {
  const res = await l.gw.app.inject({ method: 'GET', url: '/metrics' });
  const line = res.body
    .split('\n')
    .find((x) => x.startsWith('paygate_channel_backoff_seconds{channel="cashfree"}'));
  assert.ok(line, 'the metric names cashfree');
  return Number(line.split(' ').pop());
}

/** The payout's transfer is with Cashfree and asked about (PROCESSING). */
async function processing(l: LiveGateway, id: string): Promise<void> {
  await until(async () => (await l.status('payout', id)).status === 'PROCESSING', `${id} PROCESSING`);
}

const cashfreeDocument = useSpecProxy(CASHFREE_SPEC);

await onEachDatabase('reads answered 5xx back off', (kind) => {
  let setu: FakeSetu;
  let cashfree: FakeCashfree;
  let proxy: SpecProxy;

  before(async () => {
    setu = await new FakeSetu().start();
    cashfree = await new FakeCashfree().start();
    proxy = await cashfreeDocument.route(cashfree.url);
  });

  after(async () => {
    await setu?.stop();
    await cashfree?.stop();
  });

  describe(`failed reads on ${kind}`, () => {
    const live = useLive(kind, { CHANNEL_POLL_MS: String(POLL_MS), CHANNEL_TIMEOUT_MS: '1000' }, () => ({
      fakes: { setu, cashfree },
      proxies: { cashfree: proxy.url },
    }));
    afterEach(async () => {
      cashfree.chaos = null;
      Object.assign(cashfree, { ending: 'SUCCESS', webhooks: true });
      await live().ledgerOk();
    });

    it('a transfer whose reads fail for 10 s is read at most 6 times in those 10 s, then settles', async () => {
      const l = live();
      Object.assign(cashfree, { ending: 'never', webhooks: false });
      const id = await payout(l, 81);
      await processing(l, id);
      const outage = { from: Date.now(), until: Date.now() + OUTAGE_MS };
      cashfree.chaos = (op) => (op === 'transfer_read' && Date.now() < outage.until ? FIVE_HUNDRED : null);
      await new Promise((r) => setTimeout(r, outage.until - Date.now()));
      const failed = reads(cashfree, id).filter((r) => r.at >= outage.from && r.at < outage.until);
      assert.ok(failed.length >= 2, `read ${failed.length} times while reads failed`);
      assert.ok(failed.length <= 6, `read ${failed.length} times in 10 s: ${gapsOf(failed)}`);
      assert.ok(failed.every((r) => r.answered === 500));
      // The waits double: each at least the one before.
      const gaps = failed.slice(1).map((r, i) => r.at - failed[i]!.at);
      for (let i = 1; i < gaps.length; i++) assert.ok(gaps[i]! >= gaps[i - 1]! * 1.5, gapsOf(failed));
      cashfree.webhooks = true;
      await cashfree.end(id, 'SUCCESS');
      await l.waitStatus('payout', id, 'SUCCESS');
      const row = await l.gw.database.db
        .selectFrom('transactions')
        .select('read_failures')
        .where('payment_id', '=', id)
        .executeTakeFirstOrThrow();
      assert.ok(Number(row.read_failures) >= 2, 'the failures were counted on the transaction');
      assert.equal(posts(cashfree, id).length, 1);
    });

    it('while Cashfree answers 5xx to every call its calls back off as a whole, and resume within a poll interval of its recovery', async () => {
      const l = live();
      Object.assign(cashfree, { ending: 'never', webhooks: false });
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => payout(l, 90 + i)));
      for (const id of ids) await processing(l, id);
      assert.equal(await backoffShown(l), 0);
      let down = true;
      cashfree.chaos = () => (down ? FIVE_HUNDRED : null);
      await until(async () => (await backoffShown(l)) > 0, 'the back-off shown on /metrics', 15_000);
      // Calls that had their turn before the back-off was heard of go out; then, ten transfers read
      // on their own schedules would be read about ten times in these 3 s.
      await new Promise((r) => setTimeout(r, 300));
      const from = Date.now();
      await new Promise((r) => setTimeout(r, 3000));
      const during = cashfree.requests.filter((r) => r.at >= from && r.at < from + 3000);
      assert.ok(during.length <= 4, `${during.length} calls in 3 s of back-off: ${gapsOf(during)}`);
      assert.ok(during.length >= 1, 'probes go on');
      assert.ok((await backoffShown(l)) <= POLL_MS / 1000, 'the back-off is at most a poll interval');

      down = false;
      const recovered = Date.now();
      await until(() => cashfree.requests.some((r) => r.at >= recovered), 'a call after the recovery', 5000);
      const first = cashfree.requests.find((r) => r.at >= recovered)!;
      // One poll interval, and a little for the validating proxy and the worker's round.
      assert.ok(
        first.at - recovered <= POLL_MS + 500,
        `the first call came ${first.at - recovered} ms after`,
      );
      await until(async () => (await backoffShown(l)) === 0, 'the back-off ended', 5000);
      const fresh = await payout(l, 120);
      await until(() => posts(cashfree, fresh).length === 1, 'the new payout sent', 5000);
      cashfree.webhooks = true;
      for (const id of [...ids, fresh]) await cashfree.end(id, 'SUCCESS');
      for (const id of [...ids, fresh]) await l.waitStatus('payout', id, 'SUCCESS');
      for (const id of [...ids, fresh]) assert.equal(cashfree.created.get(id), 1);
    });
  });
});

function gapsOf(calls: CashfreeRequest[]): string {
  return calls
    .slice(1)
    .map((r, i) => `${r.at - calls[i]!.at} ms`)
    .join(', ');
}
