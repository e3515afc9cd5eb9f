/**
 * Order-number idempotency (docs/integration.md §6): a repeat of a `merchant_order_no` with the same
 * (normalised) request replays the original response; with another request it is a conflict.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { sha256Hex } from '../ids.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import { findByOrderNo, type TransactionRow } from '../transactions/transactions.repository.ts';

/** A stable hash of a normalised request: keys sorted, undefined dropped. */
export function requestHash(normalised: Record<string, unknown>): string {
  return sha256Hex(JSON.stringify(normalised, Object.keys(normalised).sort()));
}

/** What a creation answers: the response body (stored JSON on a replay) and whether it is a replay. */
export interface Created<T> {
  body: T | string;
  /** True when this is a replay of an earlier creation. */
  replayed: boolean;
}

/** After an order-number conflict: the original response when the request is the same, else 409. */
export async function replayOrConflict(
  db: Kysely<Tables>,
  principal: Principal,
  kind: 'payin' | 'payout',
  orderNo: string,
  hash: string,
): Promise<Created<never>> {
  return replayOf(await findByOrderNo(db, principal.merchantId, kind, orderNo), kind, hash);
}

/** The same, for the row with that order number already read (or none). */
export function replayOf(
  existing: Pick<TransactionRow, 'payment_id' | 'request_hash' | 'response_json'> | undefined,
  kind: 'payin' | 'payout',
  hash: string,
): Created<never> {
  if (existing && existing.request_hash === hash) return { body: existing.response_json, replayed: true };
  throw new AppError(
    'DUPLICATE_ORDER_NO',
    `merchant_order_no was already used for another ${kind === 'payin' ? 'pay-in' : 'payout'} request`,
    existing ? { payment_id: existing.payment_id } : {},
  );
}
