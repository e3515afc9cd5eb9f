/**
 * What a live channel reports, applied the one way whatever brought it (a notification, a poll, a
 * look at expiry): a final outcome goes through the one final-status transition; a payment of
 * the wrong amount, a payment for a pay-in already final, and a reversal are kept as exceptions
 * for the operator. Everything here may run twice for the same report and changes nothing the
 * second time. Each report is applied inside a `Scope` (one database transaction, which may carry
 * several reports); the final statuses it committed are announced after the commit.
 */
import { sql, type Kysely } from 'kysely';
import type { FinalOutcome, PayoutState, RefundState } from '../channels/channel.ts';
import type { ExceptionHolds, Tables } from '../db/schema.ts';
import { formatAmount } from '../money.ts';
import type { FinalityService, Settled } from '../finality/finality.service.ts';
import { insertEvents, type TransactionRow } from '../transactions/transactions.repository.ts';
import { recordException, type ExceptionKind } from '../exceptions/exceptions.repository.ts';
import { receivableReversed, type UnmatchedMoney } from '../exceptions/unmatched.ts';
import { paidAfterFailed } from '../wallet/ledger.ts';

/** The transaction reports are applied in, and the final statuses to announce after its commit. */
export interface Scope {
  tx: Kysely<Tables>;
  settled: Settled[];
}

/** What a channel reported about one transaction. */
export type Report =
  | { kind: 'payin'; txn: TransactionRow; outcome: FinalOutcome; source: string }
  | { kind: 'payout'; txn: TransactionRow; state: PayoutState; source: string };

