/**
 * The console's exceptions and reconciliation (CONTRACT §11, §13): an operator sees and resolves
 * them all; a merchant's user sees, read-only, those that name its merchant or its transactions, and
 * gets 404 for the others, as for another merchant's transaction.
 */
import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { countOpenExceptions, listExceptions } from '../exceptions/exceptions.repository.ts';
import type { ResolveAction } from '../exceptions/exceptions.service.ts';
import { findRun, listRuns, runMismatches } from '../reconcile/reconcile.repository.ts';
import type { Services } from '../services.ts';
import type { DashboardUser } from './accounts.service.ts';
import { differencesNaming, exceptionNames, exceptionsNaming } from './attention.repository.ts';

/** Exceptions listed at once. */
const LISTED = 200;

export class OversightService {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly services: Services,
    /** Takes a money form's one-time id: false when it was taken already. */
    private readonly takeFormOnce: (formId: string) => Promise<boolean>,
  ) {}

  /** The exceptions the user may see: every one for an operator, those naming its merchant for a merchant's user. */
  exceptions(user: DashboardUser) {
    return user.merchantId === null
      ? listExceptions(this.db, LISTED)
      : exceptionsNaming(this.db, user.merchantId, LISTED);
  }

  /** How many exceptions the user may see are open (the overview's count). */
  async openExceptions(user: DashboardUser): Promise<number> {
    if (user.merchantId === null)
      return (await countOpenExceptions(this.db)).reduce((sum, k) => sum + k.count, 0);
    return (await exceptionsNaming(this.db, user.merchantId, LISTED)).filter((e) => e.resolved_at === null)
      .length;
  }

  /**
   * One exception the user may see. A merchant's user gets 404 for one that does not name its
   * merchant, exactly as for one that does not exist; an operator 400 for an unknown id.
   */
  async exception(user: DashboardUser, id: number) {
    const e = await this.services.exceptions.get(id);
    if (user.merchantId === null) {
      if (!e) throw new AppError('BAD_REQUEST', `There is no exception ${id}.`);
      return e;
    }
    if (!e || !(await exceptionNames(this.db, id, user.merchantId)))
      throw new AppError('NOT_FOUND', `There is no exception ${id}.`);
    return e;
  }

  checkResolution(id: number, action: ResolveAction, fields: { merchant: string; note: string }) {
    return this.services.exceptions.check(id, {
      action,
      merchantId: fields.merchant || null,
      note: fields.note,
      actor: '',
    });
  }

  /**
   * Resolves an exception as the operator (journaled and audited by the exception service). A money
   * action's confirmation form is taken once (`formId`): posted again, it is 409 and moves nothing.
   */
  async resolveException(
    user: DashboardUser,
    id: number,
    action: ResolveAction,
    fields: { merchant: string; note: string },
    formId: string | null,
  ) {
    if (user.role !== 'operator') throw new AppError('NOT_FOUND', `There is no exception ${id}.`);
    if (formId !== null && !(await this.takeFormOnce(formId)))
      throw new AppError(
        'INVALID_STATE',
        'This confirmation was sent already; the exception was resolved once.',
      );
    return this.services.exceptions.resolve(id, {
      action,
      merchantId: fields.merchant || null,
      note: fields.note,
      actor: user.email,
    });
  }

  reconcileRuns(limit: number, beforeId?: number) {
    return listRuns(this.db, limit, beforeId);
  }

  /** A run and the differences it found first (at most 1,000 shown). */
  async reconcileRun(id: number) {
    const run = await findRun(this.db, id);
    return run ? { run, mismatches: await runMismatches(this.db, id, 1000) } : null;
  }

  /** The differences about a merchant's transactions, newest first; of one run when `runId` is given. */
  differences(merchantId: string, opts: { limit: number; beforeId?: number; runId?: number }) {
    return differencesNaming(this.db, merchantId, opts);
  }

  /** Each configured live channel: when it last sent a verified notification (null: never) and its silence. */
  channelSilence() {
    return this.services.silence.read();
  }
}
