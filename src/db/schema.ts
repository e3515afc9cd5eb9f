/**
 * Row types of every table, as stored. API types live with their features; mapping functions
 * turn rows into what the API shows. Amounts are integer paise, times are epoch milliseconds.
 */
import type { Generated } from 'kysely';
import type {
  UserTable,
  SessionTable,
  SignInFailureTable,
  FormTakenTable,
  AuditActionTable,
  ReconcileRunTable,
  ReconcileMismatchTable,
  ReconcileLeaseTable,
} from './schema.operations.ts';
export * from './schema.operations.ts';

export type MerchantMode = 'test' | 'live';
export type MerchantStatus = 'active' | 'disabled';

export interface MerchantTable {
  id: string;
  name: string;
  mode: MerchantMode;
  status: MerchantStatus;
  callback_url: string | null;
  vpa: string;
  /** HMAC key for callbacks. Kept as is because signing needs it; never logged or returned after creation. */
  webhook_secret: string;
  /** The secret before the last rotation; it signs beside the current one until `previous_secret_until`. */
  previous_webhook_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
}

export interface ApiKeyTable {
  id: string;
  merchant_id: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  key_hash: string;
  /** The first characters of the key, for operators to tell keys apart. */
  key_prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export interface WalletTable {
  merchant_id: string;
  currency: string;
  available: number;
  held: number;
  updated_at: number;
}

export interface LedgerEntryTable {
  id: Generated<number>;
  journal_id: string;
  /** What moved the money: topup, payin, payin_fee, payout_hold, payout_success, payout_release, refund_hold, refund_success, refund_release. */
  kind: string;
  merchant_id: string;
  currency: string;
  /** available | held for the merchant's wallet; external:* for the other side of a journal. */
  account: string;
  /** Signed paise; the entries of one journal add up to zero. */
  amount: number;
  payment_id: string | null;
  created_at: number;
}

export type TransactionKind = 'payin' | 'payout' | 'refund';
export type Flow = 'onsite' | 'offsite' | 'p2p' | 'payout' | 'refund';
export type TransactionStatus = 'PENDING' | 'PROCESSING' | 'SUCCESS' | 'FAILED';

export interface TransactionTable {
  payment_id: string;
  merchant_id: string;
  kind: TransactionKind;
  flow: Flow;
  merchant_order_no: string;
  amount: number;
  currency: string;
  status: TransactionStatus;
  utr: string;
  channel_txn_id: string;
  channel: string;
  user_name: string | null;
  user_phone: string | null;
  user_email: string | null;
  callback_url: string | null;
  redirect_url: string | null;
  receiver_name: string | null;
  receiver_account_no: string | null;
  receiver_ifsc: string | null;
  /** SHA-256 of the normalised creation request: a repeat with the same hash replays `response_json`. */
  request_hash: string;
  response_json: string;
  expires_at: number | null;
  /** When a worker should next look at this transaction (payout submission and settlement). */
  next_action_at: number | null;
  /** A worker that claimed the transaction owns it until then. */
  lease_until: number | null;
  created_at: number;
  updated_at: number;
  finalized_at: number | null;
  /** The UPI intent a live channel handed out for a pay-in (its `tr` is the channel's reference), or null. */
  upi_intent: string | null;
  /**
   * One more than the sends of a PENDING payout that may have reached its channel, while a worker
   * holds it (the claim counts the send about to be made, before it is made; a step that sent
   * nothing, or whose send the channel certainly did not act on, takes it back). Above one, the
   * channel is asked before anything is sent again.
   */
  submit_attempts: number;
  /**
   * When a read after a send of unknown outcome first found that the channel does not know the
   * payout; it is sent again only when a read at least CHANNEL_POLL_MS later says so too. Null otherwise.
   */
  not_found_at: number | null;
  /** Reads of the transaction that failed in a row (an error, 5xx or no answer); 0 after one that did not. */
  read_failures: number;
  /** When a payout's money came back after SUCCESS (the beneficiary's bank returned it), or null. */
  reversed_at: number | null;
  /** A refund's pay-in (its payment_id); null for pay-ins and payouts. A refund's `merchant_order_no` is its merchant_refund_no. */
  refund_of: string | null;
  /** The merchant's reason for a refund, or null. */
  reason: string | null;
  /**
   * The provider's id of a payment (Setu's payment `id`): for a pay-in, the payment that paid it;
   * for a refund, the payment it returns. Null when the channel has none or it is not known.
   */
  channel_payment_id: string | null;
  /** That payment's transaction id at the provider (Setu's `txnId`: its refunds are listed under it), or null. */
  channel_payment_txn_id: string | null;
  /** Why the channel FAILED the transaction, when it said (an NPCI refusal of a refund), else null. */
  failure_reason: string | null;
  /** A refund from suspense: the exception whose money it returns (kept after the exception is freed); else null. */
  exception_id: number | null;
  /**
   * A payout's current transfer: 1 is sent as the payment_id, a later one as `{payment_id}_{n}`,
   * after the provider failed the one before for Paygate's own account (`payout_transfers`).
   */
  transfer_attempt: number;
}

/** A payout's transfer that the provider failed for Paygate's own account, kept beside the payout. */
export interface PayoutTransferTable {
  payment_id: string;
  attempt: number;
  /** The transfer id it was sent under. */
  transfer_id: string;
  /** The provider's id of that transfer ("" when it gave none). */
  channel_txn_id: string;
  /** The provider's status (FAILED, REJECTED) and its code (INSUFFICIENT_BALANCE, …). */
  status: string;
  status_code: string;
  /** The `channel_account` exception the payout waits on; resolving it sends the next transfer. */
  exception_id: number;
  recorded_at: number;
}

export interface TransactionEventTable {
  id: Generated<number>;
  payment_id: string;
  status: TransactionStatus;
  source: string;
  created_at: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface CallbackDeliveryTable {
  id: string;
  payment_id: string;
  merchant_id: string;
  url: string;
  /** The exact bytes sent, so every attempt and its signature carry the same text. */
  body: string;
  /** `webhook-id`: one per event (a final status, a reversal, a refund's final status), kept by its resends. */
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

export interface CallbackAttemptTable {
  id: Generated<number>;
  delivery_id: string;
  attempt_no: number;
  started_at: number;
  latency_ms: number;
  http_status: number | null;
  /** blocked_address, timeout, refused, reset, dns, tls, redirect, http_status, error */
  error_kind: string | null;
  response_snippet: string | null;
}

/** `failed`: it could not be applied after a bounded number of tries; a `notification_failed` exception says so. */
export type ChannelEventState = 'pending' | 'applied' | 'failed';

/** A verified notification from a channel, stored before it is answered and applied once. */
export interface ChannelEventTable {
  id: Generated<number>;
  /** setu | cashfree */
  provider: string;
  /** The provider's event id, or a SHA-256 of the body where the provider gives none. */
  event_id: string;
  /** The Paygate transaction it names, when it names one. */
  payment_id: string | null;
  /** The provider's id of the payment or transfer. */
  reference: string;
  type: string;
  /** The body as text, with what the databases' text and JSON cannot hold (NUL, lone surrogates) replaced by U+FFFD. */
  body: string;
  /** The body's exact bytes in base64 when `body` is not exactly them (a 0x00 byte, bytes that are not UTF-8), else null. */
  raw_base64: string | null;
  /** Tries to apply it that failed; at NOTIFICATION_APPLY_TRIES it is `failed`. */
  apply_attempts: Generated<number>;
  state: ChannelEventState;
  /** When a worker may apply it, if the request that stored it did not. */
  next_action_at: number | null;
  lease_until: number | null;
  received_at: number;
  applied_at: number | null;
}

/** Something a channel reported that no status change covers, kept for the operator. */
export interface ChannelExceptionTable {
  id: Generated<number>;
  /**
   * amount_mismatch, payment_after_final, unknown_reference, reversal, stuck, … (`ExceptionKind`);
   * signature_failures and channel_silent are one while open (a unique index over the open ones).
   */
  kind: string;
  provider: string;
  payment_id: string | null;
  /** What makes it one exception: the provider's payment or transfer id, or the payment_id. */
  reference: string;
  /** Paise, when the channel reported an amount that could be read. */
  amount: number | null;
  /** The channel's own text of an amount it reported that could not be read exactly, else null. */
  amount_text: string | null;
  detail: string;
  created_at: number;
  /** The merchant it concerns (the transaction's, or the one whose UPI id was paid), else null. */
  merchant_id: string | null;
  currency: Generated<string>;
  /** The money it holds: customers' money in `external:suspense`, a merchant's debt in `external:receivable`, or null. */
  holds: ExceptionHolds | null;
  /** Paise still held (suspense) or owed (receivable); 0 once resolved. */
  outstanding: Generated<number>;
  /** The refund from suspense in flight for it; while set, no other money action is taken. */
  refund_id: string | null;
  resolved_at: number | null;
  /** The user's email, `cli`, or `channel` when the channel settled it (a refund, a reversal). */
  resolved_by: string | null;
  /** refund, credit, debit, dismiss, or reversed (the money came back by itself). */
  resolution: string | null;
  /** The operator's note (required to dismiss). */
  note: string | null;
}

export type ExceptionHolds = 'suspense' | 'receivable';

export type DisputeStatus = 'open' | 'won' | 'lost';

/** A customer's dispute of a pay-in, beside its `dispute` exception (CONTRACT §10 "Disputes"). */
export interface DisputeTable {
  /** The `dispute` exception that shows it to operators. */
  exception_id: number;
  provider: string;
  /** The provider's id of the dispute. */
  dispute_id: string;
  /** The pay-in disputed, or null when the provider's payment names none here. */
  payin_id: string | null;
  merchant_id: string | null;
  currency: string;
  /** Paise disputed, or null when the provider's amount could not be read. */
  amount: number | null;
  /** Open: the pay-in cannot be refunded. Won or lost: decided, by an operator or the provider. */
  status: DisputeStatus;
  /** A lost dispute's refund to the customer, if any. */
  refund_id: string | null;
  /** Paise that refund returns. */
  refunded: Generated<number>;
  /** Paise of it the merchant's available balance lacked: owed on the exception (`external:receivable`). */
  owed: Generated<number>;
  opened_at: number;
  decided_at: number | null;
  /** A user's email, `cli`, or `channel` (the provider's own closing status). */
  decided_by: string | null;
}

/**
 * A provider's calls from the whole cluster (PostgreSQL): the next turn to call it, its pause
 * after a 429, and its back-off while every call fails. Times in ms on the database's clock.
 */
export interface ChannelLimitTable {
  channel: string;
  next_turn_at: number;
  paused_until: number;
  /** Calls that failed in a row (5xx or no answer), from any process. */
  failures: number;
  /** The gap between calls while the provider fails them all; 0 when it does not. */
  backoff_ms: number;
  /** When `backoff_ms` last changed. */
  backoff_at: number;
}

export interface Tables {
  merchants: MerchantTable;
  api_keys: ApiKeyTable;
  wallets: WalletTable;
  ledger_entries: LedgerEntryTable;
  transactions: TransactionTable;
  transaction_events: TransactionEventTable;
  callback_deliveries: CallbackDeliveryTable;
  callback_attempts: CallbackAttemptTable;
  channel_events: ChannelEventTable;
  channel_exceptions: ChannelExceptionTable;
  disputes: DisputeTable;
  users: UserTable;
  sessions: SessionTable;
  sign_in_failures: SignInFailureTable;
  audit_actions: AuditActionTable;
  forms_taken: FormTakenTable;
  reconcile_runs: ReconcileRunTable;
  reconcile_mismatches: ReconcileMismatchTable;
  reconcile_leases: ReconcileLeaseTable;
  payout_transfers: PayoutTransferTable;
  channel_limits: ChannelLimitTable;
}
