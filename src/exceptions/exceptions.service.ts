/**
 * Resolving exceptions (CONTRACT §13). Each action runs in one database transaction that locks the
 * exception first, so that two submissions of the same resolution (a double click, a repeated
 * command, two operators at once) move money once: the second finds the exception resolved, or its
 * refund in flight, and changes nothing. Every action that changes something is journaled (when
 * money moves) and audited in the same transaction.
 *
 * - `refund`: customers' money in suspense goes back to the customer (`suspense-refunds.ts`); the
 *   exception closes when the refund succeeds.
 * - `credit`: money in suspense goes to a merchant's available balance.
 * - `debit`: what a merchant owes (`external:receivable`) is taken from its available balance, as
 *   far as it allows; the rest stays open.
 * - `dismiss`: with a note; no merchant's or customer's money moves. Money the exception still
 *   holds is written off (`external:written_off`), so that the ledger keeps accounting for it.
 * - `dispute-won`, `dispute-lost`: the outcome of a customer's dispute (`DisputeDecider`); a lost
 *   one's debt is then debited or dismissed as any other.
 */
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import type { Kysely } from 'kysely';
import { AppError } from '../errors.ts';
import { formatAmount } from '../money.ts';
import { findException, lockException, updateException, type ExceptionRow } from './exceptions.repository.ts';
import { lockAvailable, walletKey } from '../wallet/wallet.repository.ts';
import { receivableFromMerchant, suspenseToMerchant, writeOff } from '../wallet/suspense.ledger.ts';
import { startSuspenseRefund } from './suspense-refunds.ts';
import { insertAuditAction } from '../audit/audit.repository.ts';
import type { DisputeDecider } from './dispute-port.ts';
import { resendParked } from '../transactions/payout-transfers.repository.ts';

export const ACTIONS = ['refund', 'credit', 'debit', 'dismiss', 'dispute-won', 'dispute-lost'] as const;
export type ResolveAction = (typeof ACTIONS)[number];

export interface ResolveRequest {
  action: ResolveAction;
  /** credit: the merchant to credit (default: the exception's); refund: whose records keep a refund of money no merchant received. */
  merchantId?: string | null;
  note?: string | null;
  /** A user's email, or `cli`. */
  actor: string;
}

export interface Resolved {
  exception: ExceptionRow;
  /** False when the request found its work done already (a repeat) or nothing to take (a debit). */
  changed: boolean;
  /** What happened, in one line. */
  message: string;
}

/** The longest note kept. */
export const NOTE_MAX = 500;

function bad(message: string): AppError {
  return new AppError('BAD_REQUEST', message);
}

/** What the ledger's entries for an exception's money name: its currency and its payment. */
function moneyOf(e: ExceptionRow) {
  return { currency: e.currency, paymentId: e.payment_id };
}

/** The columns that close an exception by `r`'s action, at `at`. */
function closed(r: ResolveRequest, at: number) {
  return {
    outstanding: 0,
    resolved_at: at,
    resolved_by: r.actor,
    resolution: r.action,
    note: r.note ?? null,
  };
}

export class ExceptionService {
  /** Told after a resolution made payouts due again (the app wakes the worker). */
  onResent: () => void = () => {};

  constructor(
    private readonly database: Pick<Database, 'db' | 'lockRows'>,
    private readonly refunds: (channel: string) => boolean,
    private readonly now: () => number = Date.now,
    private readonly disputes: DisputeDecider | null = null,
  ) {}

  get(id: number): Promise<ExceptionRow | undefined> {
    return findException(this.database.db, id);
  }

  async resolve(id: number, r: ResolveRequest): Promise<Resolved> {
    const note = this.checkInput(id, r);
    let resent = 0;
    const resolved = await this.database.db.transaction().execute(async (tx) => {
      const e = await lockException(tx, id);
      if (!e) throw bad(`There is no exception ${id}.`);
      const result = await this.apply(tx, e, { ...r, note });
      if (e.resolved_at === null && result.exception.resolved_at !== null) {
        // Payouts that waited on it (Paygate's own account, CONTRACT §10) go out again.
        resent = (await resendParked(tx, e.id, result.exception.resolved_at)).length;
        if (resent > 0) result.message += `; ${resent} payout(s) sent again under new transfer ids`;
      }
      if (result.changed) {
        await insertAuditAction(tx, {
          at: this.now(),
          actor: r.actor,
          action: `exception_${r.action}`,
          merchant_id: result.exception.merchant_id,
          detail: `exception ${e.id} (${e.kind}): ${result.message}${note ? `; note: ${note}` : ''}`.slice(
            0,
            1000,
          ),
        });
      }
      return result;
    });
    if (resent > 0) this.onResent();
    return resolved;
  }

