/**
 * The per-provider call limit (CASHFREE_MAX_RPS) and the pause a 429 asks for, against the fake
 * Cashfree over real HTTP, on both databases: calls are spaced to the limit, a 429 holds every
 * call back for its `Retry-After` or `x-ratelimit-retry`, and the payouts behind them still go out,
 * each exactly once. A 429 is not in Cashfree's document: no spec proxy here.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { retryAfterMs, Throttle } from '../../../src/channels/throttle.ts';
import { DATABASES } from '../../support/databases.ts';
import { skipFor } from '../../support/harness.ts';
import { RECEIVER, useLive, type LiveGateway } from '../../support/live.ts';

let n = 0;
async function payout(live: LiveGateway, amount: number) {
  const res = await live.post('/payments/payout', {
    money: { amount },
    merchant_order_no: `thr-${process.pid}-${++n}`,
    receiver: RECEIVER,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.payment_id as string;
}

describe('retryAfterMs', () => {
  it('reads Retry-After in seconds or as a date, then x-ratelimit-retry, else nothing', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    assert.equal(retryAfterMs({ 'retry-after': '3' }, now), 3000);
    assert.equal(retryAfterMs({ 'retry-after': 'Wed, 25 Nov 2026 10:00:07 GMT' }, now), 7000);
    assert.equal(retryAfterMs({ 'x-ratelimit-retry': '4' }, now), 4000);
    assert.equal(retryAfterMs({ 'retry-after': '2', 'x-ratelimit-retry': '9' }, now), 2000);
    assert.equal(retryAfterMs({ 'x-ratelimit-retry': '0' }, now), null);
    assert.equal(retryAfterMs({}, now), null);
  });

  it('backs off 1 s, 2 s, 4 s when a 429 says nothing, and from 1 s again after another answer', () => {
    let now = 0;
    const t = new Throttle(10, () => now);
    const pausedFor = () => (t as unknown as { pausedUntil: number }).pausedUntil - now;
    t.limited(null);
    assert.equal(pausedFor(), 1000);
    t.limited(null);
    assert.equal(pausedFor(), 2000);
    t.limited(null);
    assert.equal(pausedFor(), 4000);
    now += 10_000;
    t.passed();
    t.limited(null);
    assert.equal(pausedFor(), 1000);
  });

  it('spaces calls evenly: callers in bursts of a second’s worth start one every 10 ms, never more than the limit in any second', async () => {
    const clock = new FakeClock();
    const started = await bursts(new Throttle(100, clock.now, clock.sleep), clock);
    assert.equal(started.length, 301);
    const gaps = started.slice(1).map((at, i) => at - started[i]!);
    assert.deepEqual(
      [...new Set(gaps)],
      [10],
      'each call starts a hundredth of a second after the one before',
    );
    assertLimit(started, 100);
  });

  it('a call whose timer fires late does not let the calls after it crowd a second past the limit', async () => {
    // Every fifth wake-up comes 30 ms late, as on a busy event loop.
    const clock = new FakeClock((n) => (n % 5 === 0 ? 30 : 0));
    const started = await bursts(new Throttle(100, clock.now, clock.sleep), clock);
    assert.equal(started.length, 301);
    assertLimit(started, 100);
  });
});

/**
 * A clock for the throttle that moves only when every call waiting on it has done what it can:
 * `run` lets the pending continuations run, then wakes the earliest sleeper (`lateMs` after its
 * time, for the nth wake-up), until nobody sleeps.
 */
class FakeClock {
  private at = 0;
  private wakes = 0;
  private sleepers: { until: number; wake: () => void }[] = [];

  constructor(private readonly lateMs: (n: number) => number = () => 0) {}

  readonly now = () => this.at;

  readonly sleep = (ms: number) =>
    new Promise<void>((wake) => this.sleepers.push({ until: this.at + ms, wake }));

  async run(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.sleepers.length === 0) return;
      this.sleepers.sort((a, b) => a.until - b.until);
      const next = this.sleepers.shift()!;
      this.at = Math.max(this.at, next.until + this.lateMs(++this.wakes));
      next.wake();
    }
  }
}

/** One call, then three bursts of 100 callers 300 ms apart; the times the calls started, in order. */
async function bursts(t: Throttle, clock: FakeClock): Promise<number[]> {
  const started: number[] = [];
  const calls: Promise<void>[] = [t.take().then(() => void started.push(clock.now()))];
  for (let burst = 0; burst < 3; burst++)
    calls.push(
      clock.sleep(300 * burst).then(() => {
        for (let i = 0; i < 100; i++) calls.push(t.take().then(() => void started.push(clock.now())));
      }),
    );
  await clock.run();
  await Promise.all(calls);
  return started.sort((a, b) => a - b);
}

