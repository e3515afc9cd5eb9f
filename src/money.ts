/**
 * The one place where amounts are parsed, formatted and added. Inside Paygate money is an integer
 * number of paise; rupees exist only at the edges (JSON in, JSON out, the CLI).
 */

/**
 * Number of decimal places in the decimal text a JSON number was most likely written as.
 * `String(n)` gives the shortest text that reads back as the same double, which is the text the
 * merchant wrote for every amount with up to 15 significant digits.
 */
export function decimalPlaces(n: number): number {
  const text = String(n);
  const exp = /e([+-]\d+)$/.exec(text);
  const mantissa = exp ? text.slice(0, exp.index) : text;
  const dot = mantissa.indexOf('.');
  const fraction = dot === -1 ? 0 : mantissa.length - dot - 1;
  return Math.max(0, fraction - (exp ? Number(exp[1]) : 0));
}

/** Rupees (a JSON number with at most 2 decimals) to paise. The caller has validated the number. */
export function toPaise(rupees: number): number {
  return Math.round(rupees * 100);
}

/** Paise to the JSON number an API response carries (500, 500.5). */
export function toRupees(paise: number): number {
  return paise / 100;
}

/** Paise to text with exactly two decimals ("500.00"): the callback amount and the UPI `am` field. */
export function formatAmount(paise: number): string {
  const sign = paise < 0 ? '-' : '';
  const abs = Math.abs(paise);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Paise in Indian digit grouping for people: ₹1,23,456.50. */
export function formatIndian(paise: number): string {
  const [whole = '0', fraction = '00'] = formatAmount(paise).split('.');
  const last3 = whole.slice(-3);
  const rest = whole.slice(0, -3);
  const grouped = rest ? `${rest.replace(/\B(?=(\d{2})+(?!\d))/g, ',')},${last3}` : last3;
  return `₹${grouped}.${fraction}`;
}

/**
 * Parses operator input such as "1000.00" or "1000" into paise, or returns null.
 * Text, not a float, so no rounding can creep in.
 */
export function parseAmountText(text: string): number | null {
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (!m) return null;
  const paise = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return Number.isSafeInteger(paise) ? paise : null;
}

/** The fee on an amount in basis points, rounded down to the paisa (the merchant is never over-charged). */
export function feeFor(paise: number, bps: number): number {
  // paise * bps passes 2^53 for large amounts and the float product rounds up; split off whole
  // multiples of 10 000 so that every intermediate stays exact.
  return Math.floor(paise / 10_000) * bps + Math.floor(((paise % 10_000) * bps) / 10_000);
}
