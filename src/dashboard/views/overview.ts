/** The overview: balances, and volume and success rate by IST day as an SVG chart drawn here. */
import type { DayPoint } from '../day-points.ts';
import { dayCell, esc, money, scrollTable } from './layout.ts';
import { formatAmount } from '../../money.ts';
import { istDayLabel } from '../../ist.ts';

/**
 * The chart's two drawings: its text is drawn at `font` user units, so its size on screen is `font`
 * times the width it is shown at over `w`. The wide one is shown from 50rem (text ≥ 12 px there),
 * the narrow one below (≥ 13 px at 390 px): a single drawing scaled to a phone shrinks its text to
 * about 5 px.
 */
interface Drawing {
  name: 'wide' | 'narrow';
  w: number;
  h: number;
  pad: { left: number; right: number; top: number; bottom: number };
  font: number;
  /** A date under every `every`th bar, counted back from today's. */
  every: number;
  legend: [string, number][];
}

const WIDE: Drawing = {
  name: 'wide',
  w: 720,
  h: 260,
  pad: { left: 64, right: 48, top: 16, bottom: 44 },
  font: 12,
  every: 5,
  legend: [
    ['Pay-in volume', 64],
    ['Payout volume', 194],
    ['Pay-in success rate', 324],
  ],
};

const NARROW: Drawing = {
  name: 'narrow',
  w: 360,
  h: 250,
  pad: { left: 54, right: 50, top: 14, bottom: 50 },
  font: 14,
  every: 7,
  legend: [
    ['Pay-ins', 8],
    ['Payouts', 88],
    ['Pay-in success', 168],
  ],
};

/** The share of final pay-ins that succeeded, or null when none was final. */
function successRate(d: Pick<DayPoint, 'succeeded' | 'failed'>): number | null {
  const final = d.succeeded + d.failed;
  return final === 0 ? null : d.succeeded / final;
}

function percent(rate: number | null): string {
  return rate === null ? '–' : `${(rate * 100).toFixed(1)}%`;
}

/** A short rupee figure for an axis: 1.2L, 3.4Cr. */
function shortRupees(paise: number): string {
  const r = paise / 100;
  if (r >= 1e7) return `${(r / 1e7).toFixed(1)}Cr`;
  if (r >= 1e5) return `${(r / 1e5).toFixed(1)}L`;
  if (r >= 1e3) return `${(r / 1e3).toFixed(1)}k`;
  return r.toFixed(0);
}

/** Bars of pay-in and payout volume per day, and the success rate as a line on its own axis: drawn for a wide screen and for a phone. */
export function chart(days: DayPoint[], currency = 'INR'): string {
  return drawing(WIDE, days, currency) + drawing(NARROW, days, currency);
}

