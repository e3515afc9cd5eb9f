/**
 * A simulated Cashfree Payouts at the `Channel` port: transfers keyed by their transfer_id (a second
 * create with the same id is refused, as Cashfree refuses it), outcomes the bank decides later
 * (SUCCESS, FAILED, REVERSED after SUCCESS), faults on every call, reads that lag or miss a transfer
 * just made, and the signed webhooks it would send. Its transfers are the truth of what was paid out.
 */
import {
  ChannelFailure,
  transferIdOf,
  type FinalOutcome,
  type PayoutInFlight,
  type PayoutState,
  type PayoutSubmission,
} from '../src/channels/channel.ts';
import { cashfreeState } from '../src/channels/cashfree/cashfree.channel.ts';
import type { TransactionKind } from '../src/db/schema.ts';
import { toRupees } from '../src/money.ts';
import { readFailure, sendFailure } from './faults.ts';
import { SimProvider } from './provider.ts';
import { cashfreeSigned } from './notices.ts';

export interface Transfer extends Record<string, unknown> {
  transfer_id: string;
  cf_transfer_id: string;
  status: 'RECEIVED' | 'SUCCESS' | 'FAILED' | 'REVERSED';
  transfer_amount: number;
  transfer_utr: string;
  /** Paise, for the invariants. */
  paise: number;
  paymentId: string;
  /** Whether the beneficiary was ever paid (SUCCESS, a REVERSED after it included). */
  paid: boolean;
  createdAt: number;
  changedAt: number;
  before: Transfer | null;
}

export class SimCashfree extends SimProvider {
  readonly name = 'cashfree';
  readonly transfers = new Map<string, Transfer>();

  async openPayin(): Promise<never> {
    throw new Error('cashfree takes no pay-ins');
  }

  async payinOutcome(): Promise<FinalOutcome | null> {
    throw new Error('cashfree takes no pay-ins');
  }

  async closePayin(): Promise<FinalOutcome | null> {
    throw new Error('cashfree takes no pay-ins');
  }

  async submitPayout(p: PayoutSubmission): Promise<PayoutState> {
    const fault = this.faults.send();
    if (fault !== 'ok' && fault !== 'acted') throw sendFailure(this.name, 'transfer_create', fault);
    const id = transferIdOf(p.paymentId, p.attempt);
    if (this.transfers.has(id))
      throw new ChannelFailure(
        'unknown',
        this.name,
        'transfer_id_already_exists',
        'cashfree: transfer id exists',
      );
    const t: Transfer = {
      transfer_id: id,
      cf_transfer_id: String(++this.serial),
      status: 'RECEIVED',
      transfer_amount: toRupees(p.amount),
      transfer_utr: '',
      transfer_mode: 'banktransfer',
      paise: p.amount,
      paymentId: p.paymentId,
      paid: false,
      createdAt: this.now(),
      changedAt: this.now(),
      before: null,
    };
    this.transfers.set(id, t);
    if (fault === 'acted') throw sendFailure(this.name, 'transfer_create', fault);
    return cashfreeState(t)!;
  }

  async readPayout(p: PayoutInFlight): Promise<PayoutState | null> {
    const record = this.record(transferIdOf(p.paymentId, p.attempt), 'transfer_read');
    return record ? cashfreeState(record) : null;
  }

  /** A transfer as a read shows it: lagging (its state before a change still within the lag), or not yet listed. */
  private record(id: string, op: string): Transfer | null {
    const fault = this.faults.read();
    const failure = readFailure(this.name, op, fault);
    if (failure) throw failure;
    const t = this.transfers.get(id);
    if (!t) return null;
    if (fault === 'notfound' && this.lagging(t.createdAt)) return null;
    if (fault === 'lag' && t.before && this.lagging(t.changedAt)) return t.before;
    return t;
  }

  /** The transfer as reconciliation reads it. */
  async transferRecord(transferId: string): Promise<Record<string, unknown> | null> {
    const t = this.record(transferId, 'transfer_reconcile');
    return t ? { ...t, before: undefined } : null;
  }

  pollDelayMs(_kind: TransactionKind, ageMs: number): number {
    return ageMs <= 0 ? this.pollMs : Math.max(this.pollMs, Math.min(ageMs, 3_600_000));
  }

  /** The bank ends a transfer, pays one it failed, or returns one it paid; Cashfree sends its webhook. False when the change cannot happen. */
  settle(t: Transfer, status: 'SUCCESS' | 'FAILED' | 'REVERSED'): boolean {
    // A bank may pay a transfer it first reported FAILED (a SUCCESS after FAILED).
    const allowed =
      status === 'REVERSED'
        ? t.status === 'SUCCESS'
        : t.status === 'RECEIVED' || (status === 'SUCCESS' && t.status === 'FAILED');
    if (!allowed) return false;
    t.before = { ...t, before: null };
    t.status = status;
    t.changedAt = this.now();
    if (status === 'SUCCESS') {
      t.paid = true;
      t.transfer_utr = `UTR${String(600000000 + ++this.serial)}`;
    }
    if (status === 'FAILED') t.status_code = 'INVALID_ACCOUNT_FAIL';
    const data = { ...t, before: undefined, paise: undefined, paymentId: undefined };
    const raw = JSON.stringify({
      type: `TRANSFER_${status}`,
      event_time: new Date(this.now()).toISOString(),
      data,
    });
    this.notices.push({
      provider: 'cashfree',
      raw,
      headers: cashfreeSigned(raw, this.secret, this.now()),
      label: `cashfree TRANSFER_${status} ${t.transfer_id.slice(0, 6)}`,
    });
    return true;
  }
}
