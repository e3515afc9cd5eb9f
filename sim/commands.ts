/**
 * The simulator's commands: plain JSON, so a failing list can be printed, shrunk and replayed.
 * Every command names what it acts on by an index taken modulo what exists when it runs (a list
 * with commands removed still runs), and carries `f`, the seed of the faults its calls meet.
 */
import { Rng, weighted } from './rng.ts';

export type Command =
  | { c: 'payin'; m: number; amount: number; flow: 'onsite' | 'offsite' | 'p2p'; f: number }
  | { c: 'pay'; i: number; how: 'exact' | 'other' | 'twice' | 'late' | 'fail'; f: number }
  | { c: 'payout'; m: number; amount: number; f: number }
  | { c: 'bank'; i: number; status: 'SUCCESS' | 'FAILED' | 'REVERSED'; f: number }
  | { c: 'refund'; i: number; part: 'full' | 'half' | 'paisa' | 'rest' | 'over'; twice: boolean; f: number }
  | { c: 'refundBank'; i: number; status: 'success' | 'failed' | 'late'; f: number }
  | { c: 'notice'; i: number; mode: 'deliver' | 'dup' | 'drop' | 'forge'; f: number }
  | { c: 'worker'; f: number }
  | { c: 'callbacks'; up: boolean; f: number }
  | { c: 'clock'; ms: number }
  | { c: 'crash'; f: number }
  | { c: 'reconcile'; channel: 'setu' | 'cashfree'; f: number }
  | { c: 'resolve'; i: number; action: 'refund' | 'credit' | 'debit' | 'dismiss'; f: number };

const WEIGHTS = {
  payin: 10,
  pay: 10,
  payout: 8,
  bank: 8,
  refund: 6,
  refundBank: 5,
  notice: 14,
  worker: 14,
  callbacks: 6,
  clock: 8,
  crash: 1,
  reconcile: 3,
  resolve: 3,
} as const;

/** Amounts that exercise fees' rounding: odd paise and round rupees, from the least a pay-in may be. */
function amount(rng: Rng): number {
  return rng.pick([100, 1_01, 9_99, 12_345, 50_000, 1_000_00, 2_500_00]);
}

function one(rng: Rng): Command {
  const f = rng.int(2 ** 31);
  const i = rng.int(1000);
  switch (weighted(rng, WEIGHTS)) {
    case 'payin':
      return {
        c: 'payin',
        m: rng.int(2),
        amount: amount(rng),
        flow: rng.pick(['onsite', 'offsite', 'p2p']),
        f,
      };
    case 'pay':
      return { c: 'pay', i, how: rng.pick(['exact', 'exact', 'exact', 'other', 'twice', 'late', 'fail']), f };
    case 'payout':
      return { c: 'payout', m: rng.int(2), amount: amount(rng), f };
    case 'bank':
      return { c: 'bank', i, status: rng.pick(['SUCCESS', 'SUCCESS', 'FAILED', 'REVERSED']), f };
    case 'refund':
      return {
        c: 'refund',
        i,
        part: rng.pick(['full', 'half', 'paisa', 'rest', 'over']),
        twice: rng.chance(0.2),
        f,
      };
    case 'refundBank':
      return { c: 'refundBank', i, status: rng.pick(['success', 'success', 'failed', 'late']), f };
    case 'notice':
      return { c: 'notice', i, mode: rng.pick(['deliver', 'deliver', 'deliver', 'dup', 'drop', 'forge']), f };
    case 'worker':
      return { c: 'worker', f };
    case 'callbacks':
      return { c: 'callbacks', up: rng.chance(0.7), f };
    case 'clock':
      return { c: 'clock', ms: rng.pick([1_000, 30_000, 61_000, 300_000, 960_000, 3_600_000]) };
    case 'crash':
      return { c: 'crash', f };
    case 'reconcile':
      return { c: 'reconcile', channel: rng.pick(['setu', 'cashfree']), f };
    case 'resolve':
      return { c: 'resolve', i, action: rng.pick(['refund', 'credit', 'debit', 'dismiss']), f };
  }
}

/** A history's commands and its fault rate, from its seed. */
export function generate(
  seed: number,
  length: number,
): { faultRate: number; autoRefund: boolean; commands: Command[] } {
  const rng = new Rng(seed);
  const faultRate = rng.pick([0, 0.05, 0.15, 0.3]);
  const autoRefund = rng.chance(0.5);
  return { faultRate, autoRefund, commands: Array.from({ length }, () => one(rng)) };
}
