/**
 * Notifications from the live channels. Each is verified on its raw body, then stored (one row per
 * provider event: a retry of the same event is a duplicate) and applied in the same database
 * transaction, before the answer: notifications that arrive together share one transaction
 * (`BatchQueue`). If applying fails, the notification is stored `pending` and the worker applies
 * it (`applyDue`); the provider gets its 200 either way. Applying goes through `ChannelOutcomes`,
 * so an event applied twice changes nothing the second time, and events may come in any order.
 *
 * The signature is checked before anything else and a verified notification is never refused for
 * rate; failures are counted per provider (`SignatureFailures`). What a provider sent is stored in
 * a form both databases hold (`storable.ts`: NUL and lone surrogates replaced, the exact bytes kept
 * in `raw_base64`), and read in that form. A stored notification that still cannot be applied is
 * tried `APPLY_TRIES` times, then marked `failed` with a `notification_failed` exception: never
 * retried forever.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { NotificationHeaders, NotificationReader } from '../channels/notification-reader.ts';
import { findTransactions } from '../transactions/transactions.repository.ts';
import { refundsDueNow } from '../transactions/transaction-claims.repository.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import type { ChannelOutcomes } from './outcomes.ts';
import type { Scope } from './outcome-exceptions.ts';
import { heldAgainst, type Read } from './notices.ts';
import {
  claimDueEvents,
  eventKey,
  failedApply,
  insertChannelEvents,
  markApplied,
  markFailed,
  type ChannelEventRow,
  type NewChannelEvent,
} from './notifications.repository.ts';
import { isPaymentId } from '../ids.ts';
import type { DisputeIntake } from '../disputes/dispute-intake.ts';
import { recordException } from '../exceptions/exceptions.repository.ts';
import { SignatureFailures } from './signature-failures.ts';
import { parseStorable, storableText, storedBody } from './storable.ts';

export interface NotificationLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** How long the request that stored a notification has to apply it before the worker may. */
export const APPLY_GRACE_MS = 30_000;
const LEASE_MS = 30_000;
/** Tries to apply a stored notification before it is `failed` and an exception. */
export const APPLY_TRIES = 5;

/** A verified notification on its way to be stored and applied. */
interface Incoming {
  reader: NotificationReader;
  body: Record<string, unknown>;
  event: NewChannelEvent;
}

/** A stored notification to apply: what reads it, its body, the payment_id it was stored under. */
interface Stored {
  reader: NotificationReader;
  body: Record<string, unknown>;
  paymentId: string | null;
}

export class NotificationService {
  private readonly batch = new BatchQueue<Incoming, boolean>((items) => this.storeAndApply(items));
  private readonly byProvider: Map<string, NotificationReader>;
  /** Set by the app: where notifications are logged (type and payment_id only, never the body). */
  logger: NotificationLogger | null = null;
  /** Told after a notification made refunds due now (`refundsDueNow`), so the worker reads them at once. */
  onRefundsDue: () => void = () => {};
  /** Set by the wiring: customers' disputes the notifications report (`src/disputes/`). */
  disputes: DisputeIntake | null = null;
  /** Failed signatures per provider endpoint, and their alarm. */
  readonly signatureFailures: SignatureFailures;

  /** `readers`: every live channel's, configured or not (one that is not takes no notification). */
  constructor(
    private readonly database: Pick<Database, 'db' | 'lockRows'>,
    readonly readers: readonly NotificationReader[],
    private readonly outcomes: ChannelOutcomes,
    private readonly options: { now: () => number; retryMs?: number },
  ) {
    this.byProvider = new Map(readers.map((r) => [r.provider, r]));
    this.signatureFailures = new SignatureFailures(database.db, options.now, (err) =>
      this.logger?.warn({ err: errorName(err) }, 'opening a signature_failures exception failed'),
    );
  }

  private get retryMs(): number {
    return this.options.retryMs ?? APPLY_GRACE_MS;
  }

  private get db(): Kysely<Tables> {
    return this.database.db;
  }

  /** Whether notifications of this provider are taken (its channel is configured). */
  accepts(provider: string): boolean {
    return this.byProvider.get(provider)?.accepting ?? false;
  }

