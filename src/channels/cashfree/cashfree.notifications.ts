/**
 * Cashfree Payouts' webhooks: signed over the timestamp and the raw body
 * (`cashfree.signature.ts`), with no event id of their own (a retry is the same body). The types
 * that end a transfer are read as its state (`cashfreeState`); LOW_BALANCE_ALERT warns of
 * Paygate's own balance; other types (CREDIT_CONFIRMATION, BENEFICIARY_INCIDENT, …) report nothing.
 */
import { formatAmount } from '../../money.ts';
import { fieldText, objectField } from '../body-fields.ts';
import { rupeesToPaise } from '../channel-http.ts';
import type {
  NotificationHeaders,
  NotificationIdentity,
  NotificationReader,
  Notice,
} from '../notification-reader.ts';
import { transferOf } from '../channel.ts';
import { cashfreeState } from './cashfree.channel.ts';
import { verifyCashfree } from './cashfree.signature.ts';

/** Cashfree's webhook types that end a transfer, and the status each stands for. */
const CASHFREE_TYPES: Record<string, string> = {
  TRANSFER_SUCCESS: 'SUCCESS',
  TRANSFER_ACKNOWLEDGED: 'SUCCESS',
  TRANSFER_FAILED: 'FAILED',
  TRANSFER_REJECTED: 'REJECTED',
  TRANSFER_MANUALLY_REJECTED: 'MANUALLY_REJECTED',
  TRANSFER_REVERSED: 'REVERSED',
};

export class CashfreeNotifications implements NotificationReader {
  readonly provider = 'cashfree';
  readonly label = 'Cashfree';
  readonly title = 'Cashfree Payouts';
  readonly accepting: boolean;

  /** `secret`: CASHFREE_WEBHOOK_SECRET, or null when Cashfree is off. */
  constructor(private readonly secret: string | null) {
    this.accepting = secret !== null;
  }

  verify(raw: Buffer, headers: NotificationHeaders, now: number): boolean {
    return (
      this.secret !== null &&
      verifyCashfree(raw, headers['x-webhook-timestamp'], headers['x-webhook-signature'], this.secret, now)
    );
  }

  identify(body: Record<string, unknown>): NotificationIdentity {
    const data = objectField(body.data);
    return {
      eventId: null,
      // A payout's later transfer (`{payment_id}_2`) names the payout too.
      named: transferOf(fieldText(data.transfer_id)).paymentId,
      reference: fieldText(data.cf_transfer_id),
      type: fieldText(body.type),
    };
  }

  read(body: Record<string, unknown>): Notice | null {
    const data = objectField(body.data);
    const type = fieldText(body.type);
    if (type === 'LOW_BALANCE_ALERT') {
      const balance = rupeesToPaise(data.current_balance ?? data.balance);
      return {
        kind: 'low_balance',
        // One while open (CONTRACT §10): every alert of an outage is the same exception.
        reference: 'low_balance',
        amount: balance,
        detail: `Cashfree reports a low balance${balance === null ? '' : ` (${formatAmount(balance)})`}: payouts may be refused`,
      };
    }
    const status = Object.hasOwn(CASHFREE_TYPES, type) ? CASHFREE_TYPES[type] : undefined;
    const state = status ? cashfreeState({ ...data, status }) : null;
    if (!state) return null;
    const transferId = fieldText(data.transfer_id);
    return {
      kind: 'transfer',
      named: transferOf(transferId).paymentId,
      state,
      reference: fieldText(data.cf_transfer_id) || transferId,
      subject: `${type} for transfer "${transferId.slice(0, 64)}"`,
    };
  }
}
