/**
 * What the dashboard's pages show and the actions they offer. Every action goes through the
 * service the API and CLI use (the resend limit, the ledger, key rotation), and every one that
 * changes money, access or callbacks is written to the audit log with who did it.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { MerchantStatus, MerchantTable, Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { formatAmount } from '../money.ts';
import {
  callbackUrlProblem,
  vpaProblem,
  type CreatedMerchant,
  type MerchantView,
} from '../merchants/merchants.service.ts';
import type { Services } from '../services.ts';
import { findTransaction } from '../transactions/transactions.repository.ts';
import { refundsOf } from '../refunds/refunds.repository.ts';
import { disputesOfPayin } from '../disputes/disputes.repository.ts';
import type { DashboardUser } from './accounts.service.ts';
import {
  dailyStats,
  eventsOf,
  takeForm,
  journalOf,
  ledgerPage,
  listTransactions,
  walletsOf,
  type ListCursor,
  type ListRow,
  type TransactionFilter,
} from './dashboard.repository.ts';
import { insertAuditAction, listAuditActions } from '../audit/audit.repository.ts';
import { DAY_MS, istDate, istDayStart } from '../ist.ts';
import { dayPoints } from './day-points.ts';
import { countFailedDeliveries } from './attention.repository.ts';
import { OversightService } from './oversight.service.ts';

/** Rows per page of the transactions list and the ledger. */
export const PAGE_SIZE = 50;
/** Rows read at a time while a CSV export streams. */
const EXPORT_BATCH = 1000;
/** Days on the overview's chart. */
export const OVERVIEW_DAYS = 30;
/** How long a money form's one-time id is remembered: longer than anyone keeps a page open to post it again. */
const FORM_MEMORY_MS = 7 * 86_400_000;

