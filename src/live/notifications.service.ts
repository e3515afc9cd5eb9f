/**
 * Notifications from the live channels. Each is verified on its raw body, then stored (one row per
 * provider event: a retry of the same event is a duplicate) and applied in the same database
 * transaction, before the answer: notifications that arrive together share one transaction
 * (`BatchQueue`). If applying fails, the notification is stored `pending` and the worker applies
 * it (`applyDue`); the provider gets its 200 either way. Applying goes through `ChannelOutcomes`,
 * so an event applied twice changes nothing the second time, and events may come in any order.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { jsonRecords } from '../db/json-records.ts';
import type { Database } from '../db/database.ts';
import type { Tables, TransactionKind } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { cashfreeState } from '../channels/cashfree/cashfree.channel.ts';
import { rupeesToPaise } from '../channels/channel-http.ts';
import { formatAmount } from '../money.ts';
import { setuPaymentOutcome } from '../channels/setu/setu.channel.ts';
import { findTransactions, type TransactionRow } from '../transactions/transactions.repository.ts';
import { refundsDueNow } from '../transactions/transaction-claims.repository.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import type { ChannelOutcomes, Report } from './outcomes.ts';
import type { Scope } from './outcome-exceptions.ts';
import {
  claimDueEvents,
  eventKey,
  insertChannelEvents,
  markApplied,
  retryEventAt,
  type NewChannelEvent,
} from './notifications.repository.ts';
import { verifyCashfree, verifySetu } from './signatures.ts';
import { isPaymentId } from '../ids.ts';

export type Provider = 'setu' | 'cashfree';

export interface NotificationSecrets {
  /** SETU_WEBHOOK_SECRET, or null when Setu is off. */
  setu: string | null;
  /** CASHFREE_WEBHOOK_SECRET, or null when Cashfree is off. */
  cashfree: string | null;
}

export interface NotificationLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** How long the request that stored a notification has to apply it before the worker may. */
export const APPLY_GRACE_MS = 30_000;
const LEASE_MS = 30_000;

/**
 * Cashfree's webhook types that end a transfer, and the status each stands for. Other types
 * (CREDIT_CONFIRMATION, BENEFICIARY_INCIDENT, …) are stored and change nothing; LOW_BALANCE_ALERT
 * is an exception for the operator.
 */
const CASHFREE_TYPES: Record<string, string> = {
  TRANSFER_SUCCESS: 'SUCCESS',
  TRANSFER_ACKNOWLEDGED: 'SUCCESS',
  TRANSFER_FAILED: 'FAILED',
  TRANSFER_REJECTED: 'REJECTED',
  TRANSFER_MANUALLY_REJECTED: 'MANUALLY_REJECTED',
  TRANSFER_REVERSED: 'REVERSED',
};

/** A verified notification on its way to be stored and applied. */
interface Incoming {
  provider: Provider;
  body: Record<string, unknown>;
  event: NewChannelEvent;
}

export class NotificationService {
  private readonly batch = new BatchQueue<Incoming, boolean>((items) => this.storeAndApply(items));
  /** Set by the app: where notifications are logged (type and payment_id only, never the body). */
  logger: NotificationLogger | null = null;
  /** Told after a notification made refunds due now (`refundsDueNow`), so the worker reads them at once. */
  onRefundsDue: () => void = () => {};

  constructor(
    private readonly database: Pick<Database, 'db' | 'lockRows'>,
    private readonly secrets: NotificationSecrets,
    private readonly outcomes: ChannelOutcomes,
    private readonly options: { now: () => number },
  ) {}

  private get db(): Kysely<Tables> {
    return this.database.db;
  }

  /** Whether notifications of this provider are taken (its channel is configured). */
  accepts(provider: Provider): boolean {
    return this.secrets[provider] !== null;
  }

