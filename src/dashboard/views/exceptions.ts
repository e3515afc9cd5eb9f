/** The operators' exceptions: the list (open ones first), one exception with its actions, and the confirmation of a money action. */
import type { ExceptionRow } from '../../exceptions/exceptions.repository.ts';
import type { MerchantView } from '../../merchants/merchants.service.ts';
import type { DashboardUser } from '../accounts.service.ts';
import { csrfField, esc, maskUpiIds, money, options, scrollTable, timeCell } from './layout.ts';

/** What a user reads of an exception's text: a merchant's user with every UPI id in it masked. */
function shown(user: DashboardUser, text: string): string {
  return esc(user.role === 'operator' ? text : maskUpiIds(text));
}

/** Who resolved it, for a merchant's user: Paygate's own words stay, an operator is not named. */
function resolver(user: DashboardUser, by: string | null): string {
  if (by === null) return '-';
  return user.role === 'operator' || by === 'channel' || by === 'auto' ? by : 'Paygate operator';
}

function amountCell(e: ExceptionRow): string {
  return e.amount !== null
    ? money(e.amount, e.currency)
    : e.amount_text !== null
      ? esc(`unreadable (${e.amount_text})`)
      : '';
}

/** Where an exception stands, in a word or two. */
export function exceptionState(e: ExceptionRow): string {
  if (e.resolved_at !== null) return `Resolved: ${e.resolution ?? ''}`;
  return e.refund_id ? 'Refund in flight' : 'Open';
}

function holdsText(e: ExceptionRow): string {
  if (e.holds === null) return 'No money';
  return `${money(e.outstanding, e.currency)} ${e.holds === 'suspense' ? 'in suspense' : 'owed by the merchant'}`;
}

/** The exceptions list; a merchant's user sees only those naming its merchant, to read, not resolve. */
/** The merchant an exception names, by its name and id (a merchant's user's own name from its session). */
function merchantCell(user: DashboardUser, id: string | null, merchants: MerchantView[]): string {
  if (id === null) return '-';
  const name = user.merchantId === id ? user.merchantName : merchants.find((m) => m.merchant_id === id)?.name;
  return `${name ? `${esc(name)} ` : ''}<span class="mono">${esc(id)}</span>`;
}

export function exceptionsBody(user: DashboardUser, rows: ExceptionRow[]): string {
  const intro =
    user.role === 'operator'
      ? ''
      : '<p class="card muted">What the payment channels reported about your transactions that needed a Paygate operator: each is resolved by Paygate, and this page shows how.</p>';
  const verb = (e: ExceptionRow) => (e.resolved_at === null && user.role === 'operator' ? 'Resolve' : 'View');
  return (
    intro +
    scrollTable(
      'Exceptions, open ones first',
      ['#', 'State', 'Time (IST)', 'Kind', 'Provider', 'payment_id', '#Amount', 'Money', 'Detail'],
      rows.map(
        (e) =>
          `<tr><td class="num"><a href="/dashboard/exceptions/${e.id}">${verb(e)} #${e.id}</a></td><td>${esc(exceptionState(e))}</td><td>${timeCell(e.created_at)}</td><td>${esc(e.kind)}</td><td>${esc(e.provider)}</td><td>${e.payment_id ? `<a class="mono" href="/dashboard/transactions/${esc(e.payment_id)}">${esc(e.payment_id)}</a>` : ''}</td><td class="num">${amountCell(e)}</td><td>${holdsText(e)}</td><td>${shown(user, e.detail)}</td></tr>`,
      ),
      'No exceptions.',
    )
  );
}

const NOTE_FIELD = (id: string, required: boolean) =>
  `<label for="${id}">Note${required ? '' : ' (optional)'}<textarea id="${id}" name="note" maxlength="500"${required ? ' required' : ''}></textarea></label>`;

function actionForm(user: DashboardUser, e: ExceptionRow, action: string, label: string, inner = ''): string {
  return `<form class="card" method="post" action="/dashboard/exceptions/${e.id}/resolve">${csrfField(user)}<input type="hidden" name="action" value="${action}">${inner}<button class="btn${action === 'dismiss' ? ' secondary' : ''}" type="submit">${esc(label)}</button></form>`;
}

