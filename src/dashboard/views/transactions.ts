/** The transactions list (filters, search, keyset pages) and one transaction's page. */
import type { DeliveryView, AttemptView } from '../../callbacks/callbacks.service.ts';
import type { TransactionRow } from '../../transactions/transactions.repository.ts';
import type { MerchantView } from '../../merchants/merchants.service.ts';
import type { DashboardUser } from '../accounts.service.ts';
import type { ListRow } from '../dashboard.repository.ts';
import type { DisputeRow } from '../../disputes/disputes.repository.ts';
import { disputesSection } from './disputes.ts';
import { customerText, refundsSection } from './refund.ts';
import {
  esc,
  maskAccount,
  money,
  options,
  postButton,
  scrollTable,
  statusBadge,
  timeCell,
} from './layout.ts';

const KIND_LABELS: Record<string, string> = { payin: 'Pay-in', payout: 'Payout', refund: 'Refund' };
const kindLabel = (kind: string) => KIND_LABELS[kind] ?? kind;

/** The list's query as the form sends it; every value is text as typed. */
export type ListQuery = Partial<
  Record<'kind' | 'flow' | 'status' | 'delivery' | 'from' | 'to' | 'min' | 'max' | 'q' | 'merchant', string>
>;

export const QUERY_KEYS = [
  'q',
  'kind',
  'flow',
  'status',
  'delivery',
  'from',
  'to',
  'min',
  'max',
  'merchant',
] as const;

export function queryString(query: ListQuery, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const key of QUERY_KEYS) {
    const v = query[key];
    if (v) params.set(key, v);
  }
  for (const [k, v] of Object.entries(extra)) params.set(k, v);
  const text = params.toString();
  return text ? `?${text}` : '';
}

function field(id: keyof ListQuery, label: string, query: ListQuery, type = 'text', extra = ''): string {
  return `<label for="f-${id}">${label}<input id="f-${id}" name="${id}" type="${type}" value="${esc(query[id] ?? '')}"${extra}></label>`;
}

/** The list's filters and search, as a GET form that keeps what was chosen. */
function filterForm(query: ListQuery, merchants: MerchantView[] | null): string {
  const merchantField =
    merchants === null
      ? ''
      : `<label for="f-merchant">Merchant<select id="f-merchant" name="merchant">${options(
          [
            ['', 'All merchants'],
            ...merchants.map((m): [string, string] => [m.merchant_id, `${m.name} (${m.merchant_id})`]),
          ],
          query.merchant,
        )}</select></label>`;
  return `<form class="card filters" method="get" action="/dashboard/transactions" role="search" aria-label="Filter transactions">
${field('q', 'Search (payment_id, refund_id, order or refund no., UTR)', query, 'search', ' autocomplete="off"')}
<label for="f-kind">Kind<select id="f-kind" name="kind">${options(
    [
      ['', 'Any'],
      ['payin', 'Pay-in'],
      ['payout', 'Payout'],
      ['refund', 'Refund'],
    ],
    query.kind,
  )}</select></label>
<label for="f-flow">Flow<select id="f-flow" name="flow">${options(
    [
      ['', 'Any'],
      ['onsite', 'Onsite'],
      ['offsite', 'Offsite'],
      ['p2p', 'P2P'],
      ['payout', 'Payout'],
      ['refund', 'Refund'],
    ],
    query.flow,
  )}</select></label>
<label for="f-status">Status<select id="f-status" name="status">${options(
    [
      ['', 'Any'],
      ['PENDING', 'PENDING'],
      ['PROCESSING', 'PROCESSING'],
      ['SUCCESS', 'SUCCESS'],
      ['FAILED', 'FAILED'],
    ],
    query.status,
  )}</select></label>
<label for="f-delivery">Callback<select id="f-delivery" name="delivery">${options(
    [
      ['', 'Any'],
      ['failed', 'Delivery failed'],
    ],
    query.delivery,
  )}</select></label>
${field('from', 'From (IST day)', query, 'date')}
${field('to', 'To (IST day)', query, 'date')}
${field('min', 'Min amount (₹)', query, 'text', ' inputmode="decimal"')}
${field('max', 'Max amount (₹)', query, 'text', ' inputmode="decimal"')}
${merchantField}
<div class="actions"><button class="btn" type="submit">Apply</button><a class="btn secondary" href="/dashboard/transactions">Clear</a><a class="btn secondary" href="/dashboard/transactions.csv${esc(queryString(query))}" download>Export CSV</a></div>
</form>`;
}