  /**
   * Whether `resolve` would take this request, without doing it (the console asks before its
   * confirmation step): throws what `resolve` would throw; a repeat passes.
   */
  async check(id: number, r: ResolveRequest): Promise<void> {
    const note = this.checkInput(id, r);
    const e = await findException(this.database.db, id);
    if (!e) throw bad(`There is no exception ${id}.`);
    if (this.refusal(e, r) !== null) return;
    if (r.action === 'credit') await this.merchant(this.database.db, r.merchantId || e.merchant_id, 'credit');
    if (r.action === 'refund') {
      this.refundsAvailable(e);
      if (e.merchant_id === null) await this.merchant(this.database.db, r.merchantId, 'refund');
    }
    void note;
  }

  /** The request's own values: the id, the action, the note. Answers the note, trimmed, or null. */
  private checkInput(id: number, r: ResolveRequest): string | null {
    if (!Number.isSafeInteger(id) || id <= 0) throw bad(`There is no exception ${String(id)}.`);
    if (!ACTIONS.includes(r.action)) throw bad(`The action must be one of ${ACTIONS.join(', ')}.`);
    const note = r.note?.trim() || null;
    if (note !== null && (note.length > NOTE_MAX || note.includes('\u0000')))
      throw bad(`The note must be at most ${NOTE_MAX} characters.`);
    if (r.action === 'dismiss' && note === null) throw bad('A note is required to dismiss an exception.');
    return note;
  }

  /**
   * Why the action does not fit the exception (thrown), or the answer to a repeat of what was done
   * already (a resolution by the same action, a refund in flight), or null when it may go ahead.
   */
  private refusal(e: ExceptionRow, r: ResolveRequest): Resolved | null {
    this.disputeRefusal(e, r);
    if ((r.action === 'refund' || r.action === 'credit') && e.holds !== 'suspense')
      throw bad(
        `Exception ${e.id} (${e.kind}) holds no customer's money in suspense: it can be ${e.holds === 'receivable' ? 'debited or dismissed' : 'dismissed only'}.`,
      );
    if (r.action === 'debit' && e.holds !== 'receivable')
      throw bad(
        `Exception ${e.id} (${e.kind}) holds no merchant's debt: it can be ${e.holds === 'suspense' ? 'refunded, credited or dismissed' : 'dismissed only'}.`,
      );
    const unchanged = (message: string): Resolved => ({ exception: e, changed: false, message });
    if (e.resolved_at !== null) {
      if (e.resolution === r.action)
        return unchanged(`exception ${e.id} was resolved by ${r.action} already`);
      throw new AppError('INVALID_STATE', `Exception ${e.id} is resolved already (${e.resolution}).`);
    }
    if (e.refund_id !== null) {
      if (r.action === 'refund')
        return unchanged(`the refund ${e.refund_id} of exception ${e.id} is in flight already`);
      throw new AppError(
        'INVALID_STATE',
        `The refund ${e.refund_id} of exception ${e.id} is in flight: nothing else is done with its money until it is final.`,
      );
    }
    return null;
  }

  private async apply(tx: Kysely<Tables>, e: ExceptionRow, r: ResolveRequest): Promise<Resolved> {
    const at = this.now();
    const repeat = this.refusal(e, r);
    if (repeat) return repeat;
    switch (r.action) {
      case 'refund':
        return this.refund(tx, e, r, at);
      case 'credit':
        return this.credit(tx, e, r, at);
      case 'debit':
        return this.debit(tx, e, r, at);
      case 'dismiss':
        return this.dismiss(tx, e, r, at);
      case 'dispute-won':
      case 'dispute-lost': {
        const done = await this.disputes!.decide(
          tx,
          e,
          r.action === 'dispute-won' ? 'won' : 'lost',
          r.actor,
          at,
        );
        return this.after(tx, e.id, done.changed, done.message);
      }
    }
  }

  /**
   * Throws when the action does not fit a dispute: its outcomes only on a dispute whose outcome is
   * not recorded yet (a repeat passes, to be answered as one), and no dismissal of an open dispute of
   * a pay-in here (that would leave the pay-in unrefundable): its outcome is recorded instead.
   */
  private disputeRefusal(e: ExceptionRow, r: ResolveRequest): void {
    const outcome = r.action === 'dispute-won' || r.action === 'dispute-lost';
    if (outcome && (e.kind !== 'dispute' || this.disputes === null))
      throw bad(`Exception ${e.id} (${e.kind}) is no dispute: it has no dispute outcome.`);
    const undecided = e.kind === 'dispute' && e.resolved_at === null && e.holds === null;
    if (r.action === 'dismiss' && undecided && e.payment_id !== null)
      throw bad(
        `Exception ${e.id} is an open dispute of pay-in ${e.payment_id}: record its outcome (dispute-won or dispute-lost).`,
      );
    if (
      outcome &&
      e.kind === 'dispute' &&
      e.resolved_at === null &&
      e.holds !== null &&
      r.action !== 'dispute-lost'
    )
      throw new AppError('INVALID_STATE', `The dispute of exception ${e.id} was recorded lost already.`);
  }

