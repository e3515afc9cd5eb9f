/** A pay-in's disputes on its page (CONTRACT §10 "Disputes"): each with its state, its exception and a lost one's refund. */
import type { DisputeRow } from '../../disputes/disputes.repository.ts';
import { esc, money, scrollTable, timeCell } from './layout.ts';

const STATE = { open: 'Open: the pay-in cannot be refunded', won: 'Won', lost: 'Lost' } as const;

export function disputesSection(disputes: DisputeRow[]): string {
  if (disputes.length === 0) return '';
  const rows = disputes.map((d) => {
    const refund = d.refund_id
      ? `<a class="mono" href="/dashboard/transactions/${esc(d.refund_id)}">${esc(d.refund_id)}</a> (${money(d.refunded, d.currency)}${d.owed > 0 ? `, ${money(d.owed, d.currency)} owed by the merchant` : ''})`
      : '-';
    return `<tr><td>${timeCell(d.opened_at)}</td><td class="mono">${esc(d.dispute_id)}</td><td class="num">${d.amount === null ? 'unreadable' : money(d.amount, d.currency)}</td><td>${esc(STATE[d.status])}</td><td>${refund}</td><td><a href="/dashboard/exceptions/${d.exception_id}">#${d.exception_id}</a></td></tr>`;
  });
  return `<section aria-labelledby="disputes-h"><h2 id="disputes-h">Disputes</h2>${scrollTable('Disputes of this pay-in', ['Opened (IST)', 'Provider dispute id', '#Amount', 'State', 'Refund', 'Exception'], rows, 'No disputes.')}</section>`;
}
