/** The overview: balances, and volume and success rate by IST day as an SVG chart drawn here. */
import type { DayPoint } from '../dashboard.service.ts';
import { esc, money, scrollTable } from './layout.ts';
import { formatAmount } from '../../money.ts';

const W = 720;
const H = 260;
const PAD = { left: 64, right: 48, top: 16, bottom: 40 };

function successRate(d: DayPoint): number | null {
  const final = d.succeeded + d.failed;
  return final === 0 ? null : d.succeeded / final;
}

/** A short rupee figure for an axis: 1.2L, 3.4Cr. */
function shortRupees(paise: number): string {
  const r = paise / 100;
  if (r >= 1e7) return `${(r / 1e7).toFixed(1)}Cr`;
  if (r >= 1e5) return `${(r / 1e5).toFixed(1)}L`;
  if (r >= 1e3) return `${(r / 1e3).toFixed(1)}k`;
  return r.toFixed(0);
}

/** Bars of pay-in and payout volume per day, and the success rate as a line on its own axis. */
export function chart(days: DayPoint[], currency = 'INR'): string {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const max = Math.max(1, ...days.map((d) => Math.max(d.payinVolume, d.payoutVolume)));
  const slot = plotW / days.length;
  const barW = Math.max(2, slot / 2 - 2);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const bars = days
    .map((d, i) => {
      const x = PAD.left + i * slot + 1;
      const pin =
        d.payinVolume > 0
          ? `<rect x="${x.toFixed(1)}" y="${y(d.payinVolume).toFixed(1)}" width="${barW.toFixed(1)}" height="${(PAD.top + plotH - y(d.payinVolume)).toFixed(1)}" fill="#1d4ed8"/>`
          : '';
      const pout =
        d.payoutVolume > 0
          ? `<rect x="${(x + barW + 1).toFixed(1)}" y="${y(d.payoutVolume).toFixed(1)}" width="${barW.toFixed(1)}" height="${(PAD.top + plotH - y(d.payoutVolume)).toFixed(1)}" fill="#c2410c"/>`
          : '';
      return pin + pout;
    })
    .join('');
  const points = days
    .map((d, i) => {
      const rate = successRate(d);
      return rate === null
        ? null
        : `${(PAD.left + (i + 0.5) * slot).toFixed(1)},${(PAD.top + plotH - rate * plotH).toFixed(1)}`;
    })
    .filter((p) => p !== null);
  const line = points.length
    ? `<polyline points="${points.join(' ')}" fill="none" stroke="#15803d" stroke-width="2"/>${points.map((p) => `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="2.5" fill="#15803d"/>`).join('')}`
    : '';
  const ticks = [0, 0.5, 1]
    .map((f) => {
      const ty = PAD.top + plotH - f * plotH;
      return `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${ty}" y2="${ty}" stroke="#d5dbe8"/><text x="${PAD.left - 6}" y="${ty + 4}" text-anchor="end">${currency === 'INR' ? '₹' : ''}${shortRupees(max * f)}</text><text x="${W - PAD.right + 6}" y="${ty + 4}">${Math.round(f * 100)}%</text>`;
    })
    .join('');
  const labels = days
    .map((d, i) =>
      i % 5 === 0 || i === days.length - 1
        ? `<text x="${(PAD.left + (i + 0.5) * slot).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${d.date.slice(5)}</text>`
        : '',
    )
    .join('');
  const legendY = H - 8;
  return `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title" font-size="11" fill="#344054" font-family="system-ui,sans-serif">
<title id="chart-title">Pay-in and payout volume (bars) and success rate (line) by day, last ${days.length} days; the figures are in the table below</title>
${ticks}${bars}${line}${labels}
<rect x="${PAD.left}" y="${legendY - 9}" width="10" height="10" fill="#1d4ed8"/><text x="${PAD.left + 14}" y="${legendY}">Pay-in volume</text>
<rect x="${PAD.left + 120}" y="${legendY - 9}" width="10" height="10" fill="#c2410c"/><text x="${PAD.left + 134}" y="${legendY}">Payout volume</text>
<line x1="${PAD.left + 240}" x2="${PAD.left + 256}" y1="${legendY - 4}" y2="${legendY - 4}" stroke="#15803d" stroke-width="2"/><text x="${PAD.left + 260}" y="${legendY}">Success rate</text>
</svg>`;
}

export function overviewBody(
  wallets: { currency: string; available: number; held: number }[],
  days: DayPoint[],
  scopeForm: string,
  currency = 'INR',
): string {
  const balances = wallets.length
    ? wallets
        .map(
          (
            w,
          ) => `<div class="stat"><p>Available (${esc(w.currency)})</p><strong>${money(w.available, w.currency)}</strong></div>
<div class="stat"><p>Held for payouts (${esc(w.currency)})</p><strong>${money(w.held, w.currency)}</strong></div>`,
        )
        .join('')
    : `<div class="stat"><p>Available</p><strong>${money(0)}</strong></div><div class="stat"><p>Held for payouts</p><strong>${money(0)}</strong></div>`;
  const total = days.reduce(
    (t, d) => ({
      pin: t.pin + d.payinVolume,
      pout: t.pout + d.payoutVolume,
      refunds: t.refunds + d.refundVolume,
      ok: t.ok + d.succeeded,
      ko: t.ko + d.failed,
    }),
    { pin: 0, pout: 0, refunds: 0, ok: 0, ko: 0 },
  );
  // Rupee amounts show their ₹; another currency is named.
  const unit = currency === 'INR' ? '' : ` (${esc(currency)})`;
  const rate = total.ok + total.ko === 0 ? '–' : `${((100 * total.ok) / (total.ok + total.ko)).toFixed(1)}%`;
  const rows = [...days].reverse().map((d) => {
    const r = successRate(d);
    return `<tr><td>${d.date}</td><td class="num">${formatAmount(d.payinVolume)}</td><td class="num">${formatAmount(d.payoutVolume)}</td><td class="num">${formatAmount(d.refundVolume)}</td><td class="num">${d.succeeded}</td><td class="num">${d.failed}</td><td class="num">${r === null ? '–' : `${(r * 100).toFixed(1)}%`}</td></tr>`;
  });
  return `${scopeForm}<div class="stats">${balances}
<div class="stat"><p>Pay-ins${unit}, ${days.length} days</p><strong>${money(total.pin, currency)}</strong></div>
<div class="stat"><p>Payouts${unit}, ${days.length} days</p><strong>${money(total.pout, currency)}</strong></div>
<div class="stat"><p>Refunds${unit}, ${days.length} days</p><strong>${money(total.refunds, currency)}</strong></div>
<div class="stat"><p>Success rate, ${days.length} days</p><strong>${rate}</strong></div>
</div>
<section class="card" aria-labelledby="by-day"><h2 id="by-day">By day (IST)${currency === 'INR' ? '' : `, ${esc(currency)}`}</h2>${chart(days, currency)}
<details><summary>The figures by day</summary>
${scrollTable('Volume and success rate by day', ['Day (IST)', `#Pay-ins (${currency === 'INR' ? '₹' : esc(currency)})`, `#Payouts (${currency === 'INR' ? '₹' : esc(currency)})`, `#Refunds (${currency === 'INR' ? '₹' : esc(currency)})`, '#Succeeded', '#Failed', '#Success rate'], rows, 'No transactions yet.')}</details></section>`;
}
