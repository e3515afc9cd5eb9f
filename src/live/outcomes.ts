/**
 * What a live channel reports, applied the one way whatever brought it (a notification, a poll, a
 * look at expiry): a final outcome goes through the one final-status transition; a payment of
 * the wrong amount, a payment for a pay-in already final, and a reversal are kept as exceptions
 * for the operator. Everything here may run twice for the same report and changes nothing the
 * second time.
 */
import type { Kysely } from 'kysely';
import type { FinalOutcome, PayoutState } from '../channels/channel.ts';
import type { Tables } from '../db/schema.ts';
import { formatAmount } from '../money.ts';
import type { SettlementService } from '../transactions/settlement.service.ts';
import type { TransactionRow } from '../transactions/transactions.repository.ts';
import { recordException } from './exceptions.repository.ts';

export class ChannelOutcomes {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly settlement: SettlementService,
    private readonly now: () => number,
  ) {}

  /** A pay-in's outcome. A payment that does not fit the pay-in changes nothing and is an exception. */
  async payin(txn: TransactionRow, outcome: FinalOutcome, source: string): Promise<void> {
    const reference = outcome.reference || outcome.utr || txn.payment_id;
    if (outcome.status === 'SUCCESS') {
      if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
        await this.exception(
          txn,
          'amount_mismatch',
          reference,
          outcome.amount,
          `paid ${paiseText(outcome.amount)} for a pay-in of ${formatAmount(txn.amount)} (utr ${outcome.utr || 'none'})`,
        );
        return;
      }
      const { changed } = await this.settlement.settle(txn.payment_id, outcome, source);
      if (changed) return;
      const now = await this.current(txn.payment_id);
      // The same payment reported again changes nothing; another one for a final pay-in is kept.
      if (now && !(now.status === 'SUCCESS' && now.utr === outcome.utr))
        await this.exception(
          now,
          'payment_after_final',
          reference,
          outcome.amount ?? null,
          `a payment (utr ${outcome.utr || 'none'}) came for a pay-in already ${now.status}`,
        );
      return;
    }
    await this.settlement.settle(txn.payment_id, outcome, source);
  }

  /** A payout's state: its outcome when final, then its reversal when the money came back. */
  async payout(txn: TransactionRow, state: PayoutState, source: string): Promise<void> {
    const outcome = state.outcome;
    if (!outcome) return;
    if (outcome.amount !== undefined && outcome.amount !== txn.amount) {
      await this.exception(
        txn,
        'amount_mismatch',
        outcome.reference || txn.payment_id,
        outcome.amount,
        `the channel reports ${paiseText(outcome.amount)} ${outcome.status} for a payout of ${formatAmount(txn.amount)}`,
      );
      return;
    }
    await this.settlement.settle(txn.payment_id, outcome, source);
    if (!state.reversed) return;
    const reversed = await this.settlement.reverse(txn.payment_id, source);
    if (reversed)
      await this.exception(
        reversed,
        'reversal',
        txn.payment_id,
        txn.amount,
        `the payout's ${formatAmount(txn.amount)} came back after SUCCESS (utr ${reversed.utr || 'none'}) and is available again`,
      );
  }

  /** A transaction not final long after it was created. */
  async stuck(txn: TransactionRow, ageS: number): Promise<void> {
    await this.exception(
      txn,
      'stuck',
      txn.payment_id,
      txn.amount,
      `still ${txn.status} ${Math.floor(ageS / 3600)} h after it was created`,
    );
  }

  /** A notification naming no transaction of this gateway. */
  async unknown(provider: string, reference: string, amount: number | null, detail: string): Promise<void> {
    await recordException(
      this.db,
      { kind: 'unknown_reference', provider, paymentId: null, reference, amount, detail },
      this.now(),
    );
  }

  private async exception(
    txn: TransactionRow,
    kind: 'amount_mismatch' | 'payment_after_final' | 'reversal' | 'stuck',
    reference: string,
    amount: number | null,
    detail: string,
  ): Promise<void> {
    await recordException(
      this.db,
      { kind, provider: txn.channel, paymentId: txn.payment_id, reference, amount, detail },
      this.now(),
    );
  }

  private current(paymentId: string) {
    return this.db
      .selectFrom('transactions')
      .selectAll()
      .where('payment_id', '=', paymentId)
      .executeTakeFirst();
  }
}

function paiseText(paise: number): string {
  return paise >= 0 ? formatAmount(paise) : 'an unreadable amount';
}
