/**
 * Disputes as the providers report them (CONTRACT §10 "Disputes"), inside the transaction that
 * stores the notification. An opened dispute becomes a `dispute` exception on the pay-in (found by
 * the payment's bank reference and the provider's payment id) with its amount and the provider's
 * dispute id, and a `disputes` row beside it, once: while it is open the pay-in cannot be refunded.
 * The provider's won or lost records that outcome as an operator's would (`DisputeDecisions`),
 * opening the dispute first if its opening never arrived; an outcome recorded already, or an
 * exception an operator resolved, is left as it is. Other statuses change nothing.
 */
import type { Kysely } from 'kysely';
import type { DisputeNotice, Notice } from '../channels/notification-reader.ts';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { formatAmount } from '../money.ts';
import { lockExceptionOf, recordException, type ExceptionRow } from '../exceptions/exceptions.repository.ts';
import { payinsByUtr, type TransactionRow } from '../transactions/transactions.repository.ts';
import type { DisputeDecisions } from './dispute-decisions.ts';
import { insertDispute } from './disputes.repository.ts';

/** A notification read, as the gateway holds it: its provider and what it reports. */
export interface ReadNotice {
  reader: { provider: string; label: string };
  notice: Notice | null;
}

export class DisputeIntake {
  constructor(
    private readonly decisions: DisputeDecisions,
    private readonly now: () => number,
  ) {}

  /** Applies the dispute notices among `read`. Answers how many refunds it started (the worker reads them). */
  async apply(tx: Kysely<Tables>, read: readonly ReadNotice[]): Promise<number> {
    let refunds = 0;
    for (const { reader, notice } of read)
      if (notice?.kind === 'dispute' && notice.status !== 'other')
        refunds += await this.one(tx, reader, notice);
    return refunds;
  }

  private async one(tx: Kysely<Tables>, reader: ReadNotice['reader'], n: DisputeNotice): Promise<number> {
    const e = await this.opened(tx, reader, n);
    if (n.status === 'open' || n.status === 'other' || e.resolved_at !== null) return 0;
    try {
      const done = await this.decisions.decide(tx, e, n.status, 'channel', this.now());
      return done.changed && n.status === 'lost' ? 1 : 0;
    } catch (err) {
      // The other outcome was recorded already (an operator's): the notification is kept, nothing changes.
      if (err instanceof AppError) return 0;
      throw err;
    }
  }

  /** The dispute's exception, locked; opened with its `disputes` row when it is new. */
  private async opened(
    tx: Kysely<Tables>,
    reader: ReadNotice['reader'],
    n: DisputeNotice,
  ): Promise<ExceptionRow> {
    const key = {
      kind: 'dispute' as const,
      provider: reader.provider,
      reference: (n.disputeId || n.paymentId || n.rrn).slice(0, 200),
    };
    const found = await lockExceptionOf(tx, key);
    if (found) return found;
    const payin = disputedPayin(await payinsByUtr(tx, reader.provider, n.rrn), n);
    const at = this.now();
    const amount = n.amount === null ? '' : ` for ${formatAmount(n.amount)}`;
    const id = await recordException(
      tx,
      {
        ...key,
        paymentId: payin?.payment_id ?? null,
        merchantId: payin?.merchant_id ?? null,
        currency: payin?.currency ?? 'INR',
        amount: n.amount,
        detail: `${reader.label} ${n.subject}: payment "${n.paymentId.slice(0, 64)}" (rrn ${n.rrn.slice(0, 32) || 'none'}) disputed${amount}${payin ? '' : `, which names no ${reader.label} pay-in here`}`,
      },
      at,
    );
    await insertDispute(tx, {
      exception_id: id!,
      provider: reader.provider,
      dispute_id: key.reference,
      payin_id: payin?.payment_id ?? null,
      merchant_id: payin?.merchant_id ?? null,
      currency: payin?.currency ?? 'INR',
      amount: n.amount,
      opened_at: at,
    });
    return (await lockExceptionOf(tx, key))!;
  }
}

/**
 * The pay-in a dispute names among those with its bank reference: the one paid by the provider's
 * payment it names (by id, or by transaction id); with neither named, the only one.
 */
function disputedPayin(candidates: TransactionRow[], n: DisputeNotice): TransactionRow | undefined {
  if (n.paymentId === '' && n.txnId === '') return candidates.length === 1 ? candidates[0] : undefined;
  return candidates.find(
    (t) =>
      (n.paymentId !== '' && t.channel_payment_id === n.paymentId) ||
      (n.txnId !== '' && t.channel_payment_txn_id === n.txnId),
  );
}