  /**
   * Verifies, stores and applies one notification. Throws 401 SIGNATURE_INVALID (nothing stored).
   * Answers whether it was new.
   */
  async receive(
    provider: Provider,
    raw: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<{ duplicate: boolean }> {
    const secret = this.secrets[provider];
    const now = this.options.now();
    const verified =
      secret !== null &&
      (provider === 'setu'
        ? verifySetu(raw, headers['x-setu-signature'], secret)
        : verifyCashfree(raw, headers['x-webhook-timestamp'], headers['x-webhook-signature'], secret, now));
    if (!verified)
      throw new AppError('SIGNATURE_INVALID', 'The notification signature is missing or not valid');
    // Kept even when it is not a JSON object (an event of type "unknown", which changes nothing):
    // every verified notification is stored, and answered 200 so the provider stops sending it.
    const body = parseObject(raw) ?? {};
    const event = describe(provider, body, raw);
    let duplicate: boolean;
    try {
      duplicate = await this.batch.submit({ provider, body, event });
    } catch (err) {
      // Kept for the worker, which applies it after APPLY_GRACE_MS; the provider gets its 200.
      const stored = await insertChannelEvents(this.db, [event], 'pending', now, now + APPLY_GRACE_MS);
      duplicate = stored.size === 0;
      this.logger?.warn(
        { provider, type: event.type, err: errorName(err) },
        'applying a channel notification failed; the worker tries again',
      );
    }
    this.logger?.info(
      { provider, type: event.type, payment_id: event.payment_id, duplicate },
      'channel notification',
    );
    return { duplicate };
  }

  /**
   * Stores and applies notifications that arrived together in one database transaction (one
   * commit for many webhooks under load), in a few statements whatever their number: the events,
   * the transactions they name, then the outcomes (`ChannelOutcomes.applyAll`). Each is stored as
   * applied, or found a duplicate. A batch that fails is tried again one notification at a time
   * (`BatchQueue`).
   */
  private async storeAndApply(items: Incoming[]): Promise<boolean[]> {
    const due = { refunds: 0 };
    const duplicates = await this.outcomes.within(async (scope) => {
      const stored = await insertChannelEvents(
        scope.tx,
        items.map((i) => i.event),
        'applied',
        this.options.now(),
        null,
      );
      const seen = new Set<string>();
      const fresh: Incoming[] = [];
      const duplicates = items.map((item) => {
        const key = eventKey(item.event);
        const isNew = stored.has(key) && !seen.has(key);
        seen.add(key);
        if (isNew) fresh.push(item);
        return !isNew;
      });
      due.refunds = await this.apply(
        scope,
        fresh.map((i) => ({ provider: i.provider, body: i.body, paymentId: i.event.payment_id })),
      );
      return duplicates;
    });
    if (due.refunds > 0) this.onRefundsDue();
    return duplicates;
  }

  /** Applies stored notifications whose request did not (it stopped, or applying failed). */
  async applyDue(limit: number): Promise<number> {
    const now = this.options.now();
    const rows = await claimDueEvents(this.database, now, LEASE_MS, limit);
    for (const row of rows) {
      try {
        const body = parseObject(Buffer.from(row.body));
        const refunds = await this.outcomes.within(async (scope) => {
          const due = body
            ? await this.apply(scope, [
                { provider: row.provider as Provider, body, paymentId: row.payment_id },
              ])
            : 0;
          await markApplied(scope.tx, row.id, this.options.now());
          return due;
        });
        if (refunds > 0) this.onRefundsDue();
      } catch (err) {
        this.logger?.warn(
          { provider: row.provider, event: row.id, err: errorName(err) },
          'applying a channel notification failed',
        );
        await retryEventAt(this.db, row.id, this.options.now() + APPLY_GRACE_MS).catch(() => {});
      }
    }
    return rows.length;
  }

  /**
   * Reads what each notification reports, about the transactions they name (read in one
   * statement), and applies it. A Setu notification that is not a payment's may name a refund
   * (Setu documents no refund event): the refunds it names are made due, to be read at once.
   * Answers how many refunds were made due.
   */
  private async apply(
    scope: Scope,
    notifications: { provider: Provider; body: Record<string, unknown>; paymentId: string | null }[],
  ): Promise<number> {
    if (notifications.length === 0) return 0;
    const refundNames = notifications
      .filter((n) => n.provider === 'setu' && !setuType(n.body).startsWith('payment.'))
      .flatMap((n) => refundNamesIn(n.body));
    const refunds = await refundsDueNow(scope.tx, 'setu', refundNames, this.options.now());
    const named = notifications.flatMap((n) => (n.paymentId ? [n.paymentId] : []));
    const txns = new Map((await findTransactions(scope.tx, named)).map((t) => [t.payment_id, t]));
    const vpas = await merchantVpas(
      scope.tx,
      [...txns.values()].filter((t) => t.channel === 'setu').map((t) => t.merchant_id),
    );
    const reports: Report[] = [];
    for (const { provider, body } of notifications) {
      const reading = provider === 'setu' ? readSetu(body, txns, vpas) : readCashfree(body, txns);
      if (reading && 'unknown' in reading)
        await this.outcomes.untied(scope, { kind: 'unknown_reference', provider, ...reading.unknown });
      else if (reading && 'lowBalance' in reading)
        await this.outcomes.untied(scope, { kind: 'low_balance', provider, ...reading.lowBalance });
      else if (reading) reports.push(reading);
    }
    await this.outcomes.applyAll(scope, reports);
    return refunds;
  }
}

/** A Setu event's type. */
function setuType(body: Record<string, unknown>): string {
  return text(body.eventType ?? payload(body).eventType);
}

/** The ids a Setu notification may name a refund by: Paygate's refund_id (its `referenceId`) or Setu's id. */
function refundNamesIn(body: Record<string, unknown>): string[] {
  const p = payload(body);
  return [p.referenceId, p.merchantReferenceId, p.refundId, p.id].map(text);
}

/** A notification naming no transaction here. */
interface Unknown {
  /** `payment`: a customer's payment (Setu), whose money no pay-in keeps; `vpa`: the UPI id it was paid to. */
  unknown: { reference: string; amount: number | null; detail: string; payment?: boolean; vpa?: string };
}

/** Cashfree's warning that the account's balance is low (payouts will be refused). */
interface LowBalance {
  lowBalance: { reference: string; amount: number | null; detail: string };
}

/**
 * What a Setu notification reports: a payment of a pay-in here, or of none. It is the pay-in's
 * only when it names the pay-in (`merchantReferenceId`), its QR (`productInstanceId`) and the UPI
 * id the pay-in was paid to (`merchantVpa`): a reference alone could be anybody's.
 */
function readSetu(
  body: Record<string, unknown>,
  txns: Map<string, TransactionRow>,
  vpas: Map<string, string>,
): Report | Unknown | null {
  const p = payload(body);
  const type = setuType(body);
  // initiated, pending and failed do not end a pay-in: a failed attempt (a wrong PIN) leaves its QR payable.
  if (type !== 'payment.success') return null;
  const reference = text(p.id);
  const amount = typeof p.amount === 'number' && Number.isSafeInteger(p.amount) ? p.amount : null;
  const named = text(p.merchantReferenceId);
  const txn = ofKind(txns, 'payin', 'setu', named);
  const qr = text(p.productInstanceId);
  const vpa = text(p.merchantVpa);
  const mismatch = !txn
    ? 'which names no Setu pay-in here'
    : qr === '' || qr !== txn.channel_txn_id
      ? `whose QR "${qr.slice(0, 64)}" is not that pay-in's`
      : vpa === '' || vpa.toLowerCase() !== (vpas.get(txn.merchant_id) ?? '').toLowerCase()
        ? `whose UPI id "${vpa.slice(0, 100)}" is not that pay-in's`
        : null;
  if (!txn || mismatch) {
    return {
      unknown: {
        reference: reference || text(p.txnId),
        amount,
        detail: `payment.success for reference "${named.slice(0, 64)}", ${mismatch}`,
        payment: amount !== null && amount > 0,
        vpa: vpa.slice(0, 200),
      },
    };
  }
  const outcome = setuPaymentOutcome({ ...p, status: 'success' }, txn.channel_txn_id);
  return outcome ? { kind: 'payin', txn, outcome, source: 'notification:setu' } : null;
}

const NAMED_IDS = { named_id: 'text' } as const;

/** The UPI id of each merchant named, in one statement whatever their number. */
async function merchantVpas(db: Kysely<Tables>, merchantIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(merchantIds)];
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('merchants')
    .select(['id', 'vpa'])
    .where(
      'id',
      'in',
      sql<string>`(select named_id from ${jsonRecords(
        db,
        ids.map((id) => ({ named_id: id })),
        NAMED_IDS,
      )} as n)`,
    )
    .execute();
  return new Map(rows.map((r) => [r.id, r.vpa]));
}

