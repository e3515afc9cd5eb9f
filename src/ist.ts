/**
 * India Standard Time (UTC+05:30, no daylight saving): the days that reconciliation, the console,
 * settlements and mandates count in, and the times Setu writes. The one place IST is computed.
 */

export const IST_OFFSET_MS = 330 * 60_000;
export const DAY_MS = 86_400_000;

/** The IST day an instant falls in, as YYYY-MM-DD. */
export function istDate(at: number): string {
  return new Date(at + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** Whether `date` is a calendar day written YYYY-MM-DD. */
export function isCalendarDate(date: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return false;
  const utc = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return !Number.isNaN(utc) && new Date(utc).toISOString().slice(0, 10) === date;
}

/** The instants [from, to) of an IST day. */
export function istDayBounds(date: string): { from: number; to: number } {
  const from = Date.parse(`${date}T00:00:00.000Z`) - IST_OFFSET_MS;
  return { from, to: from + DAY_MS };
}

/** The first instant of an IST day given as YYYY-MM-DD, or null when it is not a date. */
export function istDayStart(date: string): number | null {
  return isCalendarDate(date) ? istDayBounds(date).from : null;
}

/** The day before `at`'s IST day. */
export function istYesterday(at: number): string {
  return istDate(at - DAY_MS);
}

/** Why `date` cannot be reconciled at `now` (not a calendar day, or in the future), or null. */
export function badDate(date: string, now: number): string | null {
  if (!isCalendarDate(date)) return `--date must be a day as YYYY-MM-DD, got "${date}"`;
  if (date > istDate(now)) return `--date ${date} is in the future (today in IST is ${istDate(now)})`;
  return null;
}

/** The instant of `minutes` after midnight on an IST day. */
export function istTimeOn(date: string, minutes: number): number {
  return istDayBounds(date).from + minutes * 60_000;
}

/** An instant as an IST wall-clock time: 2026-11-25 14:03:12. */
export function istTime(at: number | null): string {
  if (at === null) return '';
  return new Date(at + IST_OFFSET_MS).toISOString().replace('T', ' ').slice(0, 19);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * An IST day (YYYY-MM-DD) as people read it: `28 Nov`, with the year when it is not `thisYear`'s
 * (`28 Nov 2025`). Text that is not a day is returned as it is.
 */
export function istDayLabel(date: string, thisYear?: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return date;
  const day = `${Number(m[3])} ${MONTHS[Number(m[2]) - 1] ?? m[2]}`;
  return thisYear === undefined || m[1] === thisYear ? day : `${day} ${m[1]}`;
}

/** An instant as people read it in IST: `28 Nov, 14:03:12`, with the year when it is not `now`'s. */
export function istDayTime(at: number, now: number = Date.now()): string {
  const text = istTime(at);
  return `${istDayLabel(text.slice(0, 10), istDate(now).slice(0, 4))}, ${text.slice(11)}`;
}

/** An instant as ISO 8601 in IST, to the millisecond: 2026-11-25T14:03:12.345+05:30. */
export function istIso(at: number | null): string {
  if (at === null) return '';
  return `${new Date(at + IST_OFFSET_MS).toISOString().slice(0, 23)}+05:30`;
}

/** RFC 3339 in IST to the second, as Setu writes its own times: 2026-11-23T16:47:00+05:30. */
export function istRfc3339(at: number): string {
  return `${new Date(at + IST_OFFSET_MS).toISOString().slice(0, 19)}+05:30`;
}
