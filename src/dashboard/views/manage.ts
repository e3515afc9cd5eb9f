/**
 * The ledger, the developers' page (keys, secret, callback URL), and the operator's pages:
 * merchants, one merchant, the ledger check and the activity log.
 */
import type { MerchantTable } from '../../db/schema.ts';
import { base62 } from '../../ids.ts';
import type { MerchantView } from '../../merchants/merchants.service.ts';
import type { LedgerReport } from '../../wallet/wallet.service.ts';
import type { DashboardUser } from '../accounts.service.ts';
import type { LedgerRow } from '../dashboard.repository.ts';
import { csrfField, esc, money, options, postButton, scrollTable, statusBadge, timeCell } from './layout.ts';
import type { AuditRow } from '../../audit/audit.repository.ts';

/** An operator's choice of merchant (a GET form), for pages about one merchant or all. */
export function merchantPicker(
  action: string,
  merchants: MerchantView[],
  selected: string | null,
  allLabel: string | null,
  extra = '',
): string {
  const choices: [string, string][] = merchants.map((m) => [m.merchant_id, `${m.name} (${m.merchant_id})`]);
  if (allLabel !== null) choices.unshift(['', allLabel]);
  return `<form class="card inline" method="get" action="${esc(action)}"><label for="pick-merchant">Merchant<select id="pick-merchant" name="merchant">${options(choices, selected ?? '')}</select></label>${extra}<button class="btn secondary" type="submit">Show</button></form>`;
}

export function ledgerBody(
  rows: LedgerRow[],
  account: 'available' | 'held',
  currency: string,
  next: string | null,
  base: string,
  picker: string,
): string {
  const body = rows.map(
    (r) =>
      `<tr><td>${timeCell(r.created_at)}</td><td>${esc(r.kind)}</td><td>${r.payment_id ? `<a class="mono" href="/dashboard/transactions/${esc(r.payment_id)}">${esc(r.payment_id)}</a>` : ''}</td><td class="mono">${esc(r.journal_id)}</td><td class="num">${money(r.amount, currency, true)}</td><td class="num">${money(r.balance, currency)}</td></tr>`,
  );
  const sep = base.includes('?') ? '&' : '?';
  return `${picker}
${scrollTable(`Ledger entries of the ${account} balance`, ['Time (IST)', 'Kind', 'payment_id', 'Journal', '#Amount', '#Balance after'], body, 'No entries yet.')}
<nav class="pager" aria-label="Pages"><span></span>${next ? `<a rel="next" href="${esc(`${base}${sep}before=${next}`)}">Older entries</a>` : ''}</nav>`;
}

/** When the previous webhook secret stops signing, or nothing once it has. */
export function secretOverlap(until: number | null): string {
  return until === null
    ? ''
    : `<p id="secret-overlap">The previous webhook secret signs callbacks beside the current one until ${timeCell(until)} (IST); then it is deleted, and only the current one signs.</p>`;
}

/**
 * What a merchant's user (or an operator on a merchant's page) can change about its access.
 * `overlapUntil`: when the previous webhook secret stops signing, or null when it no longer does.
 */
export function accessActions(
  user: DashboardUser,
  merchant: MerchantTable,
  base: string,
  overlapUntil: number | null,
): string {
  return `<section class="card" aria-labelledby="keys-h"><h2 id="keys-h">API key and webhook secret</h2>
<p class="muted">A new API key is shown once; the old key stops working within 2 seconds. A new webhook secret is shown once; for a while after it, callbacks carry signatures by the new and the previous secret, so your verifier can switch without refusing one.</p>
${secretOverlap(overlapUntil)}<div class="actions">${postButton(user, `${base}/rotate-key`, 'Rotate API key', 'danger')}${postButton(user, `${base}/rotate-secret`, 'Rotate webhook secret', 'secondary')}</div></section>
<section class="card" aria-labelledby="cb-h"><h2 id="cb-h">Default callback URL</h2>
<p class="muted">Used when a creation request names no <code>callback_url</code>. Leave empty for none.</p>
<form class="inline" method="post" action="${esc(`${base}/callback-url`)}">${csrfField(user)}<label for="callback-url">Callback URL<input id="callback-url" name="callback_url" type="url" value="${esc(merchant.callback_url ?? '')}" maxlength="512"></label><button class="btn" type="submit">Save</button></form></section>`;
}