/** What a Cashfree notification reports: a transfer's state for a payout here, or for none. */
function readCashfree(
  body: Record<string, unknown>,
  txns: Map<string, TransactionRow>,
): Report | Unknown | LowBalance | null {
  const data = (body.data && typeof body.data === 'object' ? body.data : {}) as Record<string, unknown>;
  if (text(body.type) === 'LOW_BALANCE_ALERT') {
    const balance = rupeesToPaise(data.current_balance ?? data.balance);
    return {
      lowBalance: {
        reference: `${text(body.event_time) || text(data.alert_time)}`.slice(0, 100) || 'low_balance',
        amount: balance,
        detail: `Cashfree reports a low balance${balance === null ? '' : ` (${formatAmount(balance)})`}: payouts may be refused`,
      },
    };
  }
  const type = text(body.type);
  const status = Object.hasOwn(CASHFREE_TYPES, type) ? CASHFREE_TYPES[type] : undefined;
  if (!status) return null;
  const state = cashfreeState({ ...data, status });
  const txn = ofKind(txns, 'payout', 'cashfree', text(data.transfer_id));
  if (!txn || !state) {
    return {
      unknown: {
        reference: text(data.cf_transfer_id) || text(data.transfer_id),
        amount: null,
        detail: `${text(body.type)} for transfer "${text(data.transfer_id).slice(0, 64)}", which names no Cashfree payout here`,
      },
    };
  }
  return { kind: 'payout', txn, state, source: 'notification:cashfree' };
}

