/** IST days (UTC+05:30, no daylight saving) as reconciliation names them: YYYY-MM-DD. */

const IST_OFFSET_MS = 330 * 60_000;
const DAY_MS = 86_400_000;

/** The IST day an instant falls in. */
export function istDate(at: number): string {
  return new Date(at + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** The instants [from, to) of an IST day. */
export function istDayBounds(date: string): { from: number; to: number } {
  const from = Date.parse(`${date}T00:00:00.000Z`) - IST_OFFSET_MS;
  return { from, to: from + DAY_MS };
}

/** The day before `at`'s IST day. */
export function istYesterday(at: number): string {
  return istDate(at - DAY_MS);
}

/** Why `date` cannot be reconciled at `now` (not a calendar day, or in the future), or null. */
export function badDate(date: string, now: number): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const parsed = m ? Date.parse(`${date}T00:00:00.000Z`) : NaN;
  if (!m || Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== date)
    return `--date must be a day as YYYY-MM-DD, got "${date}"`;
  if (date > istDate(now)) return `--date ${date} is in the future (today in IST is ${istDate(now)})`;
  return null;
}

/** The instant of `minutes` after midnight on an IST day. */
export function istTimeOn(date: string, minutes: number): number {
  return istDayBounds(date).from + minutes * 60_000;
}
