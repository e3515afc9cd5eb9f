/** The operator's reconciliation pages: the runs, newest first, and the differences a run found. */
import type { MismatchRow, RunRow } from '../../reconcile/reconcile.repository.ts';
import type { DashboardUser } from '../accounts.service.ts';
import type { DifferenceRow } from '../attention.repository.ts';
import { dayCell, dayText, esc, maskUpiIds, scrollTable, timeCell } from './layout.ts';

export function runsBody(runs: RunRow[], next: number | null): string {
  return `<p class="card">Each night at RECONCILE_AT (IST) one process reads yesterday's live transactions, and those still open, from Setu and Cashfree; <code>paygate reconcile</code> runs a day by hand. Each difference opens a <code>reconcile_mismatch</code> exception; nothing moves until an operator resolves it.</p>
${scrollTable(
  'Reconciliation runs',
  [
    'Day (IST)',
    'Channel',
    'Started (IST)',
    'Finished (IST)',
    '#Checked',
    '#Matched',
    '#Mismatched',
    '#Unreadable',
    '#New exceptions',
  ],
  runs.map(
    (r) =>
      `<tr><td><a href="/dashboard/reconcile/${r.id}">${dayCell(r.date)}</a></td><td>${esc(r.channel)}</td><td>${timeCell(r.started_at)}</td><td>${r.finished_at === null ? 'not finished' : timeCell(r.finished_at)}</td><td class="num">${r.checked}</td><td class="num">${r.matched}</td><td class="num">${r.mismatched}</td><td class="num">${r.unreadable}</td><td class="num">${r.opened}</td></tr>`,
  ),
  'No reconciliation has run yet.',
)}
<nav class="pager" aria-label="Pages"><span></span>${next ? `<a rel="next" href="/dashboard/reconcile?before=${next}">Older runs</a>` : ''}</nav>`;
}

export function runBody(run: RunRow, rows: MismatchRow[]): string {
  return `<section class="card" aria-labelledby="run-h"><h2 id="run-h">${esc(run.channel)}, ${esc(dayText(run.date))}</h2>
<p>${run.checked} checked: ${run.matched} matched, ${run.mismatched} with a difference (${run.opened} new), ${run.unreadable} unreadable. ${run.finished_at === null ? 'The run did not finish; the next one takes up the rest.' : ''}</p>
<p><a href="/dashboard/exceptions">All exceptions</a> · <a href="/dashboard/reconcile">All runs</a></p></section>
${scrollTable(
  'Differences this run found first',
  ['Field', 'Provider reference', "Provider's value", "Paygate's value", 'payment_id', 'Exception'],
  rows.map(
    (m) =>
      `<tr><td>${esc(m.field)}</td><td class="mono">${esc(m.reference)}</td><td class="mono">${esc(m.provider_value)}</td><td class="mono">${esc(m.paygate_value)}</td><td>${m.payment_id ? `<a class="mono" href="/dashboard/transactions/${esc(m.payment_id)}">${esc(m.payment_id)}</a>` : ''}</td><td class="num">#${m.exception_id}</td></tr>`,
  ),
  run.mismatched > 0
    ? 'Every difference this run saw was found by an earlier run; its exception is open once.'
    : 'No differences.',
)}`;
}

/**
 * A merchant's user's view: the differences found about its own transactions, newest first, each
 * with its day, its exception (read-only) and every UPI id in its values masked.
 */
export function merchantDifferencesBody(
  user: DashboardUser,
  rows: DifferenceRow[],
  next: number | null,
): string {
  const masked = (text: string) => esc(maskUpiIds(text));
  return `<p class="card">Each night Paygate compares its records of live transactions with Setu's and Cashfree's. A difference about one of your transactions is listed here with the exception a Paygate operator resolves it on.</p>
${scrollTable(
  'Differences about your transactions',
  ['Day (IST)', 'Channel', 'Field', "Provider's value", "Paygate's value", 'payment_id', 'Exception'],
  rows.map(
    (m) =>
      `<tr><td>${dayCell(m.date)}</td><td>${esc(m.channel)}</td><td>${esc(m.field)}</td><td class="mono">${masked(m.provider_value)}</td><td class="mono">${masked(m.paygate_value)}</td><td>${m.payment_id ? `<a class="mono" href="/dashboard/transactions/${esc(m.payment_id)}">${esc(m.payment_id)}</a>` : ''}</td><td class="num"><a href="/dashboard/exceptions/${m.exception_id}">#${m.exception_id}</a></td></tr>`,
  ),
  'Reconciliation has found no difference about your transactions.',
)}
<nav class="pager" aria-label="Pages"><span></span>${next ? `<a rel="next" href="/dashboard/reconcile?before=${next}">Older differences</a>` : ''}</nav>`;
}