  /** Starts the refund of the money in suspense to the customer; the exception closes when it succeeds. */
  private async refund(
    tx: Kysely<Tables>,
    e: ExceptionRow,
    r: ResolveRequest,
    at: number,
  ): Promise<Resolved> {
    this.refundsAvailable(e);
    const merchantId = e.merchant_id ?? (await this.merchant(tx, r.merchantId, 'refund'));
    const refundId = await startSuspenseRefund(tx, e, merchantId, r.actor, at);
    return this.after(
      tx,
      e.id,
      true,
      `refund ${refundId} of ${formatAmount(e.outstanding)} to the customer started`,
    );
  }

  /** Moves the money in suspense to a merchant's available balance, and closes the exception. */
  private async credit(
    tx: Kysely<Tables>,
    e: ExceptionRow,
    r: ResolveRequest,
    at: number,
  ): Promise<Resolved> {
    const merchantId = await this.merchant(tx, r.merchantId ?? e.merchant_id, 'credit');
    await suspenseToMerchant(tx, { ...moneyOf(e), merchantId, amount: e.outstanding }, at);
    await updateException(tx, e.id, { ...closed(r, at), merchant_id: merchantId });
    return this.after(tx, e.id, true, `credited ${formatAmount(e.outstanding)} to merchant ${merchantId}`);
  }

  /**
   * Takes what the merchant owes from its available balance, as far as it goes: closes the exception
   * when all of it is taken, leaves the rest outstanding otherwise.
   */
  private async debit(tx: Kysely<Tables>, e: ExceptionRow, r: ResolveRequest, at: number): Promise<Resolved> {
    const merchantId = e.merchant_id!;
    if (r.merchantId && r.merchantId !== merchantId)
      throw bad(`Exception ${e.id} is a debt of merchant ${merchantId}, not of ${r.merchantId}.`);
    const balances = await lockAvailable(tx, this.database, [{ merchantId, currency: e.currency }]);
    const available = balances.get(walletKey({ merchantId, currency: e.currency })) ?? 0;
    const taken = Math.min(available, e.outstanding);
    if (taken <= 0)
      return {
        exception: e,
        changed: false,
        message: `merchant ${merchantId} has nothing available; ${formatAmount(e.outstanding)} is still owed`,
      };
    await receivableFromMerchant(tx, { ...moneyOf(e), merchantId, amount: taken }, at);
    const rest = e.outstanding - taken;
    await updateException(
      tx,
      e.id,
      rest === 0 ? closed(r, at) : { outstanding: rest, note: r.note ?? e.note },
    );
    return this.after(
      tx,
      e.id,
      true,
      `debited ${formatAmount(taken)} from merchant ${merchantId}${rest > 0 ? `; ${formatAmount(rest)} is still owed` : ''}`,
    );
  }

  /** Closes the exception with its note; money it still holds is written off. */
  private async dismiss(
    tx: Kysely<Tables>,
    e: ExceptionRow,
    r: ResolveRequest,
    at: number,
  ): Promise<Resolved> {
    const holds = e.outstanding > 0 ? e.holds : null;
    if (holds !== null)
      await writeOff(tx, holds, { ...moneyOf(e), merchantId: e.merchant_id, amount: e.outstanding }, at);
    await updateException(tx, e.id, closed(r, at));
    return this.after(
      tx,
      e.id,
      true,
      holds !== null ? `dismissed; ${formatAmount(e.outstanding)} written off` : 'dismissed',
    );
  }

  /** Throws unless refunds through the exception's channel are available here. */
  private refundsAvailable(e: ExceptionRow): void {
    if (!this.refunds(e.provider))
      throw bad(`Refunds through the ${e.provider} channel are not available on this gateway.`);
  }

  private async after(tx: Kysely<Tables>, id: number, changed: boolean, message: string): Promise<Resolved> {
    const exception = await lockException(tx, id);
    return { exception: exception!, changed, message };
  }

  /** The merchant an action names, which must exist. */
  private async merchant(
    tx: Kysely<Tables>,
    merchantId: string | null | undefined,
    action: string,
  ): Promise<string> {
    if (!merchantId)
      throw bad(
        `This exception's money was paid to no merchant here: name the merchant to ${action} (--merchant).`,
      );
    const m = await tx.selectFrom('merchants').select('id').where('id', '=', merchantId).executeTakeFirst();
    if (!m) throw bad(`There is no merchant ${merchantId}.`);
    return m.id;
  }
}
