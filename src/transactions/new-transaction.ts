/**
 * The one builder of a new `transactions` row. A creation path names what it decides; every other
 * column starts as the table itself starts it.
 */
import type { Insertable } from 'kysely';
import type { TransactionTable } from '../db/schema.ts';
import type { TransactionRow } from './transactions.repository.ts';

/** Columns with a default besides the nullable ones (which start null). */
type Defaulted =
  'utr' | 'channel_txn_id' | 'submit_attempts' | 'read_failures' | 'updated_at' | 'transfer_attempt';

/**
 * What a creation path decides: every column without a default (payment_id, merchant, kind, flow,
 * order number, amount, currency, status, channel, request hash, stored response, created_at), and
 * any defaulted column it sets otherwise. kysely's `Insertable` already leaves the nullable columns
 * out; `Defaulted` adds the rest.
 */
export type NewTransaction = Omit<Insertable<TransactionTable>, Defaulted> &
  Partial<Pick<TransactionRow, Defaulted>>;

/**
 * A full row for `insertTransactions`, which names every column in its statement: the defaults are
 * filled here with what the table's own defaults are (`''` for the channel's references, no sends
 * yet, null for the rest), and a row is last updated when it is created unless it says otherwise.
 */
export function newTransaction(t: NewTransaction): TransactionRow {
  return {
    payment_id: t.payment_id,
    merchant_id: t.merchant_id,
    kind: t.kind,
    flow: t.flow,
    merchant_order_no: t.merchant_order_no,
    amount: t.amount,
    currency: t.currency,
    status: t.status,
    utr: t.utr ?? '',
    channel_txn_id: t.channel_txn_id ?? '',
    channel: t.channel,
    user_name: t.user_name ?? null,
    user_phone: t.user_phone ?? null,
    user_email: t.user_email ?? null,
    callback_url: t.callback_url ?? null,
    redirect_url: t.redirect_url ?? null,
    receiver_name: t.receiver_name ?? null,
    receiver_account_no: t.receiver_account_no ?? null,
    receiver_ifsc: t.receiver_ifsc ?? null,
    request_hash: t.request_hash,
    response_json: t.response_json,
    expires_at: t.expires_at ?? null,
    next_action_at: t.next_action_at ?? null,
    lease_until: t.lease_until ?? null,
    created_at: t.created_at,
    updated_at: t.updated_at ?? t.created_at,
    finalized_at: t.finalized_at ?? null,
    upi_intent: t.upi_intent ?? null,
    submit_attempts: t.submit_attempts ?? 0,
    not_found_at: t.not_found_at ?? null,
    read_failures: t.read_failures ?? 0,
    reversed_at: t.reversed_at ?? null,
    refund_of: t.refund_of ?? null,
    reason: t.reason ?? null,
    channel_payment_id: t.channel_payment_id ?? null,
    channel_payment_txn_id: t.channel_payment_txn_id ?? null,
    failure_reason: t.failure_reason ?? null,
    exception_id: t.exception_id ?? null,
    transfer_attempt: t.transfer_attempt ?? 1,
  };
}
