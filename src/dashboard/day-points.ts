/**
 * The overview chart's series: one point per IST day of a window, built from the sums by day and
 * kind that the repository reads; a day without transactions is a point of zeros.
 */
import { DAY_MS, IST_OFFSET_MS, istDate } from '../ist.ts';
import type { DayStats } from './dashboard.repository.ts';

export interface DayPoint {
  /** YYYY-MM-DD, an IST day. */
  date: string;
  payinVolume: number;
  payoutVolume: number;
  refundVolume: number;
  /** Pay-ins that succeeded and failed: the success rate is of pay-ins, what customers tried to pay. */
  succeeded: number;
  failed: number;
  /** Payouts that succeeded and failed. */
  payoutsSucceeded: number;
  payoutsFailed: number;
}

/** `count` points from the IST day that starts at `first`, with `stats` of those days added in. */
export function dayPoints(stats: DayStats[], first: number, count: number): DayPoint[] {
  const days: DayPoint[] = [];
  const firstDay = Math.floor((first + IST_OFFSET_MS) / DAY_MS);
  for (let i = 0; i < count; i++) {
    days.push({
      date: istDate(first + i * DAY_MS),
      payinVolume: 0,
      payoutVolume: 0,
      refundVolume: 0,
      succeeded: 0,
      failed: 0,
      payoutsSucceeded: 0,
      payoutsFailed: 0,
    });
  }
  for (const s of stats) {
    const point = days[s.day - firstDay];
    if (!point) continue;
    if (s.kind === 'payin') {
      point.payinVolume += s.volume;
      point.succeeded += s.succeeded;
      point.failed += s.failed;
    } else if (s.kind === 'refund') point.refundVolume += s.volume;
    else {
      point.payoutVolume += s.volume;
      point.payoutsSucceeded += s.succeeded;
      point.payoutsFailed += s.failed;
    }
  }
  return days;
}
