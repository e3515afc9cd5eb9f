/**
 * When a PENDING payout that a read did not find may be sent again (`notFoundWait`): two not-found
 * reads CHANNEL_POLL_MS apart, both made the channel's in-transit time after a send that got no answer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLAIM_EXPIRED } from '../../src/channels/channel.ts';
import { IN_TRANSIT_MS } from '../../src/channels/channel-http.ts';
import { notFoundWait, retryDelay } from '../../src/worker/worker-support.ts';

const GAP = 300;
const CREATED = 1_000_000;

describe('notFoundWait', () => {
  it('without an unanswered send, two not-found reads CHANNEL_POLL_MS apart allow a send', () => {
    const row = { created_at: CREATED, updated_at: CREATED, not_found_at: null };
    assert.deepEqual(notFoundWait(row, CREATED + 5000, GAP, IN_TRANSIT_MS), {
      at: CREATED + 5300,
      notFoundAt: CREATED + 5000,
    });
    const seen = { ...row, not_found_at: CREATED + 5000 };
    assert.deepEqual(notFoundWait(seen, CREATED + 5299, GAP, IN_TRANSIT_MS), {
      at: CREATED + 5300,
      notFoundAt: CREATED + 5000,
    });
    assert.equal(notFoundWait(seen, CREATED + 5300, GAP, IN_TRANSIT_MS), null);
  });

  it('reads before an unanswered send can no longer arrive do not count, and are spaced by a doubling backoff', () => {
    const sent = CREATED + 2000;
    const row = { created_at: CREATED, updated_at: sent, not_found_at: null };
    assert.deepEqual(notFoundWait(row, sent + 1000, GAP, IN_TRANSIT_MS), {
      at: sent + 2000,
      notFoundAt: null,
    });
    assert.deepEqual(notFoundWait(row, sent + 8000, GAP, IN_TRANSIT_MS), {
      at: sent + 16_000,
      notFoundAt: null,
    });
    assert.deepEqual(notFoundWait(row, sent + 100_000, GAP, IN_TRANSIT_MS), {
      at: sent + IN_TRANSIT_MS,
      notFoundAt: null,
    });
    // Once it has passed: the first read that counts, then a second CHANNEL_POLL_MS later.
    const first = sent + IN_TRANSIT_MS;
    assert.deepEqual(notFoundWait(row, first, GAP, IN_TRANSIT_MS), { at: first + GAP, notFoundAt: first });
    assert.equal(notFoundWait({ ...row, not_found_at: first }, first + GAP, GAP, IN_TRANSIT_MS), null);
  });

  it('a not-found read from before the last unanswered send does not count', () => {
    const sent = CREATED + 10_000;
    const row = { created_at: CREATED, updated_at: sent, not_found_at: CREATED + 5000 };
    const now = sent + IN_TRANSIT_MS + 1000;
    assert.deepEqual(notFoundWait(row, now, GAP, IN_TRANSIT_MS), { at: now + GAP, notFoundAt: now });
  });
});

describe('retryDelay', () => {
  const FIVE_HUNDRED = { code: 'http_500' };
  /** A payout not yet taken by the channel. */
  const row = {
    kind: 'payout' as const,
    status: 'PENDING' as const,
    created_at: CREATED,
    submit_attempts: 1,
    expires_at: null,
    read_failures: 0,
  };
  // next_action_at is a bigint column: PostgreSQL refuses 1500.5, and the row then waited out its
  // lease and the two-minute wait of a send that may still arrive.
  it('is a whole number of ms for a payout of any age', () => {
    for (const age of [2001, 2999, 3001, 123_457]) {
      const delay = retryDelay(row, FIVE_HUNDRED, CREATED + age, GAP);
      assert.ok(Number.isInteger(delay), `${delay} after ${age} ms`);
      assert.equal(delay, Math.ceil(age / 2));
    }
    assert.equal(retryDelay(row, FIVE_HUNDRED, CREATED + 10, GAP), 1000);
  });

  it('is a poll interval for a call the throttle did not send within its claim, whatever the age', () => {
    assert.equal(retryDelay(row, { code: CLAIM_EXPIRED }, CREATED + 600_000, GAP), 1000);
    assert.equal(retryDelay(row, { code: CLAIM_EXPIRED }, CREATED + 600_000, 2500), 2500);
    assert.equal(retryDelay(row, FIVE_HUNDRED, CREATED + 600_000, GAP), 300_000);
  });
});
