/**
 * What merchants and operators can do with callbacks: resend the callback of a final transaction
 * (a fresh delivery with a fresh attempt count), and list deliveries with their attempt logs.
 */
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { DeliveryStatus } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { findTransaction } from '../transactions/transactions.repository.ts';
import { listAttempts, listDeliveries, type AttemptRow, type DeliveryRow } from './deliveries.repository.ts';
import { enqueueDelivery, resendTimes } from './outbox.repository.ts';
import { notifyQueued } from './queue-signal.ts';
import { callbackBodyOf } from './callback-body.ts';

export interface ResendResult {
  success: true;
  payment_id?: string;
  refund_id?: string;
  delivery_id: string;
  status: 'pending';
}

export interface DeliveryView {
  delivery_id: string;
  payment_id: string;
  merchant_id: string;
  url: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface AttemptView {
  attempt: number;
  started_at: string;
  latency_ms: number;
  http_status: number | null;
  error: string | null;
  response: string | null;
}

/** Resends of one transaction through the merchant's API, per hour (docs/integration.md §5). */
export const RESENDS_PER_HOUR = 5;
const HOUR_MS = 3_600_000;

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toDeliveryView(r: DeliveryRow): DeliveryView {
  return {
    delivery_id: r.id,
    payment_id: r.payment_id,
    merchant_id: r.merchant_id,
    url: r.url,
    status: r.status,
    attempts: r.attempts,
    max_attempts: r.max_attempts,
    next_attempt_at: iso(r.next_attempt_at),
    last_error: r.last_error,
    created_at: new Date(r.created_at).toISOString(),
    delivered_at: iso(r.delivered_at),
  };
}

export function toAttemptView(a: AttemptRow): AttemptView {
  return {
    attempt: a.attempt_no,
    started_at: new Date(a.started_at).toISOString(),
    latency_ms: a.latency_ms,
    http_status: a.http_status,
    error: a.error_kind,
    response: a.response_snippet,
  };
}

export class CallbackService {
  /** Called after a resend is committed (the app wakes its dispatcher). */
  onQueued: (() => void) | null = null;

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Queues the callback of a final transaction again. With `merchantId`, only that merchant's
   * transactions are visible (404 otherwise, as for an unknown id); without it (the operator's
   * CLI), any transaction. A refund is named by its refund_id, a pay-in or payout by its
   * payment_id; a bare id (the CLI's and the console's) may be either. 409 INVALID_STATE when it is not final or
   * has no callback URL.
   */
  async resend(
    id: string | { paymentId: string } | { refundId: string },
    merchantId?: string,
  ): Promise<ResendResult> {
    const { db } = this.database;
    const named = typeof id === 'string' ? { id } : id;
    const paymentId =
      'paymentId' in named ? named.paymentId : 'refundId' in named ? named.refundId : named.id;
    const txn = await findTransaction(db, paymentId);
    const kindFits = !txn || 'id' in named || 'refundId' in named === (txn.kind === 'refund');
    if (!txn || !kindFits || (merchantId !== undefined && txn.merchant_id !== merchantId)) {
      throw new AppError(
        'PAYMENT_NOT_FOUND',
        'refundId' in named ? 'No refund with this refund_id' : 'No pay-in or payout with this payment_id',
      );
    }
    if (txn.status !== 'SUCCESS' && txn.status !== 'FAILED') {
      throw new AppError(
        'INVALID_STATE',
        `The transaction is not final yet (${txn.status}); its callback is sent when it is`,
        {
          status: txn.status,
        },
      );
    }
    // The URL resolved when the transaction was created (docs/decisions.md): none means no callback.
    const url = txn.callback_url;
    if (!url) throw new AppError('INVALID_STATE', 'The transaction has no callback URL');
    const delivery = {
      paymentId,
      merchantId: txn.merchant_id,
      url,
      body: callbackBodyOf({ ...txn, status: txn.status }),
      maxAttempts: 1 + this.config.callbackMaxRetries,
    };
    const at = this.now();
    // The merchant's resends are counted and queued under the transaction's row lock, so that
    // concurrent resends cannot all pass the count; the operator's are not limited.
    const deliveryId =
      merchantId === undefined
        ? await enqueueDelivery(db, delivery, at)
        : await db.transaction().execute(async (tx) => {
            await this.database
              .lockRows(
                tx.selectFrom('transactions').select('payment_id').where('payment_id', '=', paymentId),
                'wait',
              )
              .execute();
            const recent = await resendTimes(tx, paymentId, at - HOUR_MS);
            if (recent.length >= RESENDS_PER_HOUR) {
              const waitS = Math.max(
                1,
                Math.ceil((recent[recent.length - RESENDS_PER_HOUR]! + HOUR_MS - at) / 1000),
              );
              throw new AppError(
                'RATE_LIMITED',
                `At most ${RESENDS_PER_HOUR} resends of one transaction per hour; try again in ${waitS} s`,
                { retry_after_s: waitS },
                { 'Retry-After': String(waitS) },
              );
            }
            return enqueueDelivery(tx, delivery, at);
          });
    if (this.onQueued) this.onQueued();
    else await notifyQueued(this.database).catch(() => {});
    const which = txn.kind === 'refund' ? { refund_id: paymentId } : { payment_id: paymentId };
    return { success: true, ...which, delivery_id: deliveryId, status: 'pending' };
  }

  /** Deliveries, newest first. */
  async list(
    filter: { status?: DeliveryStatus; merchantId?: string; paymentId?: string; limit?: number } = {},
  ): Promise<DeliveryView[]> {
    const rows = await listDeliveries(this.database.db, {
      ...filter,
      limit: Math.min(filter.limit ?? 100, 1000),
    });
    return rows.map(toDeliveryView);
  }

  /** The attempt log of one delivery. */
  async attempts(deliveryId: string): Promise<AttemptView[]> {
    return (await listAttempts(this.database.db, deliveryId)).map(toAttemptView);
  }
}
