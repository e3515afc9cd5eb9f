/**
 * A dispute's outcome (CONTRACT §10 "Disputes"), recorded by an operator (`paygate exceptions
 * resolve ID --action dispute-won|dispute-lost`, or the console) or by the provider's own closing
 * status, once whichever comes first:
 *
 * - won: the dispute and its exception close; the pay-in can be refunded again.
 * - lost: the disputed amount, up to what of the pay-in is still refundable, goes back to the
 *   customer as a refund of the pay-in through the ordinary refund path (the worker hands it to the
 *   channel), with no merchant refund number and no callback. It is held from the merchant's
 *   available balance as far as that goes; what the balance lacks is held as the merchant's debt
 *   (`holdOwedForDispute`) and stays on the exception, which a `debit` or a dismissal resolves.
 *
 * It runs inside the caller's transaction, which holds the exception locked (so two decisions never
 * both act); the wallet is locked before the pay-in's refunds are summed, as a refund's writer does.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newRefundId } from '../ids.ts';
import { formatAmount } from '../money.ts';
import type { DisputeDecider, DisputeOutcome } from '../exceptions/dispute-port.ts';
import { updateException, type ExceptionRow } from '../exceptions/exceptions.repository.ts';
import { refundedOf } from '../refunds/refunds.repository.ts';
import { newTransaction } from '../transactions/new-transaction.ts';
import {
  findTransaction,
  insertTransactions,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { holdForRefunds } from '../wallet/ledger.ts';
import { holdOwedForDispute } from '../wallet/dispute.ledger.ts';
import { lockAvailable, walletKey } from '../wallet/wallet.repository.ts';
import { decideDispute, disputeOfException, type DisputeRow } from './disputes.repository.ts';

/** The `merchant_order_no` of a lost dispute's refund begins so: it is no merchant's refund number. */
export const DISPUTE_REFUND_PREFIX = 'dispute:';

/** What a lost dispute's refund came to. */
interface LostRefund {
  refundId: string | null;
  refunded: number;
  owed: number;
  message: string;
}

export class DisputeDecisions implements DisputeDecider {
  constructor(private readonly database: Pick<Database, 'lockRows'>) {}

  async decide(
    tx: Kysely<Tables>,
    e: ExceptionRow,
    outcome: DisputeOutcome,
    actor: string,
    at: number,
  ): Promise<{ changed: boolean; message: string }> {
    const d = await disputeOfException(tx, e.id);
    if (!d) throw new AppError('BAD_REQUEST', `Exception ${e.id} (${e.kind}) is no dispute.`);
    if (d.status === outcome)
      return { changed: false, message: `dispute ${d.dispute_id} was recorded ${outcome} already` };
    if (d.status !== 'open')
      throw new AppError('INVALID_STATE', `Dispute ${d.dispute_id} was recorded ${d.status} already.`);
    const lost = outcome === 'lost' ? await this.refundLost(tx, d, at) : null;
    await decideDispute(
      tx,
      e.id,
      {
        status: outcome,
        refundId: lost?.refundId ?? null,
        refunded: lost?.refunded ?? 0,
        owed: lost?.owed ?? 0,
      },
      actor,
      at,
    );
    const resolution = `dispute-${outcome}`;
    if (lost && lost.owed > 0)
      await updateException(tx, e.id, { holds: 'receivable', outstanding: lost.owed });
    else
      await updateException(tx, e.id, {
        outstanding: 0,
        resolved_at: at,
        resolved_by: actor,
        resolution,
      });
    return {
      changed: true,
      message: lost ? lost.message : `dispute ${d.dispute_id} won; the pay-in can be refunded again`,
    };
  }

  /** The refund of a lost dispute, held from the merchant's balance and, for what it lacks, as its debt. */
  private async refundLost(tx: Kysely<Tables>, d: DisputeRow, at: number): Promise<LostRefund> {
    const payin = d.payin_id === null ? undefined : await findTransaction(tx, d.payin_id);
    const none = (why: string): LostRefund => ({ refundId: null, refunded: 0, owed: 0, message: why });
    if (!payin) return none(`dispute ${d.dispute_id} lost; it names no pay-in here, so nothing is refunded`);
    if (d.amount === null)
      throw new AppError(
        'BAD_REQUEST',
        `The amount of dispute ${d.dispute_id} could not be read: refund the pay-in by hand and dismiss the exception.`,
      );
    const wallet = { merchantId: payin.merchant_id, currency: payin.currency };
    const balances = await lockAvailable(tx, this.database, [wallet]);
    const available = balances.get(walletKey(wallet)) ?? 0;
    const refunded = (await refundedOf(tx, [payin.payment_id])).get(payin.payment_id) ?? 0;
    const amount = Math.min(d.amount, Number(payin.amount) - refunded);
    if (amount <= 0) return none(`dispute ${d.dispute_id} lost; the pay-in was refunded in full already`);
    const refundId = newRefundId(payin.payment_id);
    await insertTransactions(tx, [refundRow(payin, d, refundId, amount, at)]);
    const held = Math.min(amount, available);
    const owed = amount - held;
    const money = { ...wallet, paymentId: refundId };
    if (held > 0) await holdForRefunds(tx, [{ ...money, amount: held }], at);
    if (owed > 0) await holdOwedForDispute(tx, { ...money, amount: owed }, at);
    return {
      refundId,
      refunded: amount,
      owed,
      message: `dispute ${d.dispute_id} lost; refund ${refundId} of ${formatAmount(amount)} to the customer started${owed > 0 ? `; the merchant's balance lacked ${formatAmount(owed)}, owed on this exception` : ''}`,
    };
  }
}

/** The refund of a lost dispute: the pay-in's refund, with no merchant refund number and no callback. */
function refundRow(
  payin: TransactionRow,
  d: DisputeRow,
  refundId: string,
  amount: number,
  at: number,
): TransactionRow {
  return newTransaction({
    payment_id: refundId,
    merchant_id: payin.merchant_id,
    kind: 'refund',
    flow: 'refund',
    merchant_order_no: `${DISPUTE_REFUND_PREFIX}${refundId}`,
    amount,
    currency: payin.currency,
    status: 'PENDING',
    channel: payin.channel,
    user_name: payin.user_name,
    user_phone: payin.user_phone,
    user_email: payin.user_email,
    request_hash: '',
    response_json: '{}',
    next_action_at: at,
    created_at: at,
    refund_of: payin.payment_id,
    reason: `dispute ${d.dispute_id} lost`.slice(0, 100),
    channel_payment_id: payin.channel_payment_id,
    channel_payment_txn_id: payin.channel_payment_txn_id,
  });
}