/** No second, measured from any call's start, holds more than `limit` starts. */
function assertLimit(started: number[], limit: number): void {
  for (let i = 0; i + limit < started.length; i++)
    assert.ok(
      started[i + limit]! - started[i]! >= 1000,
      `calls ${i}..${i + limit} started within ${started[i + limit]! - started[i]!} ms`,
    );
}

for (const kind of DATABASES) {
  describe(`Cashfree calls throttled on ${kind}`, { skip: await skipFor(kind) }, () => {
    const live = useLive(kind, { CASHFREE_MAX_RPS: '5' });
    afterEach(async () => live().ledgerOk());

    it('starts at most CASHFREE_MAX_RPS calls in any second, and every payout goes out once', async () => {
      const l = live();
      const from = l.cashfree.requests.length;
      const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => payout(l, 10 + i)));
      for (const id of ids) await l.waitStatus('payout', id, 'SUCCESS', 30_000);
      const at = l.cashfree.requests.slice(from).map((r) => r.at);
      assert.ok(at.length >= 20);
      // Any eleven calls in a row span at least two seconds (a tenth allowed for timers and arrival jitter on a shared machine). The first
      // burst is left out: its calls open new connections, and arrive late by as much as that takes.
      for (let i = 5; i + 10 < at.length; i++)
        assert.ok(at[i + 10]! - at[i]! >= 1800, `calls ${i}..${i + 10} within ${at[i + 10]! - at[i]!} ms`);
      for (const id of ids) assert.equal(l.cashfree.created.get(id), 1);
    });

    for (const header of ['retry-after', 'x-ratelimit-retry'] as const) {
      it(`pauses every call for the ${header} of a 429, then sends the payout once`, async () => {
        const l = live();
        l.cashfree.fail('transfer_create', {
          status: 429,
          body: { type: 'rate_limit_error', code: 'too_many_requests', message: 'slow down' },
          headers: { [header]: '2' },
        });
        const from = l.cashfree.requests.length;
        const id = await payout(l, 31);
        await l.waitStatus('payout', id, 'SUCCESS', 20_000);
        const [limited, next] = l.cashfree.requests.slice(from);
        assert.ok(limited && next);
        assert.ok(
          next.at - limited.at >= 1990,
          `the next call came ${next.at - limited.at} ms after the 429`,
        );
        const posts = l.cashfree.requests.filter((r) => r.method === 'POST' && r.body?.transfer_id === id);
        assert.equal(posts.length, 2);
        assert.equal(l.cashfree.created.get(id), 1);
      });
    }
  });
}

for (const kind of DATABASES) {
  describe(`payouts queued past their claim on ${kind}`, { skip: await skipFor(kind) }, () => {
    // A claim of 3 × 250 ms + 1 s, sent only in its first 1.5 s: three calls' turns at 2 a second.
    const live = useLive(kind, { CASHFREE_MAX_RPS: '2', CHANNEL_TIMEOUT_MS: '250' });
    afterEach(async () => live().ledgerOk());

    it('go out at the limit once a 429 pause is over, not after a failing channel’s backoff', async () => {
      const l = live();
      l.cashfree.fail('transfer_create', {
        status: 429,
        body: { type: 'rate_limit_error', code: 'too_many_requests', message: 'slow down' },
        headers: { 'retry-after': '4' },
      });
      const from = l.cashfree.requests.length;
      const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => payout(l, 40 + i)));
      for (const id of ids) await l.waitStatus('payout', id, 'SUCCESS', 30_000);
      const posts = l.cashfree.requests.slice(from).filter((r) => r.method === 'POST' && r.body?.transfer_id);
      // The 429, then the twelve sends; none of them waited on a payout's age (a second, two, three …).
      assert.equal(posts.length, 13);
      const sends = posts.slice(1).map((r) => r.at);
      assert.ok(
        sends[0]! - posts[0]!.at >= 3990,
        `the first send came ${sends[0]! - posts[0]!.at} ms after the 429`,
      );
      for (let i = 1; i < sends.length; i++)
        assert.ok(
          sends[i]! - sends[i - 1]! <= 1500,
          `send ${i} came ${sends[i]! - sends[i - 1]!} ms after the one before`,
        );
      for (const id of ids) assert.equal(l.cashfree.created.get(id), 1);
    });
  });
}