function drawing(d: Drawing, days: DayPoint[], currency: string): string {
  const { w: W, h: H, pad: PAD } = d;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const max = Math.max(1, ...days.map((p) => Math.max(p.payinVolume, p.payoutVolume)));
  const slot = plotW / days.length;
  const barW = Math.max(2, slot / 2 - 2);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const bars = days
    .map((p, i) => {
      const x = PAD.left + i * slot + 1;
      const pin =
        p.payinVolume > 0
          ? `<rect x="${x.toFixed(1)}" y="${y(p.payinVolume).toFixed(1)}" width="${barW.toFixed(1)}" height="${(PAD.top + plotH - y(p.payinVolume)).toFixed(1)}" fill="#1d4ed8"/>`
          : '';
      const pout =
        p.payoutVolume > 0
          ? `<rect x="${(x + barW + 1).toFixed(1)}" y="${y(p.payoutVolume).toFixed(1)}" width="${barW.toFixed(1)}" height="${(PAD.top + plotH - y(p.payoutVolume)).toFixed(1)}" fill="#c2410c"/>`
          : '';
      return pin + pout;
    })
    .join('');
  const points = days
    .map((p, i) => {
      const rate = successRate(p);
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
      return `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${ty}" y2="${ty}" stroke="#d5dbe8"/><text x="${PAD.left - 6}" y="${ty + d.font / 3}" text-anchor="end">${currency === 'INR' ? '₹' : ''}${shortRupees(max * f)}</text><text x="${W - PAD.right + 6}" y="${ty + d.font / 3}">${Math.round(f * 100)}%</text>`;
    })
    .join('');
  const labels = days
    .map((p, i) =>
      (days.length - 1 - i) % d.every === 0
        ? `<text x="${(PAD.left + (i + 0.5) * slot).toFixed(1)}" y="${H - PAD.bottom + d.font + 4}" text-anchor="middle">${istDayLabel(p.date)}</text>`
        : '',
    )
    .join('');
  const legendY = H - 8;
  const box = d.font - 2;
  const [pin, pout, rate] = d.legend;
  return `<svg class="chart ${d.name}" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title-${d.name}" font-size="${d.font}" fill="#344054" font-family="system-ui,sans-serif">
<title id="chart-title-${d.name}">Pay-in and payout volume (bars) and pay-in success rate (line) by day, last ${days.length} days; the figures are in the table below</title>
${ticks}${bars}${line}${labels}
<rect x="${pin![1]}" y="${legendY - box + 1}" width="${box}" height="${box}" fill="#1d4ed8"/><text x="${pin![1] + box + 4}" y="${legendY}">${pin![0]}</text>
<rect x="${pout![1]}" y="${legendY - box + 1}" width="${box}" height="${box}" fill="#c2410c"/><text x="${pout![1] + box + 4}" y="${legendY}">${pout![0]}</text>
<line x1="${rate![1]}" x2="${rate![1] + box + 4}" y1="${legendY - box / 2 + 1}" y2="${legendY - box / 2 + 1}" stroke="#15803d" stroke-width="2"/><text x="${rate![1] + box + 8}" y="${legendY}">${rate![0]}</text>
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
<div class="stat"><p>Held for payouts and refunds (${esc(w.currency)})</p><strong>${money(w.held, w.currency)}</strong></div>`,
        )
        .join('')
    : `<div class="stat"><p>Available</p><strong>${money(0)}</strong></div><div class="stat"><p>Held for payouts and refunds</p><strong>${money(0)}</strong></div>`;
  const total = days.reduce(
    (t, d) => ({
      pin: t.pin + d.payinVolume,
      pout: t.pout + d.payoutVolume,
      refunds: t.refunds + d.refundVolume,
      ok: t.ok + d.succeeded,
      ko: t.ko + d.failed,
      poutOk: t.poutOk + d.payoutsSucceeded,
      poutKo: t.poutKo + d.payoutsFailed,
    }),
    { pin: 0, pout: 0, refunds: 0, ok: 0, ko: 0, poutOk: 0, poutKo: 0 },
  );
  // Rupee amounts show their ₹; another currency is named.
  const unit = currency === 'INR' ? '' : ` (${esc(currency)})`;
  const symbol = currency === 'INR' ? '₹' : esc(currency);
  const rows = [...days].reverse().map((d) => {
    return `<tr><td>${dayCell(d.date)}</td><td class="num">${formatAmount(d.payinVolume)}</td><td class="num">${formatAmount(d.payoutVolume)}</td><td class="num">${formatAmount(d.refundVolume)}</td><td class="num">${d.succeeded}</td><td class="num">${d.failed}</td><td class="num">${percent(successRate(d))}</td></tr>`;
  });
  return `${scopeForm}<div class="stats">${balances}
<div class="stat"><p>Pay-ins${unit}, ${days.length} days</p><strong>${money(total.pin, currency)}</strong></div>
<div class="stat"><p>Payouts${unit}, ${days.length} days</p><strong>${money(total.pout, currency)}</strong></div>
<div class="stat"><p>Refunds${unit}, ${days.length} days</p><strong>${money(total.refunds, currency)}</strong></div>
<div class="stat"><p>Pay-in success rate, ${days.length} days</p><strong>${percent(successRate({ succeeded: total.ok, failed: total.ko }))}</strong></div>
<div class="stat"><p>Payout success rate, ${days.length} days</p><strong>${percent(successRate({ succeeded: total.poutOk, failed: total.poutKo }))}</strong></div>
</div>
<section class="card" aria-labelledby="by-day"><h2 id="by-day">By day (IST)${currency === 'INR' ? '' : `, ${esc(currency)}`}</h2>${chart(days, currency)}
<details><summary>The figures by day</summary>
${scrollTable('Volume and pay-in success rate by day', ['Day (IST)', `#Pay-ins (${symbol})`, `#Payouts (${symbol})`, `#Refunds (${symbol})`, '#Pay-ins succeeded', '#Pay-ins failed', '#Pay-in success rate'], rows, 'No transactions yet.')}</details></section>`;
}

/**
 * What waits for the user, above the figures: callbacks that failed every attempt (each a link to
 * the list filtered to them) and open exceptions; a count of nothing is said too, so its absence
 * is news.
 */
export function attentionCards(
  failedDeliveries: number,
  deliveriesHref: string,
  openExceptions: number,
): string {
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return `<div class="stats attention"><p class="stat" id="failed-deliveries"><a href="${esc(deliveriesHref)}">${plural(failedDeliveries, 'transaction', 'transactions')} whose callback failed every attempt</a></p><p class="stat" id="open-exceptions"><a href="/dashboard/exceptions">${plural(openExceptions, 'open exception', 'open exceptions')}</a></p></div>`;
}