/** One exception: its facts and, while it is open and no refund is in flight, the actions that fit its kind. */
export function exceptionBody(user: DashboardUser, e: ExceptionRow, merchants: MerchantView[]): string {
  const facts: [string, string][] = [
    ['State', esc(exceptionState(e))],
    ['Kind', esc(e.kind)],
    ['Provider', esc(e.provider)],
    ['Provider reference', `<span class="mono">${shown(user, e.reference)}</span>`],
    ['Amount', amountCell(e) || '-'],
    ['Money', holdsText(e)],
    ['Merchant', merchantCell(user, e.merchant_id, merchants)],
    [
      'payment_id',
      e.payment_id
        ? `<a class="mono" href="/dashboard/transactions/${esc(e.payment_id)}">${esc(e.payment_id)}</a>`
        : '-',
    ],
    [
      'Refund',
      e.refund_id
        ? `<a class="mono" href="/dashboard/transactions/${esc(e.refund_id)}">${esc(e.refund_id)}</a>`
        : '-',
    ],
    ['Opened (IST)', timeCell(e.created_at)],
    ['Resolved (IST)', e.resolved_at === null ? '-' : timeCell(e.resolved_at)],
    ['By', esc(resolver(user, e.resolved_by))],
    ['How', esc(e.resolution ?? '-')],
    ['Note', shown(user, e.note ?? '-')],
    ['Detail', shown(user, e.detail)],
  ];
  const dl = `<section class="card" aria-labelledby="exc-h"><h2 id="exc-h">Exception #${e.id}</h2><dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl></section>`;
  // A merchant's user reads it; only an operator resolves it.
  if (user.role !== 'operator' || e.resolved_at !== null || e.refund_id !== null)
    return `${dl}<p><a href="/dashboard/exceptions">All exceptions</a></p>`;
  const merchantChoices: [string, string][] = merchants.map((m) => [
    m.merchant_id,
    `${m.name} (${m.merchant_id})`,
  ]);
  const forms: string[] = [];
  if (e.holds === 'suspense') {
    forms.push(actionForm(user, e, 'refund', 'Refund to the customer'));
    forms.push(
      actionForm(
        user,
        e,
        'credit',
        'Credit to the merchant',
        `<label for="credit-merchant">Merchant to credit<select id="credit-merchant" name="merchant">${options(merchantChoices, e.merchant_id ?? undefined)}</select></label>`,
      ),
    );
  }
  if (e.holds === 'receivable') forms.push(actionForm(user, e, 'debit', 'Debit the merchant'));
  if (e.kind === 'dispute' && e.holds === null) {
    forms.push(actionForm(user, e, 'dispute-lost', 'Dispute lost: refund the customer from the merchant'));
    forms.push(actionForm(user, e, 'dispute-won', 'Dispute won: close it'));
  }
  forms.push(
    actionForm(
      user,
      e,
      'dismiss',
      e.holds ? 'Dismiss and write off' : 'Dismiss',
      NOTE_FIELD('dismiss-note', true),
    ),
  );
  return `${dl}<section aria-labelledby="act-h"><h2 id="act-h">Resolve</h2>${forms.join('')}</section><p><a href="/dashboard/exceptions">All exceptions</a></p>`;
}

/** The confirmation of a money action: the same fields again, with a one-time form id. */
export function confirmBody(
  user: DashboardUser,
  e: ExceptionRow,
  action: string,
  fields: { merchant: string; note: string },
  formId: string,
  what: string,
): string {
  const hidden = [
    ['action', action],
    ['merchant', fields.merchant],
    ['note', fields.note],
    ['form_id', formId],
    ['confirm', 'yes'],
  ]
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${esc(v!)}">`)
    .join('');
  return `<section class="card" aria-labelledby="confirm-h"><h2 id="confirm-h">Confirm: ${esc(action)} exception #${e.id}</h2><p>${esc(what)}</p>
<form method="post" action="/dashboard/exceptions/${e.id}/resolve">${csrfField(user)}${hidden}<button class="btn" type="submit">Confirm ${esc(action)}</button></form>
<p><a href="/dashboard/exceptions/${e.id}">Cancel</a></p></section>`;
}