  /**
   * Verifies, stores and applies one notification. Throws 401 SIGNATURE_INVALID (nothing stored,
   * the failure counted for `provider`'s endpoint; `address` names the sender in its alarm).
   * Answers whether it was new.
   */
  async receive(
    provider: string,
    raw: Buffer,
    headers: NotificationHeaders,
    address = 'unknown',
  ): Promise<{ duplicate: boolean }> {
    const reader = this.byProvider.get(provider);
    const now = this.options.now();
    if (!reader?.verify(raw, headers, now)) {
      void this.signatureFailures.failed(provider, address);
      throw new AppError('SIGNATURE_INVALID', 'The notification signature is missing or not valid');
    }
    // Kept even when it is not a JSON object (an event of type "unknown", which changes nothing):
    // every verified notification is stored, and answered 200 so the provider stops sending it.
    const body = parseStorable(raw.toString('utf8')) ?? {};
    const event = storedAs(reader, body, raw);
    let duplicate: boolean;
    try {
      duplicate = await this.batch.submit({ reader, body, event });
    } catch (err) {
      // Kept for the worker, which applies it after APPLY_GRACE_MS; the provider gets its 200.
      const stored = await insertChannelEvents(this.db, [event], 'pending', now, now + this.retryMs);
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
        fresh.map((i) => ({ reader: i.reader, body: i.body, paymentId: i.event.payment_id })),
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
        // Read as it came: the exact bytes when the stored text is not exactly them.
        const text = row.raw_base64 ? Buffer.from(row.raw_base64, 'base64').toString('utf8') : row.body;
        const body = parseStorable(text);
        const reader = this.byProvider.get(row.provider);
        const refunds = await this.outcomes.within(async (scope) => {
          const due =
            body && reader ? await this.apply(scope, [{ reader, body, paymentId: row.payment_id }]) : 0;
          await markApplied(scope.tx, row.id, this.options.now());
          return due;
        });
        if (refunds > 0) this.onRefundsDue();
      } catch (err) {
        this.logger?.warn(
          { provider: row.provider, event: row.id, err: errorName(err) },
          'applying a channel notification failed',
        );
        await this.applyFailed(row, err).catch(() => {});
      }
    }
    return rows.length;
  }

  /**
   * Counts a failed try of a stored notification: due again after the retry delay, or, at the
   * last try, `failed` with a `notification_failed` exception for the operator (in one transaction).
   */
  private async applyFailed(row: ChannelEventRow, err: unknown): Promise<void> {
    const at = this.options.now();
    await this.db.transaction().execute(async (tx) => {
      const tries = await failedApply(tx, row.id, at + this.retryMs);
      if (tries === null || tries < APPLY_TRIES) return;
      await markFailed(tx, row.id);
      await recordException(
        tx,
        {
          kind: 'notification_failed',
          provider: row.provider,
          paymentId: row.payment_id,
          reference: `event ${row.id}`,
          amount: null,
          detail: storableText(
            `the ${row.type} notification (event ${row.event_id}) could not be applied after ${tries} tries: ${errorName(err)}; it is stored as it came`,
          ),
        },
        at,
      );
    });
  }

  /**
   * Reads what each notification reports, holds it against the transactions they name (read in
   * one statement), and applies it. Refunds a notification names are made due, to be read at once.
   * Answers how many refunds were made due.
   */
  private async apply(scope: Scope, notifications: Stored[]): Promise<number> {
    if (notifications.length === 0) return 0;
    const read: Read[] = notifications.map(({ reader, body }) => ({ reader, notice: reader.read(body) }));
    const refunds = await this.refundsNamed(scope, read);
    const named = notifications.flatMap((n) => (n.paymentId ? [n.paymentId] : []));
    const txns = new Map((await findTransactions(scope.tx, named)).map((t) => [t.payment_id, t]));
    const { reports, untied } = await heldAgainst(scope.tx, read, txns);
    for (const u of untied) await this.outcomes.untied(scope, u);
    await this.outcomes.applyAll(scope, reports);
    return refunds + ((await this.disputes?.apply(scope.tx, read)) ?? 0);
  }

  /** Makes the refunds the notifications name due now, one statement per provider that names any. */
  private async refundsNamed(scope: Scope, read: Read[]): Promise<number> {
    const names = new Map<string, string[]>();
    for (const { reader, notice } of read)
      if (notice?.kind === 'refunds')
        names.set(reader.provider, [...(names.get(reader.provider) ?? []), ...notice.names]);
    let due = 0;
    for (const [provider, refundNames] of names)
      due += await refundsDueNow(scope.tx, provider, refundNames, this.options.now());
    return due;
  }
}

/** The row a notification is stored as: its event id (the provider's, or a hash of the body), what it names, its type. */
function storedAs(reader: NotificationReader, body: Record<string, unknown>, raw: Buffer): NewChannelEvent {
  const id = reader.identify(body);
  const { body: text, rawBase64 } = storedBody(raw);
  return {
    provider: reader.provider,
    event_id:
      id.eventId && id.eventId.length <= 200
        ? storableText(id.eventId)
        : createHash('sha256').update(raw).digest('hex'),
    payment_id: isPaymentId(id.named) ? id.named : null,
    // Made storable after the cut: a cut through a surrogate pair leaves a lone surrogate.
    reference: storableText(id.reference.slice(0, 200)),
    type: storableText(id.type.slice(0, 100)) || 'unknown',
    body: text,
    raw_base64: rawBase64,
  };
}

function errorName(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 200) : 'error';
}
