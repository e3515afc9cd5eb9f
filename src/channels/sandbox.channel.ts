/**
 * The built-in sandbox channel for test merchants. It behaves like a bank adapter: it accepts
 * payouts, answers outcome queries, and settles pay-ins when told to (the hosted page's buttons,
 * `POST /sandbox/payin/complete`), always through the gateway's `SettlementSink`.
 */
import { base62, newUtr } from '../ids.ts';
import type {
  Channel,
  FinalOutcome,
  PayinInstructions,
  PayinOpening,
  PayoutInFlight,
  SettlementSink,
} from './channel.ts';

/** Receiver accounts ending in this fail in the sandbox. */
export const SANDBOX_FAILING_ACCOUNT_SUFFIX = '0000';

export function sandboxOutcome(
  status: 'SUCCESS' | 'FAILED',
  channelTxnId = `SBX${base62(17)}`,
): FinalOutcome {
  return { status, utr: status === 'SUCCESS' ? newUtr() : '', channelTxnId };
}

export class SandboxChannel implements Channel {
  readonly name = 'sandbox';
  readonly opensRemotely = false;

  constructor(
    /** SANDBOX_PAYOUT_SETTLE_MS */
    readonly payoutPollMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async openPayin(p: PayinOpening): Promise<PayinInstructions> {
    // The sandbox assigns its reference when the pay-in settles, as a UPI collect does.
    return { channelTxnId: '', payeeVpa: p.merchant.vpa, payeeName: p.merchant.name };
  }

  async submitPayout(): Promise<{ channelTxnId: string }> {
    return { channelTxnId: `SBXP${base62(16)}` };
  }

  async payoutOutcome(p: PayoutInFlight): Promise<FinalOutcome | null> {
    if (this.now() - p.submittedAt < this.payoutPollMs) return null;
    const failed = p.receiver.accountNo.endsWith(SANDBOX_FAILING_ACCOUNT_SUFFIX);
    return sandboxOutcome(failed ? 'FAILED' : 'SUCCESS', p.channelTxnId);
  }

  /** Settles a pay-in as the customer's bank would report it. */
  async completePayin(sink: SettlementSink, paymentId: string, status: 'SUCCESS' | 'FAILED', source: string) {
    return sink.settle(paymentId, sandboxOutcome(status), source);
  }

  /** Settles a payout at once, as the bank would report it. */
  async completePayout(
    sink: SettlementSink,
    paymentId: string,
    channelTxnId: string,
    status: 'SUCCESS' | 'FAILED',
    source: string,
  ) {
    return sink.settle(paymentId, sandboxOutcome(status, channelTxnId || undefined), source);
  }
}