/**
 * The list page. `merchants`: the operator's choice of merchant (null for a merchant's user, who
 * sees only their own).
 */
export function listBody(
  user: DashboardUser,
  query: ListQuery,
  rows: ListRow[],
  next: string | null,
  isFirst: boolean,
  merchants: MerchantView[] | null,
): string {
  const form = filterForm(query, merchants);
  const head = ['Created (IST)', 'payment_id', 'Kind', 'Flow', 'Order no.', '#Amount', 'Status', 'UTR'];
  if (user.role === 'operator') head.splice(2, 0, 'Merchant');
  // An operator reads each row's merchant by its name, its id beside it.
  const names = new Map((merchants ?? []).map((m) => [m.merchant_id, m.name]));
  const body = rows.map((r) => {
    const cells = [
      timeCell(r.created_at),
      `<a class="mono" href="/dashboard/transactions/${esc(r.payment_id)}">${esc(r.payment_id)}</a>`,
      kindLabel(r.kind),
      esc(r.flow),
      `<span class="mono">${esc(r.merchant_order_no)}</span>`,
      money(r.amount, r.currency),
      statusWithReason(r.status, r.failure_reason),
      `<span class="mono">${esc(r.utr)}</span>`,
    ];
    if (user.role === 'operator')
      cells.splice(
        2,
        0,
        `${esc(names.get(r.merchant_id) ?? '')} <span class="mono">${esc(r.merchant_id)}</span>`,
      );
    return `<tr>${cells.map((c, i) => `<td${head[i]!.startsWith('#') ? ' class="num"' : ''}>${c}</td>`).join('')}</tr>`;
  });
  const pager = `<nav class="pager" aria-label="Pages">${isFirst ? '<span></span>' : `<a href="/dashboard/transactions${esc(queryString(query))}">First page</a>`}${next ? `<a rel="next" href="/dashboard/transactions${esc(queryString(query, { after: next }))}">Next page</a>` : ''}</nav>`;
  return `${form}
${scrollTable('Transactions', head, body, 'No transactions match.')}
${pager}`;
}

/** A status, and a FAILED transaction's reason under it (the channel's words, the sandbox's rule, expiry). */
function statusWithReason(status: string, reason: string | null): string {
  return status === 'FAILED' && reason
    ? `${statusBadge(status)} <span class="reason">${esc(reason)}</span>`
    : statusBadge(status);
}

function attemptRow(a: AttemptView): string {
  return `<tr><td>${a.attempt}</td><td>${timeCell(Date.parse(a.started_at))}</td><td>${a.http_status ?? ''}</td><td>${esc(a.error ?? '')}</td><td class="num">${a.latency_ms} ms</td></tr>`;
}

function delivery(d: DeliveryView & { log: AttemptView[] }): string {
  return `<section class="card" aria-label="Delivery ${esc(d.delivery_id)}">
<dl class="facts"><dt>Delivery</dt><dd class="mono">${esc(d.delivery_id)}</dd><dt>Status</dt><dd>${statusBadge(d.status)}</dd><dt>URL</dt><dd class="mono">${esc(d.url)}</dd><dt>Attempts</dt><dd>${d.attempts} of at most ${d.max_attempts}</dd></dl>
${scrollTable(`Attempts of ${d.delivery_id}`, ['Attempt', 'Started (IST)', 'HTTP status', 'Error', '#Latency'], d.log.map(attemptRow), 'No attempt yet.')}
</section>`;
}

interface Detail {
  txn: TransactionRow;
  merchantName: string;
  events: {
    statuses: { status: string; source: string; created_at: number }[];
    channel: { provider: string; type: string; received_at: number; state: string }[];
  };
  journal: {
    journal_id: string;
    kind: string;
    account: string;
    amount: number;
    currency: string;
    created_at: number;
  }[];
  deliveries: (DeliveryView & { log: AttemptView[] })[];
  /** A pay-in's refunds, oldest first (none for other kinds). */
  refunds: TransactionRow[];
  /** What is left to refund of a SUCCESS pay-in, in paise; 0 otherwise. */
  refundable: number;
  /** A pay-in's disputes, oldest first (none for other kinds). */
  disputes: DisputeRow[];
}

