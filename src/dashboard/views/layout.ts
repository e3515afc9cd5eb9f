/**
 * The frame every dashboard page shares, and the small formatters the pages use. Server-rendered,
 * no script: every dynamic text goes through `esc`, every form that changes something carries the
 * session's CSRF token.
 */
import { esc } from '../../pages/pages.views.ts';
import { formatAmount, formatIndian } from '../../money.ts';
import type { DashboardUser } from '../accounts.service.ts';
import { istDayLabel, istDate, istDayTime } from '../../ist.ts';

export { esc };

export interface Frame {
  user: DashboardUser;
  /** The nav entry this page belongs to. */
  active: string;
  title: string;
  /** A line above the page: what the last action did. */
  flash?: { text: string; error?: boolean } | null;
}

const MERCHANT_NAV: [string, string][] = [
  ['overview', 'Overview'],
  ['transactions', 'Transactions'],
  ['ledger', 'Ledger'],
  ['exceptions', 'Exceptions'],
  ['reconcile', 'Reconciliation'],
  ['developers', 'Developers'],
];

const OPERATOR_NAV: [string, string][] = [
  ['overview', 'Overview'],
  ['transactions', 'Transactions'],
  ['ledger', 'Ledger'],
  ['merchants', 'Merchants'],
  ['exceptions', 'Exceptions'],
  ['reconcile', 'Reconciliation'],
  ['verify', 'Ledger check'],
  ['users', 'Users'],
  ['activity', 'Activity'],
];

export function navHref(key: string): string {
  return key === 'overview' ? '/dashboard' : `/dashboard/${key}`;
}

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="color-scheme" content="light">
<title>${esc(title)} · Paygate</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/app.css">
</head>
<body>
${body}
</body>
</html>
`;
}

/** The hidden field every state-changing form sends. */
export function csrfField(user: DashboardUser): string {
  return `<input type="hidden" name="csrf" value="${esc(user.csrfToken)}">`;
}

/** A form with one button that posts to `action`. */
export function postButton(
  user: DashboardUser,
  action: string,
  label: string,
  style: '' | 'secondary' | 'danger' = '',
  fields = '',
): string {
  return `<form method="post" action="${esc(action)}">${csrfField(user)}${fields}<button class="btn${style ? ` ${style}` : ''}" type="submit">${esc(label)}</button></form>`;
}

export function page(frame: Frame, body: string): string {
  const { user } = frame;
  const items = (user.role === 'operator' ? OPERATOR_NAV : MERCHANT_NAV)
    .map(
      ([key, label]) =>
        `<li><a href="${navHref(key)}"${key === frame.active ? ' aria-current="page"' : ''}>${label}</a></li>`,
    )
    .join('');
  const here = frame.active === 'account' ? ' aria-current="page"' : '';
  // A merchant's user reads which merchant they act for by its name; the id is on the developers' page.
  const who = `${esc(user.email)} · ${user.role === 'operator' ? 'operator' : esc(user.merchantName ?? user.merchantId ?? '')}`;
  const flash = frame.flash
    ? `<p class="flash${frame.flash.error ? ' error' : ''}" role="${frame.flash.error ? 'alert' : 'status'}">${esc(frame.flash.text)}</p>`
    : '';
  // Two renderings of one menu, one shown at a time by the stylesheet: a row of links on a wide
  // screen, and on a phone a Menu button (a disclosure, no script) that opens them over the page,
  // so that the header takes one row of the phone's height.
  return document(
    frame.title,
    `<header>
<div class="top"><a class="brand" href="/dashboard">Paygate</a><a class="who" href="/dashboard/account"${here}>${who}</a>
<details class="menu"><summary>Menu</summary><nav aria-label="Dashboard"><ul>${items}<li class="account"><a href="/dashboard/account"${here}>Your account: ${who}</a></li></ul></nav></details>
<form class="signout" method="post" action="/dashboard/sign-out">${csrfField(user)}<button type="submit">Sign out</button></form></div>
<nav class="wide" aria-label="Dashboard"><ul>${items}</ul></nav>
</header>
<main>
<h1>${esc(frame.title)}</h1>
${flash}${body}
</main>`,
  );
}

export function signInPage(csrf: string, message: string | null, email = ''): string {
  return document(
    'Sign in',
    `<main class="signin">
