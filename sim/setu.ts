/**
 * A simulated Setu at the `Channel` port: dynamic QRs that customers pay (once, twice, late),
 * refunds that it does not deduplicate by reference (as Setu documents none), faults on every call,
 * reads that lag, and the signed notifications it would send. It keeps the truth the invariants
 * compare Paygate with: every payment that reached Paygate's account and every refund paid out.
 */
import type {
  FinalOutcome,
  OpenPayin,
  PayinInstructions,
  PayinOpening,
  PayoutState,
  RefundInFlight,
  RefundState,
  RefundSubmission,
  VpaRegistration,
} from '../src/channels/channel.ts';
import { pollDelay, setuPaymentOutcome } from '../src/channels/setu/setu.channel.ts';
import { setuRefundState } from '../src/channels/setu/setu-refunds.ts';
import type { TransactionKind } from '../src/db/schema.ts';
import { readFailure, sendFailure } from './faults.ts';
import { SimProvider } from './provider.ts';
import { setuSigned } from './notices.ts';

export interface SetuPayment extends Record<string, unknown> {
  id: string;
  txnId: string;
  rrn: string;
  amount: number;
  status: 'success';
  merchantReferenceId: string;
  productInstanceId: string;
}

export interface Qr {
  id: string;
  paymentId: string;
  amount: number;
  merchantVpa: string;
  status: 'active' | 'closed';
  payments: SetuPayment[];
  createdAt: number;
}

export interface SetuRefund extends Record<string, unknown> {
  id: string;
  referenceId: string;
  paymentId: string;
  amount: number;
  status: 'pending' | 'success' | 'failed';
  crn?: string;
  createdAt: number;
  changedAt: number;
}

export class SimSetu extends SimProvider {
  readonly name = 'setu';
  readonly qrs = new Map<string, Qr>();
  readonly refundList: SetuRefund[] = [];
  /** The refunds Setu paid after it had reported them failed: a payment may then be refunded past its amount. */
  readonly paidAfterFailed = new Set<string>();

  private id(prefix: string): string {
    return `${prefix}${String(++this.serial).padStart(8, '0')}`;
  }

  async register(vpa: string): Promise<VpaRegistration> {
    return { routable: true, id: `vpa_${vpa.replace(/[^a-z0-9]/g, '')}` };
  }

  async openPayin(p: PayinOpening): Promise<PayinInstructions> {
    const fault = this.faults.send();
    if (fault !== 'ok' && fault !== 'acted') throw sendFailure(this.name, 'dqr_create', fault);
    const qr: Qr = {
      id: this.id('qr'),
      paymentId: p.paymentId,
      amount: p.amount,
      merchantVpa: p.merchant.vpa,
      status: 'active',
      payments: [],
      createdAt: this.now(),
    };
    this.qrs.set(qr.id, qr);
    if (fault === 'acted') throw sendFailure(this.name, 'dqr_create', fault);
    return {
      channelTxnId: qr.id,
      payeeVpa: p.merchant.vpa,
      payeeName: p.merchant.name,
      upiIntent: `upi://pay?pa=${p.merchant.vpa}&tr=${qr.id}`,
    };
  }

  /** The QR opened for a pay-in, if any (a customer pays the last one opened). */
  qrOf(paymentId: string): Qr | undefined {
    let found: Qr | undefined;
    for (const q of this.qrs.values()) if (q.paymentId === paymentId) found = q;
    return found;
  }

  /** A customer pays `amount` on a QR: refused when it is closed, unless the payment was already under way (`late`). */
  pay(qr: Qr, amount: number, late: boolean): SetuPayment | null {
    if (qr.status !== 'active' && !late) return null;
    const n = ++this.serial;
    const payment: SetuPayment = {
      id: `pay${String(n).padStart(8, '0')}`,
      txnId: `txn${String(n).padStart(8, '0')}`,
      rrn: String(400000000000 + n),
      amount,
      status: 'success',
      merchantReferenceId: qr.paymentId,
      productInstanceId: qr.id,
      customerVpa: 'customer@upi',
      merchantVpa: qr.merchantVpa,
      txnTs: new Date(this.now()).toISOString(),
      paidAt: this.now(),
    };
    qr.payments.push(payment);
    const raw = JSON.stringify({ eventId: `ev${n}`, eventType: 'payment.success', ...payment });
    this.notices.push({
      provider: 'setu',
      raw,
      headers: setuSigned(raw, this.secret),
      label: `setu payment.success ${payment.id}`,
    });
    return payment;
  }

