/**
 * Setu's dispute notifications (SetuHQ/docs `content/payments/umap/notifications/disputes.mdx`, see
 * specs/CHANNELS.md): `dispute.created` (`status` "created") names the dispute (`id`), the payment
 * disputed (`paymentId`, its NPCI `txnId` as `orgTxnId`, its `rrn`) and the amount in paise. The
 * page lists the statuses open, closed, in-review, won and lost without naming their events; Paygate
 * takes `dispute.won` / `dispute.lost` (or a `status` of won or lost, in any of the documents'
 * spellings) as the provider's decision, and the rest as changing nothing.
 */
import { fieldText } from '../body-fields.ts';
import type { DisputeNotice } from '../notification-reader.ts';

const OPENED = new Set(['created', 'open', 'opened']);

/** A Setu dispute event's fields (`p`, its payload) as a notice. */
export function setuDispute(p: Record<string, unknown>, type: string): DisputeNotice {
  // The event's type first (the page's example carries a `status` comment copied from payments).
  const status = meaning(statusWord(type));
  const disputeId = fieldText(p.id) || fieldText(p.disputeId);
  return {
    kind: 'dispute',
    status: status === 'other' ? meaning(statusWord(fieldText(p.status))) : status,
    disputeId,
    paymentId: fieldText(p.paymentId),
    txnId: fieldText(p.orgTxnId),
    rrn: fieldText(p.rrn),
    amount: typeof p.amount === 'number' && Number.isSafeInteger(p.amount) && p.amount > 0 ? p.amount : null,
    subject: `${type.slice(0, 40)} of dispute "${disputeId.slice(0, 64)}"`,
  };
}

function meaning(word: string): DisputeNotice['status'] {
  return OPENED.has(word) ? 'open' : word === 'won' || word === 'lost' ? word : 'other';
}

/** "dispute.won", "Dispute.lost", "dispute_in_review", "in-review" → "won", "lost", "in-review". */
function statusWord(text: string): string {
  return text
    .toLowerCase()
    .replace(/^dispute[._]/, '')
    .replace(/_/g, '-');
}
