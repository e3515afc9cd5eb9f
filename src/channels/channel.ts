/**
 * The Channel port: what a bank or PSP adapter must do for Paygate. The gateway records first,
 * calls the channel outside any database transaction, and records the outcome after. Outcomes
 * reach the gateway through a `SettlementSink`, whether the adapter learns them by polling, by a
 * webhook of the provider or, for the sandbox, by a button on the payment page.
 */

export interface FinalOutcome {
  status: 'SUCCESS' | 'FAILED';
  /** 12-digit bank reference; "" when the channel has none (a failure). */
  utr: string;
  channelTxnId: string;
}

export interface PayinOpening {
  paymentId: string;
  merchantOrderNo: string;
  amount: number;
  currency: string;
  merchant: { name: string; vpa: string };
}

/** What the customer needs to pay: a UPI payee. */
export interface PayinInstructions {
  /** The channel's reference, when it assigns one at opening; "" otherwise. */
  channelTxnId: string;
  payeeVpa: string;
  payeeName: string;
}

export interface PayoutSubmission {
  paymentId: string;
  amount: number;
  currency: string;
  receiver: { name: string; accountNo: string; ifsc: string };
}

export interface PayoutInFlight extends PayoutSubmission {
  channelTxnId: string;
  /** When the channel accepted it (epoch ms). */
  submittedAt: number;
}

export interface Channel {
  readonly name: string;
  /**
   * Whether opening a pay-in is a call to another system. Such a pay-in is recorded before the
   * call and its answer after it (a failed call removes the record); a channel that opens locally
   * (the sandbox) answers at once, and the pay-in is recorded with that answer in one write.
   */
  readonly opensRemotely: boolean;
  /** Opens a pay-in. Must be idempotent on `paymentId`. */
  openPayin(p: PayinOpening): Promise<PayinInstructions>;
  /** Hands a payout to the bank. Must be idempotent on `paymentId`: it may be called again after a crash. */
  submitPayout(p: PayoutSubmission): Promise<{ channelTxnId: string }>;
  /** The final outcome of a submitted payout, or null while the bank is still working on it. */
  payoutOutcome(p: PayoutInFlight): Promise<FinalOutcome | null>;
  /** How long after submission to first ask for the outcome, in ms. */
  readonly payoutPollMs: number;
}

/** Where a channel reports a final outcome. The gateway implements it with its one final-status transition. */
export interface SettlementSink {
  settle(paymentId: string, outcome: FinalOutcome, source: string): Promise<{ changed: boolean }>;
}