export class ChannelOutcomes {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly finality: FinalityService,
    private readonly now: () => number,
    private readonly unmatched: UnmatchedMoney | null = null,
  ) {}

  /** Runs `apply` in a transaction of its own, then announces what it settled. */
  async within<T>(apply: (scope: Scope) => Promise<T>): Promise<T> {
    const settled: Settled[] = [];
    const result = await this.db.transaction().execute((tx) => apply({ tx, settled }));
    this.finality.announce(settled);
    return result;
  }

  payin(txn: TransactionRow, outcome: FinalOutcome, source: string): Promise<void> {
    return this.within((s) => this.payinIn(s, txn, outcome, source));
  }

  /** A payout's state. False when what the channel said was kept as an exception (see `payoutIn`). */
  payout(txn: TransactionRow, state: PayoutState, source: string): Promise<boolean> {
    return this.within((s) => this.payoutIn(s, txn, state, source));
  }

  /** A pay-in's outcome. A payment that does not fit the pay-in changes nothing and is an exception. */
  async payinIn(s: Scope, txn: TransactionRow, outcome: FinalOutcome, source: string): Promise<void> {
    const reference = outcome.reference || outcome.utr || txn.payment_id;
    if (outcome.status === 'SUCCESS' && outcome.amount !== undefined && outcome.amount !== txn.amount) {
      await this.exception(
        s,
        txn,
        'amount_mismatch',
        reference,
        outcome.amount,
        `paid ${paiseText(outcome.amount, outcome.amountText)} for a pay-in of ${formatAmount(txn.amount)} (utr ${outcome.utr || 'none'})`,
        { amountText: outcome.amountText, holds: 'suspense' },
      );
      return;
    }
    if (await this.settle(s, txn, outcome, source)) return;
    await this.afterFinal(s, txn, outcome);
  }

  /** A pay-in's outcome that found it final already: the same payment again changes nothing; another one is kept. */
  private async afterFinal(s: Scope, txn: TransactionRow, outcome: FinalOutcome): Promise<void> {
    if (outcome.status !== 'SUCCESS') return;
    const now = await s.tx
      .selectFrom('transactions')
      .selectAll()
      .where('payment_id', '=', txn.payment_id)
      .executeTakeFirst();
    if (now && !(now.status === 'SUCCESS' && now.utr === outcome.utr))
      await this.exception(
        s,
        now,
        'payment_after_final',
        outcome.reference || outcome.utr || txn.payment_id,
        outcome.amount ?? null,
        `a payment (utr ${outcome.utr || 'none'}) came for a pay-in already ${now.status}`,
        { holds: 'suspense' },
      );
  }

  /**
   * Reports on several transactions, applied together. Plain final outcomes (the amount fits, no
   * reversal, each transaction named once) settle in one batch of statements; the rest, and a
   * pay-in the batch found final already, go one at a time as above. Each transaction is in one
   * of the two parts, so the order between them does not matter.
   */
  async applyAll(s: Scope, reports: Report[]): Promise<void> {
    const named = new Map<string, number>();
    for (const r of reports) named.set(r.txn.payment_id, (named.get(r.txn.payment_id) ?? 0) + 1);
    const plain: { report: Report; outcome: FinalOutcome }[] = [];
    const rest: Report[] = [];
    for (const r of reports) {
      const outcome = r.kind === 'payin' ? r.outcome : r.state.outcome;
      // A pay-in's failure carries no payment to compare; a payout's outcome must be of its amount.
      const fits =
        outcome?.amount === undefined ||
        outcome.amount === r.txn.amount ||
        (r.kind === 'payin' && outcome.status === 'FAILED');
      const reversed = r.kind === 'payout' && r.state.reversed;
      if (outcome && fits && !reversed && named.get(r.txn.payment_id) === 1)
        plain.push({ report: r, outcome });
      else rest.push(r);
    }
    const settled = await this.finality.settleManyIn(
      s.tx,
      plain.map(({ report, outcome }) => ({
        paymentId: report.txn.payment_id,
        outcome,
        source: report.source,
      })),
    );
    for (const [i, done] of settled.entries()) {
      const r = plain[i]!.report;
      if (done) s.settled.push(done);
      else if (r.kind === 'payin') await this.afterFinal(s, r.txn, plain[i]!.outcome);
      else await this.payoutAfterFinal(s, r.txn, r.state, r.source);
    }
    for (const r of rest) {
      if (r.kind === 'payin') await this.payinIn(s, r.txn, r.outcome, r.source);
      else await this.payoutIn(s, r.txn, r.state, r.source);
    }
  }

  /**
   * A payout's state: its outcome settles it when it is not final yet; one that finds it final is
   * weighed against what was recorded (`payoutAfterFinal`). An amount that differs or cannot be read
   * changes nothing and is kept as an exception: false then (the caller polls it with backoff).
   */
  async payoutIn(s: Scope, txn: TransactionRow, state: PayoutState, source: string): Promise<boolean> {
    const outcome = state.outcome;
    if (!outcome) return true;
    if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
      await this.exception(
        s,
        txn,
        'amount_mismatch',
        outcome.reference || txn.payment_id,
        outcome.amount,
        `the channel reports ${paiseText(outcome.amount)} ${state.reversed ? 'REVERSED' : outcome.status} for a payout of ${formatAmount(txn.amount)}`,
      );
      return false;
    }
    // A REVERSED with no SUCCESS recorded fails the payout: the money never reached the beneficiary.
    if (await this.settle(s, txn, outcome, state.reversed ? `${source}:reversed` : source)) return true;
    await this.payoutAfterFinal(s, txn, state, source);
    return true;
  }

  /**
   * A payout's outcome that found it final already. After SUCCESS: a reversal returns the money
   * and tells the merchant; a failure is an exception. After FAILED (the hold went back to the
   * merchant): a SUCCESS means the money left after all: an exception, and the amount is journaled
   * as owed by the merchant (`external:receivable`); a REVERSED is an exception and, if such a
   * SUCCESS was journaled, cancels that debt. Each is applied once: the exception's insert is the
   * guard, and the payout's row is locked first, so that a SUCCESS and a REVERSED applied at once
   * see each other.
   */
  private async payoutAfterFinal(
    s: Scope,
    txn: TransactionRow,
    state: PayoutState,
    source: string,
  ): Promise<void> {
    const outcome = state.outcome!;
    const now = await s.tx
      .updateTable('transactions')
      .set((eb) => ({ updated_at: eb.ref('updated_at') }))
      .where('payment_id', '=', txn.payment_id)
      .returningAll()
      .executeTakeFirst();
    if (!now) return;
    const id = txn.payment_id;
    const money = {
      kind: 'payout' as const,
      merchantId: now.merchant_id,
      currency: now.currency,
      amount: now.amount,
      paymentId: id,
    };
    if (now.status === 'SUCCESS') {
      if (state.reversed) {
        const reversed = await this.finality.reverseIn(s.tx, id, source);
        if (!reversed) return;
        s.settled.push(reversed);
        await this.exception(
          s,
          now,
          'reversal',
          id,
          now.amount,
          `the payout's ${formatAmount(now.amount)} came back after SUCCESS (utr ${now.utr || 'none'}) and is available again`,
        );
      } else if (outcome.status === 'FAILED')
        await this.exception(
          s,
          now,
          'status_mismatch',
          id,
          now.amount,
          'the channel reports FAILED for a payout recorded SUCCESS',
        );
      return;
    }
    if (now.status !== 'FAILED') return;
    if (state.reversed) {
      const opened = await this.exception(
        s,
        now,
        'reversal_after_failed',
        id,
        now.amount,
        'the channel reports REVERSED for a payout recorded FAILED',
      );
      if (opened === null) return;
      await insertEvents(
        s.tx,
        [{ paymentId: id, status: 'FAILED', source: `${source}:reversed` }],
        this.now(),
      );
      const owed = await s.tx
        .selectFrom('channel_exceptions')
        .select('id')
        .where('kind', '=', 'payout_after_failed')
        .where('provider', '=', now.channel)
        .where('reference', '=', id)
        .where('holds', '=', 'receivable')
        .executeTakeFirst();
      if (owed) await receivableReversed(s.tx, Number(owed.id), this.now());
    } else if (outcome.status === 'SUCCESS') {
      // A REVERSED seen first (it failed the payout, or came after FAILED) means the money came back.
      const holds = (await reversalSeen(s.tx, id)) ? null : 'receivable';
      const opened = await this.exception(
        s,
        now,
        'payout_after_failed',
        id,
        now.amount,
        `the channel paid ${formatAmount(now.amount)} (utr ${outcome.utr || 'none'}) for a payout recorded FAILED, whose hold went back to the merchant`,
        { holds },
      );
      if (opened !== null && holds) await paidAfterFailed(s.tx, money, this.now());
    }
  }

  /**
   * A refund's state: its outcome settles it when it is not final yet. An amount that differs or
   * cannot be read changes nothing and is an exception (false: the caller polls it with backoff);
   * an outcome that contradicts the final status recorded is an exception too. A SUCCESS after
   * FAILED (the hold went back to the merchant, but the customer was paid) is owed by the merchant,
   * as a payout's is: `refund_after_failed`, journaled once to `external:receivable`.
   */
  refund(txn: TransactionRow, state: RefundState, source: string): Promise<boolean> {
    return this.within(async (s) => {
      const outcome = state.outcome;
      if (!outcome) return true;
      if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
        await this.exception(
          s,
          txn,
          'amount_mismatch',
          outcome.reference || txn.payment_id,
          outcome.amount,
          `the channel reports ${paiseText(outcome.amount, outcome.amountText)} ${outcome.status} for a refund of ${formatAmount(txn.amount)}`,
          { amountText: outcome.amountText },
        );
        return false;
      }
      if (await this.settle(s, txn, outcome, source)) return true;
      // Locked (on PostgreSQL), so that two reports of a SUCCESS after FAILED see each other.
      const now = await s.tx
        .updateTable('transactions')
        .set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('payment_id', '=', txn.payment_id)
        .returning('status')
        .executeTakeFirst();
      // A refund of money in suspense (no pay-in) has no merchant to owe it: a status_mismatch.
      if (now?.status === 'FAILED' && outcome.status === 'SUCCESS' && txn.refund_of) {
        const opened = await this.exception(
          s,
          txn,
          'refund_after_failed',
          txn.payment_id,
          txn.amount,
          `the channel paid the customer ${formatAmount(txn.amount)} (utr ${outcome.utr || 'none'}) for a refund recorded FAILED, whose hold went back to the merchant`,
          { holds: 'receivable' },
        );
        if (opened !== null)
          await paidAfterFailed(
            s.tx,
            {
              kind: 'refund',
              merchantId: txn.merchant_id,
              currency: txn.currency,
              amount: txn.amount,
              paymentId: txn.payment_id,
            },
            this.now(),
          );
      } else if ((now?.status === 'SUCCESS' || now?.status === 'FAILED') && now.status !== outcome.status)
        await this.exception(
          s,
          txn,
          'status_mismatch',
          txn.payment_id,
          txn.amount,
          `the channel reports ${outcome.status} for a refund recorded ${now.status}`,
        );
      return true;
    });
  }

  /**
   * A provider refused Paygate's own account (credentials, IP allow-list, 2FA signature): one
   * `channel_account` exception per provider and code, however many payouts wait on it.
   */
  async accountRefused(provider: string, code: string, detail: string): Promise<void> {
    await this.within((s) =>
      recordException(
        s.tx,
        { kind: 'channel_account', provider, paymentId: null, reference: code, amount: null, detail },
        this.now(),
      ),
    );
  }

  /** A transaction not final long after it was created. */
  async stuck(txn: TransactionRow, ageS: number): Promise<void> {
    await this.within((s) =>
      this.exception(
        s,
        txn,
        'stuck',
        txn.payment_id,
        txn.amount,
        `still ${txn.status} ${Math.floor(ageS / 3600)} h after it was created`,
      ),
    );
  }

  /**
   * Something a channel reported that names no transaction of this gateway: a notification for an
   * unknown reference, Cashfree's LOW_BALANCE_ALERT. A customer's payment among them (it carries an
   * amount) is money in suspense, kept with the merchant whose UPI id it was paid to, if any.
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

  private async settle(
    s: Scope,
    txn: TransactionRow,
    outcome: FinalOutcome,
    source: string,
  ): Promise<boolean> {
    const settled = await this.finality.settleIn(s.tx, txn.payment_id, outcome, source);
    if (settled) s.settled.push(settled);
    return settled !== null;
  }

  /**
   * Records an exception once; its id when this call opened it, else null. An exception that holds
   * customers' money (`holds: 'suspense'`, with an amount that could be read) journals it into suspense.
   */
  private async exception(
    s: Scope,
    txn: TransactionRow,
    kind: ExceptionKind,
    reference: string,
    amount: number | null,
    detail: string,
    opts: { amountText?: string; holds?: ExceptionHolds | null } = {},
  ): Promise<number | null> {
    // An amount the provider sent that could not be read is no amount (its text is in the detail).
    const unreadable = amount !== null && amount < 0;
    const id = await recordException(
      s.tx,
      {
        kind,
        provider: txn.channel,
        paymentId: txn.payment_id,
        merchantId: txn.merchant_id,
        currency: txn.currency,
        reference,
        amount: unreadable ? null : amount,
        amountText: unreadable ? (opts.amountText ?? 'unreadable') : null,
        detail,
        holds: opts.holds ?? null,
      },
      this.now(),
    );
    if (id !== null && opts.holds === 'suspense' && !unreadable && amount !== null)
      await this.unmatched?.suspended(s.tx, id);
    return id;
  }
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

/** Whether the payout's history holds a REVERSED the channel reported. */
async function reversalSeen(tx: Kysely<Tables>, paymentId: string): Promise<boolean> {
  const row = await tx
    .selectFrom('transaction_events')
    .select('id')
    .where('payment_id', '=', paymentId)
    .where('source', 'like', '%:reversed')
    .executeTakeFirst();
  return row !== undefined;
}

function paiseText(paise: number, providerText?: string): string {
  if (paise >= 0) return formatAmount(paise);
  return providerText === undefined ? 'an unreadable amount' : `an unreadable amount (${providerText})`;
}
