/**
 * What Setu's dispute notifications say (specs/CHANNELS.md, from SetuHQ/docs'
 * `notifications/disputes.mdx`), read by the Setu reader: the page's own example opens a dispute
 * (its `status` comment copied from payments does not override `dispute.created`), won and lost in
 * the spellings the pages use decide it, and every other status changes nothing. The bodies are
 * written here from the page, not made by the reader's code.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SetuNotifications } from '../../../src/channels/setu/setu.notifications.ts';

const reader = new SetuNotifications('secret');

/** The page's example of `dispute.created`, with `status` and `eventType` as given. */
function pageExample(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    eventId: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    eventTs: '2023-09-04T12:08:20+0530',
    eventType: 'dispute.created',
    resource: 'dispute',
    status: 'created',
    paymentId: '01ARZ3NDEKTSV4RRFFQ69G5FAW',
    orgTxnId: 'SETmBZkQOV0M7wyyP1V4PIFhRSzW5eSjmYI',
    merchantId: '01ARZ3NDEKTSV4RRFFQ69G5FAX',
    id: '01ARZ3NDEKTSV4RRFFQ69G5FAY',
    txnId: 'SETmBZkQOV0M7wyyP1V4PIFhRSzW5eSjmYZ',
    rrn: '123456789012',
    amount: 10000,
    currency: 'INR',
    reason: {},
    ...over,
  };
}

describe("Setu's dispute notifications", () => {
  it("reads the page's dispute.created as an open dispute of the payment, with its amount in paise", () => {
    assert.deepEqual(reader.read(pageExample()), {
      kind: 'dispute',
      status: 'open',
      disputeId: '01ARZ3NDEKTSV4RRFFQ69G5FAY',
      paymentId: '01ARZ3NDEKTSV4RRFFQ69G5FAW',
      txnId: 'SETmBZkQOV0M7wyyP1V4PIFhRSzW5eSjmYI',
      rrn: '123456789012',
      amount: 10000,
      subject: 'dispute.created of dispute "01ARZ3NDEKTSV4RRFFQ69G5FAY"',
    });
    assert.equal(reader.identify(pageExample()).reference, '01ARZ3NDEKTSV4RRFFQ69G5FAY');
    assert.equal(reader.identify(pageExample()).type, 'dispute.created');
  });

  const cases: [Record<string, unknown>, string][] = [
    [{ status: 'success' }, 'open'],
    [{ eventType: 'dispute.open', status: 'open' }, 'open'],
    [{ eventType: 'dispute.won', status: 'won' }, 'won'],
    [{ eventType: 'dispute.lost', status: 'lost' }, 'lost'],
    [{ eventType: 'dispute.updated', status: 'Dispute.lost' }, 'lost'],
    [{ eventType: 'dispute.updated', status: 'dispute_won' }, 'won'],
    [{ eventType: 'dispute.in-review', status: 'in-review' }, 'other'],
    [{ eventType: 'dispute.updated', status: 'dispute_in_review' }, 'other'],
    [{ eventType: 'dispute.closed', status: 'closed' }, 'other'],
  ];
  for (const [over, want] of cases)
    it(`reads ${JSON.stringify(over)} as ${want}`, () => {
      const notice = reader.read(pageExample(over));
      assert.equal(notice?.kind, 'dispute');
      assert.equal(notice.kind === 'dispute' && notice.status, want);
    });

  it('an amount that is not a whole number of paise is no amount', () => {
    for (const amount of [100.5, '100', -5, 0, null]) {
      const notice = reader.read(pageExample({ amount }));
      assert.equal(notice?.kind === 'dispute' && notice.amount, null, String(amount));
    }
  });
});