export function merchantFacts(m: MerchantTable): string {
  return `<section class="card"><dl class="facts"><dt>Merchant ID</dt><dd class="mono">${esc(m.id)}</dd><dt>Name</dt><dd>${esc(m.name)}</dd><dt>Mode</dt><dd>${m.mode}</dd><dt>Status</dt><dd>${m.status}</dd><dt>UPI id</dt><dd class="mono">${esc(m.vpa)}</dd><dt>Created (IST)</dt><dd>${timeCell(m.created_at)}</dd></dl></section>`;
}

export function secretShown(id: string, label: string, value: string, back: string, note = ''): string {
  return `<section class="card" aria-labelledby="${id}-h"><h2 id="${id}-h">${esc(label)}</h2>
<p>Copy it now: it is shown once and cannot be shown again.</p>
<output class="secret" id="${id}-value">${esc(value)}</output>${note}
<p><a href="${esc(back)}">Done</a></p></section>`;
}

export function activityTable(rows: AuditRow[], showMerchant: boolean): string {
  const head = ['Time (IST)', 'Who', 'Action', 'What'];
  if (showMerchant) head.splice(3, 0, 'Merchant');
  return scrollTable(
    'Activity',
    head,
    rows.map((r) => {
      const cells = [timeCell(r.at), esc(r.actor), esc(r.action), esc(r.detail)];
      if (showMerchant) cells.splice(3, 0, `<span class="mono">${esc(r.merchant_id ?? '')}</span>`);
      return `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
    }),
    'Nothing recorded yet.',
  );
}

/** What the create-merchant form was sent with, to show it again beside its refusal. */
export interface MerchantForm {
  name: string;
  callbackUrl: string | null;
  vpa: string | null;
  live: boolean;
}

export function merchantsBody(user: DashboardUser, merchants: MerchantView[], sent?: MerchantForm): string {
  const value = (v: string | null | undefined) => (v ? ` value="${esc(v)}"` : '');
  const rows = merchants.map(
    (m) =>
      `<tr><td><a class="mono" href="/dashboard/merchants/${esc(m.merchant_id)}">${esc(m.merchant_id)}</a></td><td>${esc(m.name)}</td><td>${m.mode}</td><td>${m.status}</td></tr>`,
  );
  return `${scrollTable('Merchants', ['Merchant ID', 'Name', 'Mode', 'Status'], rows, 'No merchants yet.')}
<section class="card" aria-labelledby="new-h"><h2 id="new-h">Create a merchant</h2>
<form class="filters" method="post" action="/dashboard/merchants">${csrfField(user)}
<label for="m-name">Name<input id="m-name" name="name" required maxlength="100"${value(sent?.name)}></label>
<label for="m-callback">Callback URL (optional)<input id="m-callback" name="callback_url" type="url" maxlength="512"${value(sent?.callbackUrl)}></label>
<label for="m-mode">Mode<select id="m-mode" name="mode">${options(
    [
      ['test', 'Sandbox (sk_test_)'],
      ['live', 'Live (sk_live_)'],
    ],
    sent?.live ? 'live' : 'test',
  )}</select></label>
<label for="m-vpa">UPI id (required for live)<input id="m-vpa" name="vpa" maxlength="320"${value(sent?.vpa)}></label>
<div class="actions"><button class="btn" type="submit">Create merchant</button></div>
</form></section>`;
}

export function merchantBody(
  user: DashboardUser,
  m: MerchantTable,
  wallets: { currency: string; available: number; held: number }[],
  currencies: readonly string[],
  activity: AuditRow[],
  overlapUntil: number | null,
): string {
  const base = `/dashboard/merchants/${m.id}`;
  const balances = wallets.map(
    (w) =>
      `<tr><td>${esc(w.currency)}</td><td class="num">${money(w.available, w.currency)}</td><td class="num">${money(w.held, w.currency)}</td></tr>`,
  );
  return `${merchantFacts(m)}
<p class="actions"><a class="btn secondary" href="/dashboard/transactions?merchant=${esc(m.id)}">Transactions</a><a class="btn secondary" href="/dashboard/ledger?merchant=${esc(m.id)}">Ledger</a><a class="btn secondary" href="/dashboard?merchant=${esc(m.id)}">Overview</a></p>
<section aria-labelledby="bal-h"><h2 id="bal-h">Wallet</h2>${scrollTable('Balances', ['Currency', '#Available', '#Held'], balances, 'No wallet yet: nothing credited.')}
<form class="card inline" method="post" action="${base}/credit">${csrfField(user)}<input type="hidden" name="form_id" value="${base62(22)}"><label for="credit-amount">Credit amount (rupees)<input id="credit-amount" name="amount" required inputmode="decimal" placeholder="1000.00"></label><label for="credit-currency">Currency<select id="credit-currency" name="currency">${options(
    currencies.map((c) => [c, c]),
    'INR',
  )}</select></label><button class="btn" type="submit">Credit wallet</button></form></section>
<section class="card" aria-labelledby="status-h"><h2 id="status-h">Access</h2><p>The merchant is <strong>${m.status}</strong>.</p><div class="actions">${m.status === 'active' ? postButton(user, `${base}/status`, 'Disable merchant', 'danger', '<input type="hidden" name="status" value="disabled">') : postButton(user, `${base}/status`, 'Enable merchant', '', '<input type="hidden" name="status" value="active">')}</div></section>
${accessActions(user, m, base, overlapUntil)}
<section aria-labelledby="act-h"><h2 id="act-h">Activity</h2>${activityTable(activity, false)}</section>`;
}

/**
 * When each live channel last sent a verified notification, and how long it has been silent: a
 * provider that stopped (Cashfree disables a webhook URL after repeated failed deliveries) or signs
 * with another secret shows here, marked when its silence passed NOTIFICATION_SILENCE_S while its
 * transactions wait.
 */
export function notificationsCard(
  rows: { channel: string; lastAt: number | null; silenceS: number | null; silent: boolean }[],
): string {
  if (rows.length === 0) return '';
  const items = rows
    .map((r) => {
      const last = r.lastAt === null ? 'none yet' : timeCell(r.lastAt);
      const silence =
        r.silenceS === null
          ? ''
          : ` <span class="silence" data-silence-s="${r.silenceS}">· silent for ${duration(r.silenceS)}${r.silent ? ' while transactions wait' : ''}</span>`;
      return `<dt>${esc(r.channel)}</dt><dd>${last}${silence}</dd>`;
    })
    .join('');
  return `<section class="card" aria-labelledby="notified-h"><h2 id="notified-h">Last verified notification (IST) and silence</h2><dl class="facts">${items}</dl></section>`;
}

/** Seconds for people: 45 s, 12 min, 3 h 5 min, 2 d 4 h. */
function duration(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export function verifyBody(report: LedgerReport): string {
  return `<section class="card" aria-labelledby="verify-h"><h2 id="verify-h">${report.ok ? 'The ledger balances' : 'The ledger has problems'}</h2>
<p>${statusBadge(report.ok ? 'SUCCESS' : 'FAILED')} ${report.journals} journals and ${report.wallets} wallets checked: every journal must add up to zero and every wallet must equal the sum of its entries.</p>
${report.problems.length ? `<ul>${report.problems.map((p) => `<li>${esc(p)}</li>`).join('')}</ul>` : ''}</section>`;
}
