/**
 * The built-in sandbox channel for test merchants. It behaves like a bank adapter: it accepts
 * payouts and refunds, answers outcome queries, and settles pay-ins when told to (the hosted page's
 * buttons, `POST /sandbox/payin/complete`), always through the gateway's `FinalStatusSink`.
 */
import { base62, newUtr } from '../ids.ts';
import type { TransactionKind } from '../db/schema.ts';
import type {
  Channel,
  FinalOutcome,
  PayinInstructions,
  PayinOpening,
  PayoutInFlight,
  PayoutState,
  RefundInFlight,
  RefundRail,
  RefundState,
  FinalStatusSink,
} from './channel.ts';

/** Receiver accounts ending in this fail in the sandbox. */
export const SANDBOX_FAILING_ACCOUNT_SUFFIX = '0000';

/** Refunds whose amount has these paise fail in the sandbox (contract §12). */
export const SANDBOX_FAILING_REFUND_PAISE = 13;

/** Why the sandbox fails a transaction, as its page shows it: the rule that applied, or who asked. */
export const SANDBOX_REASONS = {
  account: `sandbox rule: a payout to an account number ending in ${SANDBOX_FAILING_ACCOUNT_SUFFIX} fails`,
  refundPaise: `sandbox rule: a refund whose paise are ${SANDBOX_FAILING_REFUND_PAISE} fails`,
  page: 'sandbox: "Simulate failure" on the payment page',
  api: 'sandbox: failed by POST /sandbox/…/complete',
} as const;

export function sandboxOutcome(
  status: 'SUCCESS' | 'FAILED',
  channelTxnId = `SBX${base62(17)}`,
  reason?: string,
): FinalOutcome {
  return {
    status,
    utr: status === 'SUCCESS' ? newUtr() : '',
    channelTxnId,
    ...(status === 'FAILED' && reason ? { reason } : {}),
  };
}

export class SandboxChannel implements Channel {
  readonly name = 'sandbox';
  readonly live = false;
  readonly opensRemotely = false;
  /** In the process: a send it did not answer died with the process and can never arrive. */
  readonly inTransitMs = 0;
  readonly refunds: RefundRail = {
    uniqueReferences: true,
    submitRefund: async () => ({ channelTxnId: `SBXR${base62(16)}`, outcome: null }),
    readRefund: async (r) => this.readRefund(r),
  };

  constructor(
    /** SANDBOX_PAYOUT_SETTLE_MS */
    private readonly payoutSettleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async openPayin(p: PayinOpening): Promise<PayinInstructions> {
    // The sandbox assigns its reference when the pay-in settles, as a UPI collect does.
    return { channelTxnId: '', payeeVpa: p.merchant.vpa, payeeName: p.merchant.name };
  }

  /** Sandbox pay-ins are settled by the page's buttons and the sandbox endpoint, never by asking. */
  async payinOutcome(): Promise<FinalOutcome | null> {
    return null;
  }

  async closePayin(): Promise<FinalOutcome> {
    return { status: 'FAILED', utr: '', channelTxnId: '' };
  }

  async submitPayout(): Promise<PayoutState> {
    return { channelTxnId: `SBXP${base62(16)}`, outcome: null, reversed: false };
  }

  /** The sandbox keeps nothing: a payout it did not give a reference to is one it never saw. */
  async readPayout(p: PayoutInFlight): Promise<PayoutState | null> {
    if (!p.channelTxnId) return null;
    if (this.now() - p.submittedAt < this.payoutSettleMs)
      return { channelTxnId: p.channelTxnId, outcome: null, reversed: false };
    const failed = p.receiver.accountNo.endsWith(SANDBOX_FAILING_ACCOUNT_SUFFIX);
    return {
      channelTxnId: p.channelTxnId,
      outcome: sandboxOutcome(failed ? 'FAILED' : 'SUCCESS', p.channelTxnId, SANDBOX_REASONS.account),
      reversed: false,
    };
  }

  /** A refund settles as a payout does, SANDBOX_PAYOUT_SETTLE_MS after submission: FAILED when its paise are 13. */
  private readRefund(r: RefundInFlight): RefundState | null {
    if (!r.channelTxnId) return null;
    if (this.now() - r.submittedAt < this.payoutSettleMs)
      return { channelTxnId: r.channelTxnId, outcome: null };
    const failed = r.amount % 100 === SANDBOX_FAILING_REFUND_PAISE;
    return {
      channelTxnId: r.channelTxnId,
      outcome: sandboxOutcome(failed ? 'FAILED' : 'SUCCESS', r.channelTxnId, SANDBOX_REASONS.refundPaise),
    };
  }

  /** A payout settles SANDBOX_PAYOUT_SETTLE_MS after submission; later looks come at most once a second. */
  pollDelayMs(_kind: TransactionKind, ageMs: number): number {
    return ageMs === 0 ? this.payoutSettleMs : Math.max(this.payoutSettleMs, 1000);
  }

  /** Settles a pay-in as the customer's bank would report it; a failure carries `reason`. */
  async completePayin(
    sink: FinalStatusSink,
    paymentId: string,
    status: 'SUCCESS' | 'FAILED',
    source: string,
    reason?: string,
  ) {
    return sink.settle(paymentId, sandboxOutcome(status, undefined, reason), source);
  }

  /** Settles a payout or a refund at once, as the bank would report it; a failure carries `reason`. */
  async completePayout(
    sink: FinalStatusSink,
    paymentId: string,
    channelTxnId: string,
    status: 'SUCCESS' | 'FAILED',
    source: string,
    reason?: string,
  ) {
    return sink.settle(paymentId, sandboxOutcome(status, channelTxnId || undefined, reason), source);
  }
}
