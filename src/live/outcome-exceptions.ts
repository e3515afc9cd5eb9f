/**
 * How what a channel reported is kept for the operator when it changes no status: an exception on
 * the transaction it names, or one that names none (`untied`). Both are recorded once; one that
 * holds a customer's money journals it into suspense in the same database transaction.
 */
import { sql, type Kysely } from 'kysely';
import type { ExceptionHolds, Tables } from '../db/schema.ts';
import type { Settled } from '../finality/finality.service.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { recordException, type ExceptionKind } from '../exceptions/exceptions.repository.ts';
import type { SuspenseSource, UnmatchedMoney } from '../exceptions/unmatched.ts';

/** The transaction reports are applied in, and the final statuses to announce after its commit. */
export interface Scope {
  tx: Kysely<Tables>;
  settled: Settled[];
}

/** What `untied` records. `payment`: it is a customer's payment (money in suspense); `vpa`: the UPI id it was paid to. */
export interface Untied {
  kind: 'unknown_reference' | 'low_balance';
  provider: string;
  reference: string;
  amount: number | null;
  detail: string;
  payment?: boolean;
  vpa?: string;
}

/** What an exception on a transaction says, apart from the transaction itself. */
export interface TxnException {
  kind: ExceptionKind;
  reference: string;
  amount: number | null;
  detail: string;
  /** The provider's text of an amount that could not be read. */
  amountText?: string;
  holds?: ExceptionHolds | null;
  /** Where money held in suspense came from: a customer's payment (the default), or a refund that came back. */
  journal?: SuspenseSource;
}

export class OutcomeExceptions {
  constructor(
    private readonly now: () => number,
    private readonly unmatched: UnmatchedMoney | null,
  ) {}

  /**
   * Records an exception once; its id when this call opened it, else null. An exception that holds
   * customers' money (`holds: 'suspense'`, with an amount that could be read) journals it into suspense.
   */
  async of(s: Scope, txn: TransactionRow, e: TxnException): Promise<number | null> {
    // An amount the provider sent that could not be read is no amount (its text is in the detail).
    const unreadable = e.amount !== null && e.amount < 0;
    const id = await recordException(
      s.tx,
      {
        kind: e.kind,
        provider: txn.channel,
        paymentId: txn.payment_id,
        merchantId: txn.merchant_id,
        currency: txn.currency,
        reference: e.reference,
        amount: unreadable ? null : e.amount,
        amountText: unreadable ? (e.amountText ?? 'unreadable') : null,
        detail: e.detail,
        holds: e.holds ?? null,
      },
      this.now(),
    );
    if (id !== null && e.holds === 'suspense' && !unreadable && e.amount !== null)
      await this.unmatched?.suspended(s.tx, id, e.journal);
    return id;
  }

  /**
   * Something a channel reported that names no transaction of this gateway: a notification for an
   * unknown reference, a provider's low-balance warning. A customer's payment among them (it carries
   * an amount) is money in suspense, kept with the merchant whose UPI id it was paid to, if any.
   */
  async untied(s: Scope, e: Untied): Promise<void> {
    const merchant = e.vpa
      ? await s.tx
          .selectFrom('merchants')
          .select('id')
          .where(sql<string>`lower(vpa)`, '=', e.vpa.toLowerCase())
          .executeTakeFirst()
      : undefined;
    const id = await recordException(
      s.tx,
      {
        kind: e.kind,
        provider: e.provider,
        paymentId: null,
        merchantId: merchant?.id ?? null,
        reference: e.reference,
        amount: e.amount,
        detail: e.detail,
        holds: e.payment ? 'suspense' : null,
      },
      this.now(),
    );
    if (id !== null && e.payment) await this.unmatched?.suspended(s.tx, id);
  }
}
