/**
 * Settling sandbox transactions on request: the API's `/sandbox/{payin,payout,refund}/complete` and the hosted
 * pages' "Simulate" buttons. Both go through the sandbox channel into the one final-status
 * transition, exactly as a bank's report would.
 */
import type { Kysely } from 'kysely';
import type { Tables, TransactionKind } from '../db/schema.ts';
import { SANDBOX_REASONS, type SandboxChannel } from '../channels/sandbox.channel.ts';
import type { FinalStatusSink } from '../channels/channel.ts';
import { AppError } from '../errors.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import type { StatusResponse } from '../payments/payments.schemas.ts';
import { toStatusResponse } from '../payments/status-view.ts';
import { toRefundStatus } from '../refunds/refund-status.ts';
import { findTransaction, type TransactionRow } from '../transactions/transactions.repository.ts';

export class SandboxService {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly channel: SandboxChannel,
    private readonly sink: FinalStatusSink & { reverse(paymentId: string, source: string): Promise<boolean> },
  ) {}

  /** Settles a transaction of the merchant's. 403 for live keys, 404 unknown, 409 when already final. */
  async complete(
    principal: Principal,
    kind: 'payin' | 'payout',
    paymentId: string,
    status: 'SUCCESS' | 'FAILED' | 'REVERSED',
  ): Promise<StatusResponse & { payment_id: string; reversed?: boolean }> {
    if (status === 'REVERSED')
      return {
        payment_id: paymentId,
        ...(await this.reverse(await this.findOwn(principal, kind, paymentId))),
      };
    const after = await this.completeAny(principal, kind, paymentId, status);
    return { payment_id: paymentId, ...toStatusResponse(after) };
  }

  /** Settles a refund of the merchant's at once (`/sandbox/refund/complete`). */
  async completeRefund(principal: Principal, refundId: string, status: 'SUCCESS' | 'FAILED') {
    return toRefundStatus(await this.completeAny(principal, 'refund', refundId, status));
  }

  private async completeAny(
    principal: Principal,
    kind: TransactionKind,
    paymentId: string,
    status: 'SUCCESS' | 'FAILED',
  ): Promise<TransactionRow> {
    return this.settle(await this.findOwn(principal, kind, paymentId), status, 'sandbox_api');
  }

  /** The merchant's transaction of this kind: 403 for live keys, 404 unknown or another's. */
  private async findOwn(
    principal: Principal,
    kind: TransactionKind,
    paymentId: string,
  ): Promise<TransactionRow> {
    if (principal.mode !== 'test')
      throw new AppError('SANDBOX_ONLY', 'Only sandbox (test) merchants can do this');
    const txn = await findTransaction(this.db, paymentId);
    if (!txn || txn.merchant_id !== principal.merchantId || txn.kind !== kind) {
      throw new AppError(
        'PAYMENT_NOT_FOUND',
        kind === 'refund'
          ? 'No refund with this refund_id'
          : `No ${kind === 'payin' ? 'pay-in' : 'payout'} with this payment_id`,
      );
    }
    return txn;
  }

  /**
   * Reverses a SUCCESS sandbox payout as a beneficiary's bank would: its amount is available again,
   * the merchant gets a REVERSED callback, and its status stays SUCCESS. 409 INVALID_STATE otherwise.
   */
  private async reverse(txn: TransactionRow): Promise<StatusResponse & { reversed: true }> {
    if (txn.kind !== 'payout' || txn.status !== 'SUCCESS' || txn.reversed_at !== null)
      throw new AppError('INVALID_STATE', 'Only a SUCCESS payout not reversed yet can be reversed', {
        status: txn.status,
      });
    if (txn.channel !== this.channel.name)
      throw new AppError('SANDBOX_ONLY', 'This transaction is not on the sandbox channel');
    if (!(await this.sink.reverse(txn.payment_id, 'sandbox_api')))
      throw new AppError('INVALID_STATE', 'The payout was reversed already', { status: txn.status });
    return { ...toStatusResponse(txn), reversed: true };
  }

  /**
   * Settles a sandbox transaction as its channel would. Throws 409 INVALID_STATE when it is
   * already final (including when another request finalised it a moment earlier).
   */
  async settle(txn: TransactionRow, status: 'SUCCESS' | 'FAILED', source: string): Promise<TransactionRow> {
    if (txn.channel !== this.channel.name)
      throw new AppError('SANDBOX_ONLY', 'This transaction is not on the sandbox channel');
    const invalid = () =>
      new AppError('INVALID_STATE', `The transaction is already final (${txn.status})`, {
        status: txn.status,
      });
    if (txn.status === 'SUCCESS' || txn.status === 'FAILED') throw invalid();
    const reason =
      source === 'page'
        ? SANDBOX_REASONS.page
        : SANDBOX_REASONS.api.replace('…', txn.kind === 'payin' ? 'payin' : txn.kind);
    const { changed } =
      txn.kind === 'payin'
        ? await this.channel.completePayin(this.sink, txn.payment_id, status, source, reason)
        : await this.channel.completePayout(
            this.sink,
            txn.payment_id,
            txn.channel_txn_id,
            status,
            source,
            reason,
          );
    const after = await findTransaction(this.db, txn.payment_id);
    if (!changed || !after) {
      throw new AppError('INVALID_STATE', 'The transaction is already final', {
        status: after?.status ?? txn.status,
      });
    }
    return after;
  }
}
