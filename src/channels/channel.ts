/**
 * The Channel port: what a bank or PSP adapter must do for Paygate. The gateway records first,
 * calls the channel outside any database transaction, and records the outcome after. Outcomes
 * reach the gateway through a `FinalStatusSink`, whether the adapter learns them by polling, by a
 * notification of the provider or, for the sandbox, by a button on the payment page. A provider's
 * notifications are read beside its adapter, by its `NotificationReader` (`notification-reader.ts`).
 */
import type { TransactionKind } from '../db/schema.ts';

export interface FinalOutcome {
  status: 'SUCCESS' | 'FAILED';
  /** The bank's reference (12 digits for UPI and IMPS); "" when the channel has none (a failure). */
  utr: string;
  channelTxnId: string;
  /**
   * The amount the channel says moved, in paise, when it says; a different amount is not this
   * outcome. -1 when the channel sent an amount that cannot be read exactly (`amountText` keeps it).
   */
  amount?: number;
  /** The channel's own text of an amount that could not be read, for the operator. */
  amountText?: string;
  /** The provider's id of the payment or transfer behind the outcome, when it has its own. */
  reference?: string;
  /**
   * The provider's payment that paid a pay-in, as a refund of it must name it: its id and its
   * transaction id (Setu's `id` and `txnId`). Only channels that refund their pay-ins give it.
   */
  payment?: { id: string; txnId: string };
  /** Why the channel failed it, in its own words (an NPCI refusal: code and description). */
  reason?: string;
}

export interface PayinOpening {
  paymentId: string;
  merchantOrderNo: string;
  amount: number;
  currency: string;
  /** When the pay-in stops being payable (epoch ms). */
  expiresAt: number;
  merchant: { name: string; vpa: string };
}

/** What the customer needs to pay: a UPI payee, or the channel's own UPI intent. */
export interface PayinInstructions {
  /** The channel's reference, when it assigns one at opening; "" otherwise. */
  channelTxnId: string;
  payeeVpa: string;
  payeeName: string;
  /** The UPI intent to hand out as it is, when the channel made one (its `tr` is the channel's). */
  upiIntent?: string;
}

/** A pay-in the channel opened, as the worker asks about it. */
export interface OpenPayin {
  paymentId: string;
  channelTxnId: string;
  amount: number;
}

export interface PayoutSubmission {
  /** The submission is not sent after this time (epoch ms): the worker's claim runs out. */
  notAfter?: number;
  paymentId: string;
  /** Which of the payout's transfers this is (`transferIdOf`); 1 when not given. */
  attempt?: number;
  amount: number;
  currency: string;
  receiver: { name: string; accountNo: string; ifsc: string };
}

export interface PayoutInFlight extends PayoutSubmission {
  /** "" while the payout is not known to have reached the channel. */
  channelTxnId: string;
  /** When the channel accepted it (epoch ms). */
  submittedAt: number;
}

/** What a channel knows of a payout. */
export interface PayoutState {
  channelTxnId: string;
  /** Null while the bank is still working on it. */
  outcome: FinalOutcome | null;
  /**
   * The channel says the transfer was reversed; the outcome is then FAILED. After a recorded
   * SUCCESS the money came back; with none recorded it never reached the beneficiary.
   */
  reversed: boolean;
  /**
   * The provider failed the transfer for Paygate's own account (its balance, the account or a mode
   * of it not active, a low-balance queue that expired): the provider's code. The outcome is then
   * null: the payout is not to blame, and waits for the operator (CONTRACT §10).
   */
  accountCode?: string;
  /** Which of the payout's transfers the state is of (`transferOf`), when the channel names it. */
  attempt?: number;
}

/**
 * The id a payout's transfer is sent under: the payment_id for the first, `{payment_id}_{n}` for
 * the n-th, sent after the one before failed for Paygate's own account.
 */
export function transferIdOf(paymentId: string, attempt = 1): string {
  return attempt <= 1 ? paymentId : `${paymentId}_${attempt}`;
}

/** The payment_id and attempt a transfer id names (`transferIdOf` read back); the id itself, attempt 1, otherwise. */
export function transferOf(transferId: string): { paymentId: string; attempt: number } {
  const m = /^([A-Za-z0-9]{32})_([1-9][0-9]{0,5})$/.exec(transferId);
  return m ? { paymentId: m[1]!, attempt: Number(m[2]) } : { paymentId: transferId, attempt: 1 };
}

/** A refund to hand to the channel that took the payment, under the refund_id as its idempotency key. */
export interface RefundSubmission {
  refundId: string;
  /** The refunded pay-in's payment_id, or "" when the money belongs to no pay-in (suspense). */
  paymentId: string;
  /** The provider's payment the refund returns: its id and its transaction id ("" when the channel has none). */
  channelPaymentId: string;
  channelPaymentTxnId: string;
  amount: number;
  currency: string;
  /** The refund is not sent after this time (epoch ms): the worker's claim runs out. */
  notAfter?: number;
}

export interface RefundInFlight extends RefundSubmission {
  /** "" while the refund is not known to have reached the channel. */
  channelTxnId: string;
  /** When the channel accepted it (epoch ms). */
  submittedAt: number;
}

/** What a channel knows of a refund. */
export interface RefundState {
  channelTxnId: string;
  /** Null while the refund is still in progress. */
  outcome: FinalOutcome | null;
}