<div class="card">
<h1>Sign in to Paygate</h1>
${message ? `<p class="flash error" role="alert">${esc(message)}</p>` : ''}
<form method="post" action="/dashboard/sign-in">
<input type="hidden" name="csrf" value="${esc(csrf)}">
<label for="email">Email<input id="email" name="email" type="email" autocomplete="username" required value="${esc(email)}"></label>
<label for="password">Password<input id="password" name="password" type="password" autocomplete="current-password" required></label>
<button class="btn" type="submit">Sign in</button>
</form>
</div>
</main>`,
  );
}

export function errorPage(title: string, message: string, signedIn: boolean): string {
  return document(
    title,
    `<main class="signin"><div class="card">
<h1>${esc(title)}</h1>
<p>${esc(message)}</p>
<p><a href="${signedIn ? '/dashboard' : '/dashboard/sign-in'}">${signedIn ? 'Back to the overview' : 'Sign in'}</a></p>
</div></main>`,
  );
}

/** A `<time>` element: IST for people (`28 Nov, 14:03:12`), ISO for machines. */
export function timeCell(at: number | null): string {
  if (at === null) return '';
  return `<time datetime="${new Date(at).toISOString()}">${istDayTime(at)}</time>`;
}

/** An IST day (YYYY-MM-DD) for people: `28 Nov`, the year added when it is not this one. */
export function dayCell(date: string): string {
  return `<time datetime="${esc(date)}">${esc(istDayLabel(date, istDate(Date.now()).slice(0, 4)))}</time>`;
}

/** An IST day (YYYY-MM-DD) as text for people: `28 Nov`, the year added when it is not this one. */
export function dayText(date: string): string {
  return istDayLabel(date, istDate(Date.now()).slice(0, 4));
}

/** Paise as rupees for people: ₹1,23,456.50 in INR, 123456.50 USD otherwise; signed when asked. */
export function money(paise: number, currency = 'INR', signed = false): string {
  const sign = paise < 0 ? '−' : signed && paise > 0 ? '+' : '';
  const abs = Math.abs(paise);
  return `${sign}${currency === 'INR' ? formatIndian(abs) : `${formatAmount(abs)} ${esc(currency)}`}`;
}

export function statusBadge(status: string): string {
  return `<span class="status s-${esc(status)}">${esc(status)}</span>`;
}

/**
 * A table; `head` names its columns (`#` first: a number, aligned right). On a wide screen a table
 * wider than the page scrolls inside its box (focusable, so a keyboard can scroll it); on a phone
 * each row is a card of its cells, each cell labelled with its column's name from `data-label`, so
 * that nothing scrolls sideways.
 */
export function scrollTable(label: string, head: string[], rows: string[], empty: string): string {
  if (rows.length === 0) return `<p class="card muted">${esc(empty)}</p>`;
  const names = head.map((h) => (h.startsWith('#') ? h.slice(1) : h));
  const labelled = rows.map((row) => {
    let i = 0;
    return row.replace(/<td(?=[\s>])/g, () => `<td data-label="${esc(names[i++] ?? '')}"`);
  });
  return `<div class="scroll" role="region" aria-label="${esc(label)}" tabindex="0"><table>
<thead><tr>${head.map((h, i) => `<th${h.startsWith('#') ? ' class="num"' : ''} scope="col">${names[i]}</th>`).join('')}</tr></thead>
<tbody>${labelled.join('\n')}</tbody>
</table></div>`;
}

/** Options of a select, `selected` marked. */
export function options(values: [string, string][], selected: string | undefined): string {
  return values
    .map(
      ([v, label]) =>
        `<option value="${esc(v)}"${v === (selected ?? '') ? ' selected' : ''}>${esc(label)}</option>`,
    )
    .join('');
}

/** Masks all but the last four characters of an account number. */
export function maskAccount(account: string | null): string {
  if (!account) return '';
  return `${'•'.repeat(Math.max(0, Math.min(account.length - 4, 8)))}${account.slice(-4)}`;
}

/** A UPI id in running text: a local part, `@`, and a handle that is not the start of a domain. */
const UPI_ID = /([A-Za-z0-9._-]{2,256})@([A-Za-z][A-Za-z0-9]{2,63})(?![A-Za-z0-9]|\.[A-Za-z0-9])/g;

/**
 * Text with every UPI id in it masked as CONTRACT §17 shows one (`al***@okaxis`): what a merchant's
 * user reads of an exception or a difference, which may name a payer's or another merchant's UPI id.
 */
export function maskUpiIds(text: string): string {
  return text.replace(UPI_ID, (_all, local: string, handle: string) => `${local.slice(0, 2)}***@${handle}`);
}
