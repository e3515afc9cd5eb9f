/** The status view: how a stored payment of either kind is shown to the merchant (docs/integration.md §4). */
import { toRupees } from '../money.ts';
import type { StatusResponse } from './payments.schemas.ts';

/** A payment's status response, amounts in rupees. */
export function toStatusResponse(v: {
  status: string;
  amount: number;
  currency: string;
  channel_txn_id: string;
  utr: string;
}): StatusResponse {
  return {
    status: v.status as StatusResponse['status'],
    money: { amount: toRupees(v.amount), currency: v.currency },
    channel_txn_id: v.channel_txn_id,
    utr: v.utr,
  };
}
