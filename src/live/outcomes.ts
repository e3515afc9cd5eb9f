/**
 * What a live channel reports, applied the one way whatever brought it (a notification, a poll, a
 * look at expiry): a final outcome goes through the one final-status transition; a payment of
 * the wrong amount, a payment for a pay-in already final, and a reversal are kept as exceptions
 * for the operator. Everything here may run twice for the same report and changes nothing the
 * second time. Each report is applied inside a `Scope` (one database transaction, which may carry
 * several reports); the final statuses it committed are announced after the commit.
 */
import type { Kysely } from 'kysely';
import { transferIdOf, type FinalOutcome, type PayoutState, type RefundState } from '../channels/channel.ts';
import type { Tables } from '../db/schema.ts';
import { formatAmount } from '../money.ts';
import type { FinalityService, Settled } from '../finality/finality.service.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { openException, recordException } from '../exceptions/exceptions.repository.ts';
import { parkPayout } from '../transactions/payout-transfers.repository.ts';
import type { UnmatchedMoney } from '../exceptions/unmatched.ts';
import { AfterFinal } from './after-final.ts';
import { OutcomeExceptions, type Scope, type Untied } from './outcome-exceptions.ts';

/** What a channel reported about one transaction. */
export type Report =
  | { kind: 'payin'; txn: TransactionRow; outcome: FinalOutcome; source: string }
  | { kind: 'payout'; txn: TransactionRow; state: PayoutState; source: string };

