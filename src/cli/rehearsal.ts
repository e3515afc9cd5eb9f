/**
 * A rehearsal of the live channels with real money (CONTRACT §1, `paygate channels rehearse`): a
 * ₹1 pay-in through Setu whose QR the operator pays, a ₹1 top-up of the merchant's wallet, the
 * pay-in's refund through Setu and a ₹1 payout through Cashfree, each through the same services
 * as the API's requests, each step reported with its provider references.
 *
 * The rehearsal creates and waits; a serving process (`paygate serve` at PUBLIC_URL) receives the
 * providers' notifications and its worker sends, reads and expires, as for any merchant's
 * transaction. So nothing is sent by the rehearsal itself, and nothing twice: every send goes
 * through the worker's send-once rules. The pay-in expires after `--wait-s` (its own expiry), so
 * an unpaid QR is closed at the provider by the worker's usual expiry.
 */
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import { toRupees } from '../money.ts';
import type { PayinRequest } from '../payins/payins.schemas.ts';
import type { PayoutRequest } from '../payouts/payouts.schemas.ts';
import type { Services } from '../services.ts';
import { findTransaction, type TransactionRow } from '../transactions/transactions.repository.ts';
import { terminalQr } from './terminal-qr.ts';

export type StepName = 'payin' | 'topup' | 'refund' | 'payout';
/** ok: done and final; unpaid: the QR was not paid in time; pending: not final when the wait ended. */
export type StepStatus = 'ok' | 'failed' | 'unpaid' | 'skipped' | 'pending';
export type References = Record<string, string | number | boolean | null>;

export interface StepReport {
  step: StepName;
  status: StepStatus;
  references: References;
  detail: string;
}

export interface RehearsalPlan {
  rehearsalId: string;
  merchantId: string;
  receiver: { name: string; account_no: string; ifsc_code: string };
  waitMs: number;
}

export interface RehearsalDeps {
  config: Config;
  database: Database;
  services: Services;
  /** Progress for the operator (the QR to pay), one line each. */
  say(line: string): void;
  /** Writes an operator's action to the audit log. */
  audit(action: string, merchantId: string, detail: string): Promise<void>;
  now: () => number;
  /** How often the rehearsal looks at its transactions. */
  pollMs?: number;
}

const ONE_RUPEE = 100;
/**
 * After its expiry, how long a pay-in may take to be closed by a serving process's worker (a round
 * of the worker, a read and a close at the channel) before the rehearsal stops waiting for it.
 */
const CLOSE_GRACE_MS = 120_000;

const FINAL = new Set(['SUCCESS', 'FAILED']);

/** Runs the four steps in order; the refund is skipped unless the pay-in was paid. */
export async function rehearse(plan: RehearsalPlan, d: RehearsalDeps): Promise<StepReport[]> {
  const principal = await principalOf(d.services, plan.merchantId);
  const payin = await payinStep(plan, principal, d);
  const topup = await topupStep(plan, d);
  const paid = payin.status === 'ok' ? String(payin.references.payment_id) : null;
  // The refund and the payout go to different providers: both are waited on together.
  const [refund, payout] = await Promise.all([
    paid
      ? refundStep(plan, paid, d)
      : Promise.resolve(skipped('refund', `skipped: the pay-in was ${payin.status}, nothing to refund`)),
    payoutStep(plan, principal, d),
  ]);
  return [payin, topup, refund, payout];
}

function skipped(step: StepName, detail: string): StepReport {
  return { step, status: 'skipped', references: {}, detail };
}

/** The merchant as the API would see it, with no callback URL: a rehearsal calls no merchant back. */
async function principalOf(services: Services, merchantId: string): Promise<Principal> {
  const m = await services.merchants.get(merchantId);
  return {
    keyId: '',
    merchantId: m.id,
    merchantName: m.name,
    mode: m.mode,
    status: m.status,
    vpa: m.vpa,
    callbackUrl: null,
  };
}

/** A refusal (an AppError's code and message) as a failed step's references. */
function refused(step: StepName, provider: string, err: unknown): StepReport {
  const code = (err as { errorCode?: string }).errorCode ?? 'INTERNAL_ERROR';
  const metadata = (err as { metadata?: Record<string, unknown> }).metadata ?? {};
  const providerCode = typeof metadata.provider_code === 'string' ? metadata.provider_code : null;
  return {
    step,
    status: 'failed',
    references: { provider, error_code: code, provider_code: providerCode },
    detail: `${provider} refused the ${step}: ${code}: ${(err as Error).message}`,
  };
}

async function payinStep(plan: RehearsalPlan, principal: Principal, d: RehearsalDeps): Promise<StepReport> {
  const request = {
    money: { amount: toRupees(ONE_RUPEE), currency: 'INR' },
    merchant_order_no: plan.rehearsalId,
  } as PayinRequest;
  let created;
  try {
    created = await d.services.payins.create(principal, 'offsite', request);
  } catch (err) {
    return refused('payin', 'setu', err);
  }
  const body = (typeof created.body === 'string' ? JSON.parse(created.body) : created.body) as {
    payment_id: string;
    data?: { cashier_url: string; cashier_string: string };
  };
  const link = body.data?.cashier_string ?? '';
  d.say(terminalQr(link));
  d.say(`Scan and pay ₹1.00 within ${Math.round(plan.waitMs / 1000)} s, or open ${body.data?.cashier_url}`);
  d.say(`(UPI link: ${link})`);
  const row = await waitFinal(d, body.payment_id, (r) => (r.expires_at ?? 0) + CLOSE_GRACE_MS);
  const references = await transactionReferences(d.database.db, row, 'setu');
  if (row.status === 'SUCCESS') return { step: 'payin', status: 'ok', references, detail: 'paid' };
  if (row.status === 'FAILED')
    return {
      step: 'payin',
      status: 'unpaid',
      references: { ...references, qr_closed: true },
      detail: `not paid within ${Math.round(plan.waitMs / 1000)} s: the QR was closed at Setu`,
    };
  return pendingStep('payin', references, await exceptionsOf(d.database.db, row.payment_id));
}