/** The transaction a notification names, if it is of this kind and channel. */
function ofKind(
  txns: Map<string, TransactionRow>,
  kind: TransactionKind,
  channel: string,
  paymentId: string,
): TransactionRow | undefined {
  const txn = txns.get(paymentId);
  return txn && txn.kind === kind && txn.channel === channel ? txn : undefined;
}

/** The row a notification is stored as: its event id (the provider's, or a hash of the body), what it names, its type. */
function describe(provider: Provider, body: Record<string, unknown>, raw: Buffer): NewChannelEvent {
  const hash = createHash('sha256').update(raw).digest('hex');
  if (provider === 'setu') {
    const p = payload(body);
    const eventId = text(body.eventId ?? p.eventId);
    const named = text(p.merchantReferenceId) || text(p.referenceId);
    return {
      provider,
      event_id: eventId && eventId.length <= 200 ? eventId : hash,
      payment_id: isPaymentId(named) ? named : null,
      reference: text(p.id).slice(0, 200),
      type: text(body.eventType ?? p.eventType).slice(0, 100) || 'unknown',
      body: raw.toString('utf8'),
    };
  }
  const data = (body.data && typeof body.data === 'object' ? body.data : {}) as Record<string, unknown>;
  const named = text(data.transfer_id);
  return {
    provider,
    event_id: hash,
    payment_id: isPaymentId(named) ? named : null,
    reference: text(data.cf_transfer_id).slice(0, 200),
    type: text(body.type).slice(0, 100) || 'unknown',
    body: raw.toString('utf8'),
  };
}

/** A Setu event's payment fields: at the top level, or under `data`. */
function payload(body: Record<string, unknown>): Record<string, unknown> {
  return body.data && typeof body.data === 'object'
    ? { ...body, ...(body.data as Record<string, unknown>) }
    : body;
}

function text(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

function parseObject(raw: Buffer): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(raw.toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function errorName(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : 'error';
}
