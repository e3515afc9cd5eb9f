/**
 * What a live channel reports, applied the one way whatever brought it (a notification, a poll, a
 * look at expiry): a final outcome goes through the one final-status transition; a payment of
 * the wrong amount, a payment for a pay-in already final, and a reversal are kept as exceptions
 * for the operator. Everything here may run twice for the same report and changes nothing the
 * second time. Each report is applied inside a `Scope` (one database transaction, which may carry
 * several reports); the final statuses it committed are announced after the commit.
 */
import type { Kysely } from 'kysely';
import type { FinalOutcome, PayoutState } from '../channels/channel.ts';
import type { Tables } from '../db/schema.ts';
import { formatAmount } from '../money.ts';
import type { SettlementService, Settled } from '../transactions/settlement.service.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { recordException } from './exceptions.repository.ts';

/** The transaction reports are applied in, and the final statuses to announce after its commit. */
export interface Scope {
  tx: Kysely<Tables>;
  settled: Settled[];
}

/** What a channel reported about one transaction. */
export type Report =
  | { kind: 'payin'; txn: TransactionRow; outcome: FinalOutcome; source: string }
  | { kind: 'payout'; txn: TransactionRow; state: PayoutState; source: string };

type Kind = 'amount_mismatch' | 'payment_after_final' | 'reversal' | 'stuck';

export class ChannelOutcomes {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly settlement: SettlementService,
    private readonly now: () => number,
  ) {}

  /** Runs `apply` in a transaction of its own, then announces what it settled. */
  async within<T>(apply: (scope: Scope) => Promise<T>): Promise<T> {
    const settled: Settled[] = [];
    const result = await this.db.transaction().execute((tx) => apply({ tx, settled }));
    this.settlement.announce(settled);
    return result;
  }

  payin(txn: TransactionRow, outcome: FinalOutcome, source: string): Promise<void> {
    return this.within((s) => this.payinIn(s, txn, outcome, source));
  }

  payout(txn: TransactionRow, state: PayoutState, source: string): Promise<void> {
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
        outcome.amountText,
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
    const settled = await this.settlement.settleManyIn(
      s.tx,
      plain.map(({ report, outcome }) => ({
        paymentId: report.txn.payment_id,
        outcome,
        source: report.source,
      })),
    );
    for (const [i, done] of settled.entries()) {
      if (done) s.settled.push(done);
      else if (plain[i]!.report.kind === 'payin')
        await this.afterFinal(s, plain[i]!.report.txn, plain[i]!.outcome);
    }
    for (const r of rest) {
      if (r.kind === 'payin') await this.payinIn(s, r.txn, r.outcome, r.source);
      else await this.payoutIn(s, r.txn, r.state, r.source);
    }
  }

  /** A payout's state: its outcome when final, then its reversal when the money came back. */
  async payoutIn(s: Scope, txn: TransactionRow, state: PayoutState, source: string): Promise<void> {
    const outcome = state.outcome;
    if (!outcome) return;
    if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
      await this.exception(
        s,
        txn,
        'amount_mismatch',
        outcome.reference || txn.payment_id,
        outcome.amount,
        `the channel reports ${paiseText(outcome.amount)} ${outcome.status} for a payout of ${formatAmount(txn.amount)}`,
      );
      return;
    }
    await this.settle(s, txn, outcome, source);
    if (!state.reversed) return;
    const reversed = await this.settlement.reverseIn(s.tx, txn.payment_id, source);
    if (reversed)
      await this.exception(
        s,
        reversed,
        'reversal',
        txn.payment_id,
        txn.amount,
        `the payout's ${formatAmount(txn.amount)} came back after SUCCESS (utr ${reversed.utr || 'none'}) and is available again`,
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

  /** A notification naming no transaction of this gateway. */
  async unknown(
    s: Scope,
    provider: string,
    reference: string,
    amount: number | null,
    detail: string,
  ): Promise<void> {
    await recordException(
      s.tx,
      { kind: 'unknown_reference', provider, paymentId: null, reference, amount, detail },
      this.now(),
    );
  }

  private async settle(
    s: Scope,
    txn: TransactionRow,
    outcome: FinalOutcome,
    source: string,
  ): Promise<boolean> {
    const settled = await this.settlement.settleIn(s.tx, txn.payment_id, outcome, source);
    if (settled) s.settled.push(settled);
    return settled !== null;
  }

  private async exception(
    s: Scope,
    txn: TransactionRow,
    kind: Kind,
    reference: string,
    amount: number | null,
    detail: string,
    amountText?: string,
  ): Promise<void> {
    await recordException(
      s.tx,
      // An amount the provider sent that could not be read is no amount (its text is in the detail).
      {
        kind,
        provider: txn.channel,
        paymentId: txn.payment_id,
        reference,
        amount: amount !== null && amount < 0 ? null : amount,
        amountText: amount !== null && amount < 0 ? (amountText ?? 'unreadable') : null,
        detail,
      },
      this.now(),
    );
  }
}

function paiseText(paise: number, providerText?: string): string {
  if (paise >= 0) return formatAmount(paise);
  return providerText === undefined ? 'an unreadable amount' : `an unreadable amount (${providerText})`;
}