async function topupStep(plan: RehearsalPlan, d: RehearsalDeps): Promise<StepReport> {
  const balance = await d.services.wallets.topUp(plan.merchantId, 'INR', ONE_RUPEE);
  await d.audit('credit', plan.merchantId, `credited 1.00 INR for rehearsal ${plan.rehearsalId}`);
  return {
    step: 'topup',
    status: 'ok',
    references: {
      amount: toRupees(ONE_RUPEE),
      available: toRupees(balance.available),
      held: toRupees(balance.held),
    },
    detail: 'credited 1.00 INR (in the audit log)',
  };
}

async function refundStep(plan: RehearsalPlan, payinId: string, d: RehearsalDeps): Promise<StepReport> {
  let refundId: string;
  try {
    const created = await d.services.refunds.createOnBehalf(plan.merchantId, {
      paymentId: payinId,
      amount: ONE_RUPEE,
      refundNo: plan.rehearsalId,
      reason: 'rehearsal',
    });
    const body = typeof created.body === 'string' ? JSON.parse(created.body) : created.body;
    refundId = (body as { refund_id: string }).refund_id;
  } catch (err) {
    return refused('refund', 'setu', err);
  }
  await d.audit(
    'refund',
    plan.merchantId,
    `refund ${refundId} of 1.00 INR for rehearsal ${plan.rehearsalId}`,
  );
  const row = await waitFinal(d, refundId, () => d.now() + plan.waitMs);
  return finalStep('refund', row, await transactionReferences(d.database.db, row, 'setu'), d);
}

async function payoutStep(plan: RehearsalPlan, principal: Principal, d: RehearsalDeps): Promise<StepReport> {
  const request: PayoutRequest = {
    money: { amount: toRupees(ONE_RUPEE), currency: 'INR' },
    merchant_order_no: plan.rehearsalId,
    receiver: plan.receiver,
  };
  let paymentId: string;
  try {
    const created = await d.services.payouts.create(principal, request);
    const body = typeof created.body === 'string' ? JSON.parse(created.body) : created.body;
    paymentId = (body as { payment_id: string }).payment_id;
  } catch (err) {
    return refused('payout', 'cashfree', err);
  }
  const deadline = d.now() + plan.waitMs;
  // A refusal of Paygate's own account leaves the payout PENDING with an exception: that is the answer.
  const row = await waitFinal(
    d,
    paymentId,
    () => deadline,
    async () => {
      const open = await exceptionsOf(d.database.db, paymentId);
      return open.some((e) => e.startsWith('channel_account'));
    },
  );
  return finalStep('payout', row, await transactionReferences(d.database.db, row, 'cashfree'), d);
}

async function finalStep(
  step: StepName,
  row: TransactionRow,
  references: References,
  d: RehearsalDeps,
): Promise<StepReport> {
  if (row.status === 'SUCCESS') return { step, status: 'ok', references, detail: 'SUCCESS' };
  if (row.status === 'FAILED')
    return {
      step,
      status: 'failed',
      references,
      detail: `${references.provider} failed the ${step}${row.failure_reason ? `: ${row.failure_reason}` : ''}`,
    };
  return pendingStep(step, references, await exceptionsOf(d.database.db, row.payment_id));
}

function pendingStep(step: StepName, references: References, exceptions: string[]): StepReport {
  const open = exceptions.join('; ');
  return {
    step,
    status: exceptions.length > 0 ? 'failed' : 'pending',
    references: { ...references, exceptions: open || null },
    detail: exceptions.length
      ? `${references.provider} did not complete the ${step}: ${open} (see paygate channels exceptions)`
      : `not final when the wait ended; is paygate serve running at PUBLIC_URL, and are the providers' notifications registered?`,
  };
}

/** Waits until the transaction is final, `stop` says to, or the deadline (read from its row) passes. */
async function waitFinal(
  d: RehearsalDeps,
  paymentId: string,
  deadlineOf: (row: TransactionRow) => number,
  stop: () => Promise<boolean> = async () => false,
): Promise<TransactionRow> {
  for (;;) {
    const row = await findTransaction(d.database.db, paymentId);
    if (!row) throw new Error(`${paymentId} is gone from the database`);
    if (FINAL.has(row.status) || d.now() >= deadlineOf(row) || (await stop())) return row;
    await new Promise((r) => setTimeout(r, d.pollMs ?? 500));
  }
}

/** A transaction's references: Paygate's id, the provider's, the bank's, and how its status was learned. */
async function transactionReferences(
  db: Kysely<Tables>,
  row: TransactionRow,
  provider: string,
): Promise<References> {
  const event = await db
    .selectFrom('transaction_events')
    .select('source')
    .where('payment_id', '=', row.payment_id)
    .where('status', '=', row.status)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  return {
    provider,
    payment_id: row.payment_id,
    status: row.status,
    channel_txn_id: row.channel_txn_id || null,
    channel_payment_id: row.channel_payment_id,
    utr: row.utr || null,
    learned_by: FINAL.has(row.status) ? (event?.source ?? null) : null,
  };
}

/** The open exceptions of a transaction, as `kind: detail`. */
async function exceptionsOf(db: Kysely<Tables>, paymentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('channel_exceptions')
    .select(['kind', 'detail'])
    .where('payment_id', '=', paymentId)
    .where('resolved_at', 'is', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => `${r.kind}: ${r.detail}`);
}