/** What a channel that refunds its pay-ins does (the sandbox, Setu). */
export interface RefundRail {
  /**
   * Whether the channel refuses a second refund under the same refund_id. Where it does not (Setu
   * documents no uniqueness of `referenceId`), a refund whose send had an unknown outcome, answered
   * or not, is sent again only CHANNEL_RESEND_AFTER_S after that send at the earliest.
   */
  readonly uniqueReferences: boolean;
  /**
   * Hands a refund to the channel. Answers its reference and, when the channel answered with one
   * at once, the final outcome (a refusal of the refund itself is FAILED with the reason). Throws
   * `ChannelFailure` when the outcome is not known or the channel did not take it.
   */
  submitRefund(r: RefundSubmission): Promise<RefundState>;
  /**
   * What the channel knows of a refund, or null when it does not know it: read by the channel's
   * reference when one is known, else found among the refunds of its payment by refund_id.
   */
  readRefund(r: RefundInFlight): Promise<RefundState | null>;
}

/**
 * The code of a call Paygate did not send because its own queue for the provider (the throttle)
 * outlasted the caller's claim: nothing is wrong with the channel or the transaction.
 */
export const CLAIM_EXPIRED = 'claim_expired';

/**
 * The code of a call Paygate did not send because the provider fails every call and its calls back
 * off as a whole (`CallGate`): its turn would have come later than one back-off from now.
 */
export const CHANNEL_BACKOFF = 'channel_backoff';

/**
 * Why a channel call did not give an answer. `unavailable`: the channel did not take the request
 * (it could not be reached, 401 or 429): safe to send again later. `unknown`: it may have been
 * acted on (a timeout, a reset, a 5xx): for a payout, the channel is asked before anything is sent
 * again. `rejected`: the channel refused the request (a 4xx about the request itself); `code` is
 * its code. `account`: the channel refused Paygate's own account (credentials, IP allow-list, 2FA
 * signature, balance): it did not act, and no transaction is to blame; the operator must look.
 */
export class ChannelFailure extends Error {
  constructor(
    readonly kind: 'unavailable' | 'unknown' | 'rejected' | 'account',
    readonly channel: string,
    readonly code: string,
    message: string,
    /** No answer came (a timeout, a broken connection): the request may still reach the channel later. */
    readonly unanswered = false,
    /** The provider's own words about a refusal, cleaned for people to read (`providerDescription`); '' when none. */
    readonly description = '',
  ) {
    super(message);
    this.name = 'ChannelFailure';
  }
}

export interface Channel {
  readonly name: string;
  /** Whether this channel moves real money (live merchants) rather than simulating it. */
  readonly live: boolean;
  /**
   * Whether opening a pay-in is a call to another system. Such a pay-in is recorded before the
   * call and its answer after it (a failed call removes the record); a channel that opens locally
   * (the sandbox) answers at once, and the pay-in is recorded with that answer in one write.
   */
  readonly opensRemotely: boolean;
  /**
   * How long a send that got no answer may still reach the channel after Paygate gave up on it
   * (ms). A payout or refund read as not found before this has passed is not sent again.
   */
  readonly inTransitMs: number;
  /** Opens a pay-in. Throws `ChannelFailure` when the channel did not open it. */
  openPayin(p: PayinOpening): Promise<PayinInstructions>;
  /** A pay-in's outcome when its payment came, or null while it has not (polling before expiry). */
  payinOutcome(p: OpenPayin): Promise<FinalOutcome | null>;
  /**
   * Closes a pay-in at its expiry, so that nobody can pay it any more, and returns its outcome:
   * SUCCESS when a payment came after all, FAILED once it is closed and nothing paid it, and null
   * while a payment the customer started is still in progress (the pay-in stays open for it).
   * `stuck`: it has waited too long; a payment still in progress no longer keeps it open.
   * Throws `ChannelFailure` when it could not be closed (it is tried again; nothing is FAILED before).
   */
  closePayin(p: OpenPayin, opts?: { stuck?: boolean }): Promise<FinalOutcome | null>;
  /**
   * Hands a payout to the bank, with the payment_id as the channel's idempotency key. Answers the
   * channel's reference and, when the channel answered with one at once, the final outcome (a
   * refusal is FAILED). Throws `ChannelFailure` when the outcome is not known.
   */
  submitPayout(p: PayoutSubmission): Promise<PayoutState>;
  /** What the channel knows of a payout, or null when it has never seen it. */
  readPayout(p: PayoutInFlight): Promise<PayoutState | null>;
  /** How long after an event (submission, creation) to ask the channel, given the transaction's age. */
  pollDelayMs(kind: TransactionKind, ageMs: number): number;
  /** Refunds of this channel's pay-ins, when it can make them. */
  readonly refunds?: RefundRail;
}

/** Where a channel reports a final outcome. The gateway implements it with its one final-status transition. */
export interface FinalStatusSink {
  settle(paymentId: string, outcome: FinalOutcome, source: string): Promise<{ changed: boolean }>;
}

/** Whether a UPI id can receive a live merchant's pay-ins: registered (or held) and active at the channel. */
export type VpaRegistration = { routable: true; id: string } | { routable: false; reason: string };

/**
 * Where a live merchant's UPI id is registered before the merchant is created (Setu: each
 * merchant's UPI id lives under Paygate's Setu merchant). Throws `ChannelFailure` when the channel
 * could not be asked.
 */
export interface VpaRegistry {
  /** Registers `vpa`, or, with `heldId`, checks the registration the channel already holds under that id. */
  register(vpa: string, opts: { referenceId: string; heldId?: string }): Promise<VpaRegistration>;
}