  /** The last payment a read shows: a lagging read misses one made still within the lag. */
  private lastPayment(qr: Qr | undefined): SetuPayment | null {
    if (!qr) return null;
    const fault = this.faults.read();
    const failure = readFailure(this.name, 'payment_last', fault);
    if (failure) throw failure;
    const shown =
      fault === 'lag' ? qr.payments.filter((p) => !this.lagging(p.paidAt as number)) : qr.payments;
    return shown[shown.length - 1] ?? null;
  }

  async payinOutcome(p: OpenPayin): Promise<FinalOutcome | null> {
    const last = this.lastPayment(this.qrs.get(p.channelTxnId));
    return last ? setuPaymentOutcome(last, p.channelTxnId) : null;
  }

  async closePayin(p: OpenPayin): Promise<FinalOutcome | null> {
    const qr = this.qrs.get(p.channelTxnId);
    const before = this.lastPayment(qr);
    if (before) return setuPaymentOutcome(before, p.channelTxnId);
    const fault = this.faults.send();
    if (fault !== 'ok' && fault !== 'acted') throw sendFailure(this.name, 'dqr_expire', fault);
    if (qr) qr.status = 'closed';
    if (fault === 'acted') throw sendFailure(this.name, 'dqr_expire', fault);
    const after = this.lastPayment(qr);
    if (after) return setuPaymentOutcome(after, p.channelTxnId);
    return { status: 'FAILED', utr: '', channelTxnId: p.channelTxnId };
  }

  /** Every payment made on a QR, as reconciliation reads them. */
  async paymentHistory(qrId: string): Promise<Record<string, unknown>[]> {
    const failure = readFailure(this.name, 'payment_history', this.faults.read());
    if (failure) throw failure;
    return [...(this.qrs.get(qrId)?.payments ?? [])];
  }

  async submitPayout(): Promise<PayoutState> {
    throw new Error('setu makes no payouts');
  }

  async readPayout(): Promise<PayoutState | null> {
    throw new Error('setu makes no payouts');
  }

  pollDelayMs(_kind: TransactionKind, ageMs: number): number {
    return pollDelay(this.pollMs, ageMs);
  }

  readonly refunds = {
    /** Setu documents no uniqueness of a refund's referenceId. */
    uniqueReferences: false,
    submitRefund: async (r: RefundSubmission): Promise<RefundState> => {
      const fault = this.faults.send();
      if (fault !== 'ok' && fault !== 'acted') throw sendFailure(this.name, 'refund_create', fault);
      const refund: SetuRefund = {
        id: this.id('rf'),
        referenceId: r.refundId,
        paymentId: r.channelPaymentId,
        amount: r.amount,
        status: 'pending',
        createdAt: this.now(),
        changedAt: this.now(),
      };
      this.refundList.push(refund);
      if (fault === 'acted') throw sendFailure(this.name, 'refund_create', fault);
      return setuRefundState(refund)!;
    },
    readRefund: async (r: RefundInFlight): Promise<RefundState | null> => {
      const fault = this.faults.read();
      const failure = readFailure(this.name, 'refund_read', fault);
      if (failure) throw failure;
      const mine = this.refundList.filter((x) =>
        r.channelTxnId ? x.id === r.channelTxnId : x.referenceId === r.refundId,
      );
      // A refund Setu named is never unknown to it; one found by its reference may not be listed yet.
      const visible =
        fault === 'notfound' && !r.channelTxnId ? mine.filter((x) => !this.lagging(x.createdAt)) : mine;
      const chosen = visible.find((x) => x.status !== 'pending') ?? visible[0];
      if (!chosen) return null;
      if (fault === 'lag' && this.lagging(chosen.changedAt))
        return setuRefundState({ ...chosen, status: 'pending' });
      return setuRefundState(chosen);
    },
    /** A refund as reconciliation reads it. */
    refundRecord: async (id: string): Promise<Record<string, unknown> | null> => {
      const failure = readFailure(this.name, 'refund_reconcile', this.faults.read());
      if (failure) throw failure;
      const found = this.refundList.find((x) => x.id === id);
      return found ? { ...found } : null;
    },
  };

  /** The bank ends a pending refund, or pays one it failed; Setu tells Paygate, when it does, by a notification naming it. */
  settleRefund(refund: SetuRefund, status: 'success' | 'failed'): void {
    if (refund.status === 'failed' && status === 'success') this.paidAfterFailed.add(refund.id);
    refund.status = status;
    refund.changedAt = this.now();
    if (status === 'success') {
      refund.crn = String(500000000000 + ++this.serial);
      delete refund.reason;
    } else refund.reason = { errCode: 'R21', description: 'refund refused' };
    const raw = JSON.stringify({ eventId: `ev${++this.serial}`, eventType: `refund.${status}`, ...refund });
    this.notices.push({
      provider: 'setu',
      raw,
      headers: setuSigned(raw, this.secret),
      label: `setu refund.${status} ${refund.id}`,
    });
  }
}