export class DashboardService {
  /** Exceptions and reconciliation, for operators and (read-only) merchants' users. */
  readonly oversight: OversightService;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly services: Services,
    private readonly config: Config,
    private readonly now: () => number = Date.now,
  ) {
    this.oversight = new OversightService(db, services, (formId) => this.takeFormOnce(formId));
  }

  /**
   * The merchant a page is about: a merchant's user always its own; an operator the one asked
   * for (which must exist), or null for all of them.
   */
  async scope(user: DashboardUser, asked: string | undefined): Promise<string | null> {
    if (user.merchantId !== null) return user.merchantId;
    if (!asked) return null;
    await this.services.merchants.get(asked);
    return asked;
  }

  merchants(): Promise<MerchantView[]> {
    return this.services.merchants.list();
  }

  merchant(id: string) {
    return this.services.merchants.get(id);
  }

  /** When the merchant's previous webhook secret stops signing, or null when it no longer does. */
  secretOverlapUntil(m: Pick<MerchantTable, 'previous_secret_until'>): number | null {
    const until = m.previous_secret_until === null ? null : Number(m.previous_secret_until);
    return until !== null && until > this.now() ? until : null;
  }

  /** Balances in every currency; volume and success rate by day in one (amounts of two currencies do not add up). */
  async overview(merchantId: string | null, currency = 'INR') {
    const at = this.now();
    const today = istDayStart(istDate(at))!;
    const first = today - (OVERVIEW_DAYS - 1) * DAY_MS;
    const [wallets, stats, failedDeliveries] = await Promise.all([
      walletsOf(this.db, merchantId),
      dailyStats(this.db, merchantId, currency, first),
      countFailedDeliveries(this.db, merchantId),
    ]);
    return { wallets, days: dayPoints(stats, first, OVERVIEW_DAYS), failedDeliveries };
  }

  transactions(filter: TransactionFilter, cursor: ListCursor | null): Promise<ListRow[]> {
    return listTransactions(this.db, filter, cursor, PAGE_SIZE);
  }

  /** Every transaction matching `filter`, read a batch at a time (the export never holds them all). */
  async *exportRows(filter: TransactionFilter): AsyncGenerator<ListRow[]> {
    let cursor: ListCursor | null = null;
    for (;;) {
      const rows = await listTransactions(this.db, filter, cursor, EXPORT_BATCH);
      if (rows.length === 0) return;
      yield rows;
      if (rows.length < EXPORT_BATCH) return;
      const last = rows[rows.length - 1]!;
      cursor = { createdAt: last.created_at, paymentId: last.payment_id };
    }
  }

  /** A transaction with everything that happened to it; 404 when the user may not see it. */
  async transaction(user: DashboardUser, paymentId: string) {
    const txn = await findTransaction(this.db, paymentId);
    if (!txn || (user.merchantId !== null && txn.merchant_id !== user.merchantId))
      throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in or payout with this payment_id');
    const [merchant, events, journal, deliveries, refunds, disputes] = await Promise.all([
      this.services.merchants.get(txn.merchant_id),
      eventsOf(this.db, paymentId),
      journalOf(this.db, paymentId),
      this.services.callbacks.list({ paymentId, merchantId: txn.merchant_id, limit: 100 }),
      txn.kind === 'payin' ? refundsOf(this.db, paymentId) : Promise.resolve([]),
      txn.kind === 'payin' ? disputesOfPayin(this.db, paymentId) : Promise.resolve([]),
    ]);
    const attempts = await Promise.all(
      deliveries.map((d) => this.services.callbacks.attempts(d.delivery_id)),
    );
    // What is left to refund: the amount less the refunds that are not FAILED.
    const refunded = refunds.filter((r) => r.status !== 'FAILED').reduce((sum, r) => sum + r.amount, 0);
    return {
      txn,
      merchantName: merchant.name,
      events,
      journal,
      deliveries: deliveries.map((d, i) => ({ ...d, log: attempts[i]! })),
      refunds,
      disputes,
      refundable: txn.kind === 'payin' && txn.status === 'SUCCESS' ? txn.amount - refunded : 0,
    };
  }

  /**
   * The pay-in a console refund of `amount` is for, checked as the API checks it (status, an open
   * dispute, what is left to refund, the available balance), so that its confirmation never offers
   * what would be refused. Nothing is held until the confirmed form is posted.
   */
  async refundPreview(user: DashboardUser, paymentId: string, amount: number) {
    const detail = await this.transaction(user, paymentId);
    const t = detail.txn;
    if (t.kind !== 'payin') throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in with this payment_id');
    if (t.status !== 'SUCCESS')
      throw new AppError(
        'PAYMENT_NOT_REFUNDABLE',
        `Only a SUCCESS pay-in can be refunded; this one is ${t.status}`,
      );
    if (detail.disputes.some((d) => d.status === 'open'))
      throw new AppError(
        'PAYMENT_DISPUTED',
        'A dispute of this pay-in is open: it cannot be refunded until the dispute is decided',
      );
    if (amount > detail.refundable)
      throw new AppError(
        'REFUND_EXCEEDS_PAYMENT',
        `The refunds of this pay-in would exceed its amount: at most ${formatAmount(detail.refundable)} ${t.currency} is left to refund.`,
      );
    const wallet = (await walletsOf(this.db, t.merchant_id)).find((w) => w.currency === t.currency);
    if ((wallet?.available ?? 0) < amount)
      throw new AppError(
        'INSUFFICIENT_BALANCE',
        `The available balance (${formatAmount(wallet?.available ?? 0)} ${t.currency}) does not cover this refund.`,
      );
    return detail;
  }

  /**
   * Refunds a SUCCESS pay-in the user may see, through the API's path (its rules, its hold), once per
   * refund form (`formId`); audited.
   */
  async refund(
    user: DashboardUser,
    paymentId: string,
    amount: number,
    reason: string | null,
    formId: string,
  ) {
    const txn = await findTransaction(this.db, paymentId);
    if (!txn || txn.kind !== 'payin' || (user.merchantId !== null && txn.merchant_id !== user.merchantId))
      throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in with this payment_id');
    if (!(await this.takeFormOnce(formId)))
      throw new AppError('INVALID_STATE', 'This refund form was sent already; the refund was made once.');
    const created = await this.services.refunds.createOnBehalf(txn.merchant_id, {
      paymentId,
      amount,
      reason,
      refundNo: `dash-${formId}`,
    });
    const body =
      typeof created.body === 'string' ? (JSON.parse(created.body) as { refund_id: string }) : created.body;
    await this.record(
      user,
      'refund',
      txn.merchant_id,
      `refund ${body.refund_id} of ${formatAmount(amount)} ${txn.currency} for ${paymentId}`,
    );
    return body;
  }

  /** Sends a final transaction's callback again, within the resend limit whoever asks. */
  async resend(user: DashboardUser, paymentId: string) {
    const txn = await findTransaction(this.db, paymentId);
    if (!txn || (user.merchantId !== null && txn.merchant_id !== user.merchantId))
      throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in or payout with this payment_id');
    const result = await this.services.callbacks.resend(paymentId, txn.merchant_id);
    await this.record(user, 'resend', txn.merchant_id, `resent the callback of ${paymentId}`);
    return result;
  }

  ledger(merchantId: string, currency: string, account: 'available' | 'held', beforeId: number | null) {
    return ledgerPage(this.db, { merchantId, currency, account }, beforeId, PAGE_SIZE);
  }

  async rotateKey(user: DashboardUser, merchantId: string) {
    const r = await this.services.merchants.rotateKey(merchantId);
    await this.record(user, 'rotate_key', merchantId, 'rotated the API key');
    return r;
  }

  async rotateSecret(user: DashboardUser, merchantId: string) {
    const r = await this.services.merchants.rotateSecret(merchantId);
    await this.record(user, 'rotate_secret', merchantId, 'rotated the webhook secret');
    return r;
  }

  async setCallbackUrl(user: DashboardUser, merchantId: string, url: string | null) {
    const problem = url === null ? null : callbackUrlProblem(url, this.config.allowPrivateCallbackUrls);
    if (problem) throw new AppError('BAD_REQUEST', problem);
    const m = await this.services.merchants.setCallbackUrl(merchantId, url);
    await this.record(
      user,
      'callback_url',
      merchantId,
      m.callback_url ? `set the callback URL to ${urlForRecord(m.callback_url)}` : 'cleared the callback URL',
    );
    return m;
  }

  /**
   * Credits a wallet once per credit form (`formId`, its one-time hidden field): the same form posted
   * again answers 409 INVALID_STATE and credits nothing. A form whose credit failed is used up
   * too; the page it returns to carries a new one.
   */
  async credit(user: DashboardUser, merchantId: string, currency: string, amount: number, formId: string) {
    if (!this.config.supportedCurrencies.includes(currency))
      throw new AppError('VALIDATION_INVALID_CURRENCY', `${currency} is not a supported currency`);
    await this.services.merchants.get(merchantId);
    if (!(await this.takeFormOnce(formId)))
      throw new AppError('INVALID_STATE', 'This credit form was sent already; the wallet was credited once.');
    const b = await this.services.wallets.topUp(merchantId, currency, amount);
    await this.record(user, 'credit', merchantId, `credited ${formatAmount(amount)} ${currency}`);
    return b;
  }

  async setStatus(user: DashboardUser, merchantId: string, status: MerchantStatus) {
    const m = await this.services.merchants.setStatus(merchantId, status);
    await this.record(
      user,
      status === 'active' ? 'enable' : 'disable',
      merchantId,
      `${status === 'active' ? 'enabled' : 'disabled'} the merchant`,
    );
    return m;
  }

  async createMerchant(
    user: DashboardUser,
    input: { name: string; callbackUrl: string | null; live: boolean; vpa: string | null },
  ): Promise<CreatedMerchant> {
    const problem =
      vpaProblem(input.vpa, input.live) ??
      (input.callbackUrl === null
        ? null
        : callbackUrlProblem(input.callbackUrl, this.config.allowPrivateCallbackUrls));
    if (problem) throw new AppError('BAD_REQUEST', problem);
    const created = await this.services.merchants.create(input);
    await this.record(
      user,
      'merchant_create',
      created.merchant_id,
      `created ${created.mode} merchant ${input.name}`,
    );
    return created;
  }

  verify() {
    return this.services.wallets.verify();
  }

  activity(merchantId: string | null) {
    return listAuditActions(this.db, merchantId, 200);
  }

  /** A merchant's activity as its own users see it: their colleagues by address, operators not by name. */
  async merchantActivity(merchantId: string) {
    const [rows, users] = await Promise.all([
      this.activity(merchantId),
      this.db.selectFrom('users').select('email').where('merchant_id', '=', merchantId).execute(),
    ]);
    const own = new Set(users.map((u) => u.email));
    return rows.map((r) => (own.has(r.actor) ? r : { ...r, actor: 'Paygate operator' }));
  }

  /** Takes a money form's one-time id: false when it was taken already (within FORM_MEMORY_MS). */
  private takeFormOnce(formId: string): Promise<boolean> {
    const at = this.now();
    return takeForm(this.db, formId, at, at - FORM_MEMORY_MS);
  }

  private async record(user: DashboardUser, action: string, merchantId: string, detail: string) {
    await insertAuditAction(this.db, {
      at: this.now(),
      actor: user.email,
      action,
      merchant_id: merchantId,
      detail,
    });
  }
}

/** A URL as the audit log keeps it: scheme, host and path; credentials or a token in its user part or query stay out. */
function urlForRecord(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.origin}${u.pathname}${u.search ? ' (query not recorded)' : ''}`;
  } catch {
    return '(not a URL)';
  }
}
