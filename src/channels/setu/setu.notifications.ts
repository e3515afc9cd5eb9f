/**
 * Setu's notifications (UMAP): signed with the webhook secret (`setu.signature.ts`), keyed by
 * their `eventId`, their fields at the top level or under `data`. `payment.success` is a payment
 * of the pay-in it names, by its QR (`productInstanceId`) and the UPI id paid (`merchantVpa`);
 * other `payment.*` events end nothing (a failed attempt leaves the QR payable); `dispute.*` events
 * are a customer's dispute of a payment (`setu.disputes.ts`); any other event may name a refund.
 */
import { fieldText } from '../body-fields.ts';
import type {
  NotificationHeaders,
  NotificationIdentity,
  NotificationReader,
  Notice,
} from '../notification-reader.ts';
import { setuPaymentOutcome } from './setu.channel.ts';
import { verifySetu } from './setu.signature.ts';
import { setuDispute } from './setu.disputes.ts';

export class SetuNotifications implements NotificationReader {
  readonly provider = 'setu';
  readonly label = 'Setu';
  readonly title = 'Setu UPI';
  readonly accepting: boolean;

  /** `secret`: SETU_WEBHOOK_SECRET, or null when Setu is off. */
  constructor(private readonly secret: string | null) {
    this.accepting = secret !== null;
  }

  verify(raw: Buffer, headers: NotificationHeaders): boolean {
    return this.secret !== null && verifySetu(raw, headers['x-setu-signature'], this.secret);
  }

  identify(body: Record<string, unknown>): NotificationIdentity {
    const p = payload(body);
    return {
      eventId: fieldText(body.eventId ?? p.eventId) || null,
      named: fieldText(p.merchantReferenceId) || fieldText(p.referenceId),
      reference: fieldText(p.id),
      type: eventType(body),
    };
  }

  read(body: Record<string, unknown>): Notice | null {
    const type = eventType(body);
    if (type.startsWith('dispute.')) return setuDispute(payload(body), type);
    if (!type.startsWith('payment.')) return { kind: 'refunds', names: refundNamesIn(body) };
    // initiated, pending and failed do not end a pay-in: a failed attempt (a wrong PIN) leaves its QR payable.
    if (type !== 'payment.success') return null;
    const p = payload(body);
    const named = fieldText(p.merchantReferenceId);
    const qr = fieldText(p.productInstanceId);
    const outcome = setuPaymentOutcome({ ...p, status: 'success' }, qr);
    if (!outcome) return null;
    return {
      kind: 'payment',
      named,
      channelTxnId: qr,
      payeeVpa: fieldText(p.merchantVpa),
      outcome,
      reference: fieldText(p.id) || fieldText(p.txnId),
      amount: typeof p.amount === 'number' && Number.isSafeInteger(p.amount) ? p.amount : null,
      subject: `payment.success for reference "${named.slice(0, 64)}"`,
    };
  }
}

/** A Setu event's type. */
function eventType(body: Record<string, unknown>): string {
  return fieldText(body.eventType ?? payload(body).eventType);
}

/** The ids a Setu notification may name a refund by: Paygate's refund_id (its `referenceId`) or Setu's id. */
function refundNamesIn(body: Record<string, unknown>): string[] {
  const p = payload(body);
  return [p.referenceId, p.merchantReferenceId, p.refundId, p.id].map(fieldText);
}

/** A Setu event's fields: at the top level, or under `data`. */
function payload(body: Record<string, unknown>): Record<string, unknown> {
  return body.data && typeof body.data === 'object'
    ? { ...body, ...(body.data as Record<string, unknown>) }
    : body;
}