export function detailBody(user: DashboardUser, d: Detail): string {
  const t = d.txn;
  const timeline = [
    { at: t.created_at, text: 'Created' },
    ...d.events.statuses.map((e) => ({ at: e.created_at, text: `${e.status} (${e.source})` })),
    ...d.events.channel.map((e) => ({
      at: e.received_at,
      text: `${e.provider} notification: ${e.type} (${e.state})`,
    })),
    ...(t.reversed_at
      ? [{ at: t.reversed_at, text: 'Reversed by the beneficiary bank; the amount is back in the balance' }]
      : []),
  ].sort((a, b) => a.at - b.at);
  const facts: [string, string][] = [
    ['payment_id', `<span class="mono">${esc(t.payment_id)}</span>`],
    ['Merchant', `${esc(d.merchantName)} (<span class="mono">${esc(t.merchant_id)}</span>)`],
    ['Kind / flow', `${kindLabel(t.kind)} / ${esc(t.flow)}`],
    [
      t.kind === 'refund' ? 'Refund no.' : 'Order no.',
      `<span class="mono">${esc(t.merchant_order_no)}</span>`,
    ],
    ['Amount', money(t.amount, t.currency)],
    ['Status', statusBadge(t.status)],
    // Why it failed: the channel's status code and words, the sandbox's rule, or its expiry.
    ...(t.status === 'FAILED'
      ? [['Failure reason', esc(t.failure_reason ?? 'not recorded')] as [string, string]]
      : []),
    ['UTR', `<span class="mono">${esc(t.utr)}</span>`],
    ['Channel', esc(t.channel)],
    ['Created (IST)', timeCell(t.created_at)],
    ['Final (IST)', timeCell(t.finalized_at)],
    ['Callback URL', `<span class="mono">${esc(t.callback_url ?? 'none')}</span>`],
    // The user_details it was created with (a refund carries its pay-in's).
    [
      t.kind === 'refund' ? 'Customer (of the pay-in)' : 'Customer',
      esc(customerText(t) ?? 'No details given'),
    ],
  ];
  if (t.flow === 'p2p')
    facts.push(['Redirect URL', `<span class="mono">${esc(t.redirect_url ?? 'none')}</span>`]);
  if (t.kind === 'payout')
    facts.push(
      ['Beneficiary', esc(t.receiver_name ?? '')],
      [
        'Account',
        `<span class="mono">${esc(maskAccount(t.receiver_account_no))}</span> · ${esc(t.receiver_ifsc ?? '')}`,
      ],
    );
  if (t.kind === 'refund')
    facts.push(
      [
        'Refund of',
        `<a class="mono" href="/dashboard/transactions/${esc(t.refund_of ?? '')}">${esc(t.refund_of ?? '')}</a>`,
      ],
      ['Reason', esc(t.reason ?? '')],
      ['Channel refund id', `<span class="mono">${esc(t.channel_txn_id || 'not known yet')}</span>`],
    );
  const final = t.status === 'SUCCESS' || t.status === 'FAILED';
  const resend =
    final && t.callback_url
      ? `<div class="actions">${postButton(user, `/dashboard/transactions/${t.payment_id}/resend`, 'Resend callback')}</div>`
      : `<p class="muted">${final ? 'This transaction has no callback URL.' : 'Its callback is sent when it is final.'}</p>`;
  const journal = d.journal.map(
    (e) =>
      `<tr><td>${timeCell(e.created_at)}</td><td class="mono">${esc(e.journal_id)}</td><td>${esc(e.kind)}</td><td>${esc(e.account)}</td><td class="num">${money(e.amount, e.currency, true)}</td></tr>`,
  );
  return `<section class="card" aria-labelledby="facts-h"><h2 id="facts-h">Details</h2><dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl></section>
<section aria-labelledby="timeline-h"><h2 id="timeline-h">Timeline</h2><div class="card"><ol class="timeline">${timeline.map((e) => `<li>${timeCell(e.at)} — ${esc(e.text)}</li>`).join('')}</ol></div></section>
${disputesSection(d.disputes)}
${refundsSection(user, d)}
<section aria-labelledby="journal-h"><h2 id="journal-h">Ledger journal</h2>${scrollTable('Journal entries', ['Time (IST)', 'Journal', 'Kind', 'Account', '#Amount'], journal, 'No money has moved for this transaction.')}</section>
<section aria-labelledby="callbacks-h"><h2 id="callbacks-h">Callbacks</h2>${resend}${d.deliveries.length ? d.deliveries.map(delivery).join('') : '<p class="card muted">No callback has been queued.</p>'}</section>`;
}
