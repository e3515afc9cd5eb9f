/**
 * The notification side of the Channel port: what a provider's signed notifications say, read
 * without the database. A reader checks the signature on the raw body, names what the
 * notification is stored as, and reads what it reports as a `Notice` that names Paygate's rows
 * by what the provider sent; the gateway finds those rows, holds the notice against them and
 * applies it (`src/live/`).
 */
import type { FinalOutcome, PayoutState } from './channel.ts';

/** A notification request's headers, as the HTTP server gives them. */
export type NotificationHeaders = Record<string, string | string[] | undefined>;

/** What a notification is stored under, as the provider sent it (the gateway bounds and checks it). */
export interface NotificationIdentity {
  /** The provider's id of the event; null when it gives none it keeps across retries (the body then keys it). */
  eventId: string | null;
  /** The payment_id it names, in whatever shape the provider sent; "" when it names none. */
  named: string;
  /** The provider's id of the payment or transfer it is about; "" when it has none. */
  reference: string;
  /** The event's type; "" when it has none. */
  type: string;
}

/**
 * A customer's payment of a pay-in. It is the pay-in's only when the pay-in is this channel's,
 * and the channel reference and payee UPI id it claims are the pay-in's: a payment_id alone could
 * be anybody's.
 */
export interface PaymentNotice {
  kind: 'payment';
  /** The payment_id it names. */
  named: string;
  /** The channel's reference of what was paid (the pay-in's `channel_txn_id`). */
  channelTxnId: string;
  /** The UPI id it says was paid. */
  payeeVpa: string;
  /** The payment as an outcome, its `channelTxnId` the one claimed. */
  outcome: FinalOutcome;
  /** The provider's reference of the payment, for an operator when it is nobody's. */
  reference: string;
  /** The amount paid in paise, or null when it cannot be read exactly. */
  amount: number | null;
  /** What it is, in the provider's words, for the operator: its type and the payment_id it names. */
  subject: string;
}

/** The state of a payout's transfer. */
export interface TransferNotice {
  kind: 'transfer';
  /** The payment_id it names. */
  named: string;
  state: PayoutState;
  /** The provider's reference of the transfer, for an operator when it is nobody's. */
  reference: string;
  /** What it is, in the provider's words, for the operator: its type and the payment_id it names. */
  subject: string;
}

/** An event that may be about refunds, naming them by refund_id or by the provider's id: they are read at once. */
export interface RefundsNotice {
  kind: 'refunds';
  names: string[];
}

/** The provider's warning that Paygate's own account runs low (its payouts may be refused). */
export interface LowBalanceNotice {
  kind: 'low_balance';
  /** What keeps one warning apart from the next (the time the provider gives it). */
  reference: string;
  /** The balance in paise, when it can be read. */
  amount: number | null;
  detail: string;
}

/**
 * A customer's dispute of a payment: opened, or decided by the provider (won or lost by the
 * merchant); `other` for a status that changes nothing (in review, closed at the provider).
 */
export interface DisputeNotice {
  kind: 'dispute';
  status: 'open' | 'won' | 'lost' | 'other';
  /** The provider's id of the dispute. */
  disputeId: string;
  /** The provider's id of the payment disputed, its transaction id and its bank reference (the pay-in's utr). */
  paymentId: string;
  txnId: string;
  rrn: string;
  /** The amount disputed in paise, or null when it cannot be read exactly. */
  amount: number | null;
  /** What it is, in the provider's words, for the operator. */
  subject: string;
}

/** What a notification reports. */
export type Notice = PaymentNotice | TransferNotice | RefundsNotice | LowBalanceNotice | DisputeNotice;

/** What a provider's notifications are, to the gateway (Hyperswitch's `IncomingWebhook`). */
export interface NotificationReader {
  /** The channel's name: the path `/channels/{provider}/notifications`, the stored rows' provider. */
  readonly provider: string;
  /** The provider's name for an operator ("Setu"). */
  readonly label: string;
  /** The provider and product, for the API document ("Setu UPI"). */
  readonly title: string;
  /** Whether its notifications are taken: the channel is configured, with its webhook secret. */
  readonly accepting: boolean;
  /** Whether the signature on the raw body is the provider's (false when the channel is not configured). */
  verify(raw: Buffer, headers: NotificationHeaders, now: number): boolean;
  /** What a verified notification is stored under. */
  identify(body: Record<string, unknown>): NotificationIdentity;
  /** What it reports, or null when it reports nothing Paygate acts on. */
  read(body: Record<string, unknown>): Notice | null;
}
