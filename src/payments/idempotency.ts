/**
 * Order-number idempotency (CONTRACT §3): a repeat of a `merchant_order_no` with the same
 * (normalised) request replays the original response; with another request it is a conflict.
 */
import { sha256Hex } from '../ids.ts';

/** A stable hash of a normalised request: keys sorted, undefined dropped. */
export function requestHash(normalised: Record<string, unknown>): string {
  return sha256Hex(JSON.stringify(normalised, Object.keys(normalised).sort()));
}

export interface Created<T> {
  body: T | string;
  /** True when this is a replay of an earlier creation. */
  replayed: boolean;
}
