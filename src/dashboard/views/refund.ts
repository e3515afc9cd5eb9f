/**
 * A pay-in's refunds on its page: the list, the form that starts a refund (empty: the amount is
 * typed, never filled in), and the second screen that confirms it, naming the amount, the pay-in and
 * the customer before anything is held.
 */
import type { TransactionRow } from '../../transactions/transactions.repository.ts';
import { formatAmount } from '../../money.ts';
import type { DashboardUser } from '../accounts.service.ts';
import type { DisputeRow } from '../../disputes/disputes.repository.ts';
import { csrfField, esc, money, scrollTable, statusBadge, timeCell } from './layout.ts';

/** The customer details a pay-in was created with (`user_details`), as one line; null when none were given. */
export function customerText(
  t: Pick<TransactionRow, 'user_name' | 'user_phone' | 'user_email'>,
): string | null {
  const parts = [t.user_name, t.user_phone, t.user_email].filter((p): p is string => !!p && p.trim() !== '');
  return parts.length ? parts.join(' · ') : null;
}

interface RefundsOf {
  txn: TransactionRow;
  refunds: TransactionRow[];
  refundable: number;
  disputes: DisputeRow[];
}

/** A SUCCESS pay-in's refunds, and the form to start one (the amount left to refund is named, not filled in). */
export function refundsSection(user: DashboardUser, d: RefundsOf): string {
  const t = d.txn;
  if (t.kind !== 'payin') return '';
  const rows = d.refunds.map(
    (r) =>
      `<tr><td>${timeCell(r.created_at)}</td><td><a class="mono" href="/dashboard/transactions/${esc(r.payment_id)}">${esc(r.payment_id)}</a></td><td class="mono">${esc(r.merchant_order_no)}</td><td class="num">${money(r.amount, r.currency)}</td><td>${statusBadge(r.status)}</td></tr>`,
  );
  const action =
    t.status !== 'SUCCESS'
      ? '<p class="muted">Only a SUCCESS pay-in can be refunded.</p>'
      : d.refundable <= 0
        ? '<p class="muted">This pay-in is refunded in full.</p>'
        : d.disputes.some((x) => x.status === 'open')
          ? '<p class="muted">A dispute of this pay-in is open: it cannot be refunded until the dispute is decided.</p>'
          : `<form class="card inline" method="post" action="/dashboard/transactions/${esc(t.payment_id)}/refund">${csrfField(user)}<label for="refund-amount">Refund amount (rupees; at most ${esc(formatAmount(d.refundable))})<input id="refund-amount" name="amount" required inputmode="decimal" autocomplete="off" placeholder="0.00"></label><label for="refund-reason">Reason (optional)<input id="refund-reason" name="reason" maxlength="100"></label><button class="btn" type="submit">Review refund</button></form>`;
  return `<section aria-labelledby="refunds-h"><h2 id="refunds-h">Refunds</h2>${action}${scrollTable('Refunds of this pay-in', ['Created (IST)', 'refund_id', 'Refund no.', '#Amount', 'Status'], rows, 'No refunds.')}</section>`;
}

/**
 * The second screen of a refund: what will happen, said in full, and the form that does it (the
 * same fields, `confirm=yes` and a one-time form id, so that a double click refunds once).
 */
export function refundConfirmBody(
  user: DashboardUser,
  t: TransactionRow,
  refund: { amount: number; reason: string | null; formId: string },
): string {
  const customer = customerText(t);
  const hidden = [
    ['amount', formatAmount(refund.amount)],
    ['reason', refund.reason ?? ''],
    ['form_id', refund.formId],
    ['confirm', 'yes'],
  ]
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${esc(v!)}">`)
    .join('');
  const facts: [string, string][] = [
    ['Refund amount', `<strong>${money(refund.amount, t.currency)}</strong>`],
    ['Pay-in', `<span class="mono">${esc(t.payment_id)}</span>`],
    ['Order no.', `<span class="mono">${esc(t.merchant_order_no)}</span>`],
    ['Pay-in amount', money(t.amount, t.currency)],
    ['Paid (IST)', timeCell(t.finalized_at)],
    ['Customer', customer ? esc(customer) : 'No details were given with the pay-in'],
    ['Reason', esc(refund.reason ?? 'none given')],
  ];
  return `<section class="card" aria-labelledby="confirm-h"><h2 id="confirm-h">Confirm: refund ${money(refund.amount, t.currency)} to the customer</h2>
<p>${money(refund.amount, t.currency)} of pay-in <span class="mono">${esc(t.payment_id)}</span> goes back to ${customer ? esc(customer) : 'the customer who paid it'}. It is held from the available balance now and paid out through the channel that took the pay-in.</p>
<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>
<form method="post" action="/dashboard/transactions/${esc(t.payment_id)}/refund">${csrfField(user)}${hidden}<div class="actions"><button class="btn" type="submit">Confirm refund of ${money(refund.amount, t.currency)}</button><a class="btn secondary" href="/dashboard/transactions/${esc(t.payment_id)}">Cancel</a></div></form></section>`;
}