export class ChannelOutcomes {
  private readonly exceptions: OutcomeExceptions;
  private readonly afterFinal: AfterFinal;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly finality: FinalityService,
    private readonly now: () => number,
    unmatched: UnmatchedMoney | null = null,
  ) {
    this.exceptions = new OutcomeExceptions(now, unmatched);
    this.afterFinal = new AfterFinal(finality, this.exceptions, now);
  }

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
    if (outcome.status === 'SUCCESS' && outcome.amount !== undefined && outcome.amount !== txn.amount) {
      await this.exceptions.of(s, txn, {
        kind: 'amount_mismatch',
        reference: outcome.reference || outcome.utr || txn.payment_id,
        amount: outcome.amount,
        detail: `paid ${paiseText(outcome.amount, outcome.amountText)} for a pay-in of ${formatAmount(txn.amount)} (utr ${outcome.utr || 'none'})`,
        amountText: outcome.amountText,
        holds: 'suspense',
      });
      return;
    }
    if (await this.settle(s, txn, outcome, source)) return;
    await this.afterFinal.payin(s, txn, outcome);
  }

  /**
   * Reports on several transactions, applied together. Plain final outcomes (the amount fits, no
   * reversal, each transaction named once) settle in one batch of statements; the rest go one at a
   * time as above, and a plain one the batch found final already goes to the after-final rules.
   * Each transaction is in one of the two parts, so the order between them does not matter.
   */
  async applyAll(s: Scope, reports: Report[]): Promise<void> {
    const { plain, rest } = partition(reports);
    const settled = await this.finality.settleManyIn(
      s.tx,
      plain.map(({ report, outcome }) => ({
        paymentId: report.txn.payment_id,
        outcome,
        source: report.source,
      })),
    );
    for (const [i, done] of settled.entries()) {
      const { report: r, outcome } = plain[i]!;
      if (done) s.settled.push(done);
      else if (r.kind === 'payin') await this.afterFinal.payin(s, r.txn, outcome);
      else await this.afterFinal.payout(s, r.txn, r.state, r.source);
    }
    for (const r of rest) {
      if (r.kind === 'payin') await this.payinIn(s, r.txn, r.outcome, r.source);
      else await this.payoutIn(s, r.txn, r.state, r.source);
    }
  }

  /**
   * A payout's state: its outcome settles it when it is not final yet; one that finds it final is
   * weighed against what was recorded (`AfterFinal.payout`). An amount that differs or cannot be
   * read changes nothing and is kept as an exception: false then (the caller polls it with backoff).
   */
  async payoutIn(s: Scope, txn: TransactionRow, state: PayoutState, source: string): Promise<boolean> {
    if (!ofCurrentTransfer(txn, state)) return this.earlierTransfer(s, txn, state);
    if (state.accountCode) return this.parkForAccount(s, txn, state);
    const outcome = state.outcome;
    if (!outcome) return true;
    if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
      await this.exceptions.of(s, txn, {
        kind: 'amount_mismatch',
        reference: outcome.reference || txn.payment_id,
        amount: outcome.amount,
        detail: `the channel reports ${paiseText(outcome.amount)} ${state.reversed ? 'REVERSED' : outcome.status} for a payout of ${formatAmount(txn.amount)}`,
      });
      return false;
    }
    // A REVERSED with no SUCCESS recorded fails the payout: the money never reached the beneficiary.
    if (await this.settle(s, txn, outcome, state.reversed ? `${source}:reversed` : source)) return true;
    await this.afterFinal.payout(s, txn, state, source);
    return true;
  }

  /**
   * A refund's state: its outcome settles it when it is not final yet; one that finds it final is
   * weighed against what was recorded (`AfterFinal.refund`). An amount that differs or cannot be
   * read changes nothing and is an exception (false: the caller polls it with backoff).
   */
  refund(txn: TransactionRow, state: RefundState, source: string): Promise<boolean> {
    return this.within(async (s) => {
      const outcome = state.outcome;
      if (!outcome) return true;
      if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
        await this.exceptions.of(s, txn, {
          kind: 'amount_mismatch',
          reference: outcome.reference || txn.payment_id,
          amount: outcome.amount,
          detail: `the channel reports ${paiseText(outcome.amount, outcome.amountText)} ${outcome.status} for a refund of ${formatAmount(txn.amount)}`,
          amountText: outcome.amountText,
        });
        return false;
      }
      if (!(await this.settle(s, txn, outcome, source))) await this.afterFinal.refund(s, txn, outcome);
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

  /**
   * A transfer the provider failed for Paygate's own account (CONTRACT §10): no merchant's payout
   * fails for it. The payout waits PENDING with its hold, parked on the one open `channel_account`
   * exception of the provider and code, and the failed transfer is kept beside it; resolving the
   * exception sends the payout again under its next transfer id (`resendParked`).
   */
  private async parkForAccount(s: Scope, txn: TransactionRow, state: PayoutState): Promise<boolean> {
    if (txn.status !== 'PENDING' && txn.status !== 'PROCESSING') return true;
    const code = state.accountCode!;
    const at = this.now();
    const exceptionId = await openException(
      s.tx,
      {
        kind: 'channel_account',
        provider: txn.channel,
        paymentId: null,
        reference: code,
        amount: null,
        detail: `${txn.channel} failed transfers for Paygate's own account (${code}): their payouts wait PENDING with their holds; once the account is fixed, resolving this sends each again under a new transfer id`,
      },
      at,
    );
    await parkPayout(
      s.tx,
      {
        paymentId: txn.payment_id,
        attempt: txn.transfer_attempt,
        transferId: transferIdOf(txn.payment_id, txn.transfer_attempt),
        channelTxnId: state.channelTxnId,
        status: 'FAILED',
        statusCode: code,
        exceptionId,
      },
      at,
    );
    return true;
  }

  /**
   * A report on a transfer of the payout other than its current one: an earlier transfer, which
   * failed for the account. Its failure again changes nothing; money it says it moved (a SUCCESS, a
   * reversal) changes no status and is kept for the operator.
   */
  private async earlierTransfer(s: Scope, txn: TransactionRow, state: PayoutState): Promise<boolean> {
    const outcome = state.outcome;
    if (!outcome || (outcome.status === 'FAILED' && !state.reversed)) return true;
    await this.exceptions.of(s, txn, {
      kind: 'status_mismatch',
      reference: outcome.reference || transferIdOf(txn.payment_id, state.attempt),
      amount: outcome.amount ?? null,
      detail: `the channel reports ${state.reversed ? 'REVERSED' : outcome.status} for transfer ${transferIdOf(txn.payment_id, state.attempt)}, which it had failed for Paygate's own account (the payout's current transfer is ${transferIdOf(txn.payment_id, txn.transfer_attempt)})`,
    });
    return true;
  }

  /** A transaction not final long after it was created. */
  async stuck(txn: TransactionRow, ageS: number): Promise<void> {
    await this.within((s) =>
      this.exceptions.of(s, txn, {
        kind: 'stuck',
        reference: txn.payment_id,
        amount: txn.amount,
        detail: `still ${txn.status} ${Math.floor(ageS / 3600)} h after it was created`,
      }),
    );
  }

  /** Something a channel reported that names no transaction of this gateway (`OutcomeExceptions.untied`). */
  untied(s: Scope, e: Untied): Promise<void> {
    return this.exceptions.untied(s, e);
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
}

/**
 * Splits reports into plain final outcomes, which settle in one batch, and the rest. A pay-in's
 * failure carries no payment to compare; a payout's outcome must be of its amount.
 */
function partition(reports: Report[]): {
  plain: { report: Report; outcome: FinalOutcome }[];
  rest: Report[];
} {
  const named = new Map<string, number>();
  for (const r of reports) named.set(r.txn.payment_id, (named.get(r.txn.payment_id) ?? 0) + 1);
  const plain: { report: Report; outcome: FinalOutcome }[] = [];
  const rest: Report[] = [];
  for (const r of reports) {
    const outcome = r.kind === 'payin' ? r.outcome : r.state.outcome;
    const fits =
      outcome?.amount === undefined ||
      outcome.amount === r.txn.amount ||
      (r.kind === 'payin' && outcome.status === 'FAILED');
    // A reversal, or a report on a payout's earlier transfer, is weighed one at a time.
    const apart = r.kind === 'payout' && (r.state.reversed || !ofCurrentTransfer(r.txn, r.state));
    if (outcome && fits && !apart && named.get(r.txn.payment_id) === 1) plain.push({ report: r, outcome });
    else rest.push(r);
  }
  return { plain, rest };
}

/** Whether a payout's state is of its current transfer (a state that names none is). */
function ofCurrentTransfer(txn: TransactionRow, state: PayoutState): boolean {
  return state.attempt === undefined || state.attempt === Number(txn.transfer_attempt);
}

function paiseText(paise: number, providerText?: string): string {
  if (paise >= 0) return formatAmount(paise);
  return providerText === undefined ? 'an unreadable amount' : `an unreadable amount (${providerText})`;
}
