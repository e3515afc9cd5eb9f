/**
 * Refunds of Setu's UPI payments (UMAP `/api/v1/merchants/refunds`): one refund per refund_id,
 * which goes to Setu as its `referenceId`. A refund is read by Setu's id when Paygate has it;
 * after a send whose answer was lost it has none, and the refund is looked for among the refunds
 * of its payment (listed under the payment's `txnId`) by that `referenceId`. Setu's statuses:
 * `success` (with the bank's reference, `crn`, when it gives one), `failed` (with NPCI's reason,
 * as `refund-disabled` R21), and `pending` / `initiated` while the banks work on it.
 */
import {
  ChannelFailure,
  type FinalOutcome,
  type RefundInFlight,
  type RefundRail,
  type RefundState,
  type RefundSubmission,
} from '../channel.ts';
import { failureOf, providerCode, type ChannelAnswer } from '../channel-http.ts';

/** A call to Setu with its token (`SetuChannel.call`). */
export type SetuCall = (
  operation: string,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  body?: unknown,
  notAfter?: number,
) => Promise<ChannelAnswer>;

const REFUNDS = '/api/v1/merchants/refunds';

export class SetuRefunds implements RefundRail {
  /** Setu documents no uniqueness of a refund's `referenceId`: a second POST may refund twice. */
  readonly uniqueReferences = false;
  constructor(
    private readonly channel: string,
    private readonly call: SetuCall,
  ) {}

  async submitRefund(r: RefundSubmission): Promise<RefundState> {
    const answer = await this.call(
      'refund_create',
      'POST',
      REFUNDS,
      { paymentId: r.channelPaymentId, amount: r.amount, referenceId: r.refundId, type: 'online' },
      r.notAfter,
    );
    if ((answer.status === 200 || answer.status === 201) && answer.body)
      return this.stateIn(answer.body, 'refund_create');
    throw this.refusal(answer);
  }

  async readRefund(r: RefundInFlight): Promise<RefundState | null> {
    if (r.channelTxnId) {
      const answer = await this.call(
        'refund_read',
        'GET',
        `${REFUNDS}/${encodeURIComponent(r.channelTxnId)}`,
      );
      // A refund Setu named is never "unknown" to it: any other answer leaves the outcome open.
      if (answer.status !== 200 || !answer.body) throw this.readFailure('refund_read', answer);
      return this.stateIn(answer.body, 'refund_read');
    }
    const txnId = r.channelPaymentTxnId || (await this.paymentTxnId(r.channelPaymentId));
    const answer = await this.call('refund_list', 'GET', `${REFUNDS}/${encodeURIComponent(txnId)}/payment`);
    // Setu's own not-found (its error body) says the payment has no refunds; a bare 404 says nothing.
    if (answer.status === 404 && setuError(answer)) return null;
    const refunds = answer.body?.refunds;
    if (answer.status !== 200 || !Array.isArray(refunds)) throw this.readFailure('refund_list', answer);
    const mine = refunds.filter(
      (x): x is Record<string, unknown> =>
        typeof x === 'object' && x !== null && (x as Record<string, unknown>).referenceId === r.refundId,
    );
    // One refund per referenceId is what Paygate sends; were there more, a final one decides.
    const chosen = mine.find((x) => x.status === 'success' || x.status === 'failed') ?? mine[0];
    return chosen ? this.stateIn(chosen, 'refund_list') : null;
  }

  /**
   * The `txnId` of a payment, under which Setu lists its refunds, read from the payment itself
   * (`GET /payments/{id}`) when the refund does not carry it (a refund of money no pay-in kept).
   */
  private async paymentTxnId(paymentId: string): Promise<string> {
    const answer = paymentId
      ? await this.call('payment_read', 'GET', `/api/v1/merchants/payments/${encodeURIComponent(paymentId)}`)
      : null;
    const txnId = answer?.status === 200 ? answer.body?.txnId : undefined;
    if (typeof txnId === 'string' && txnId !== '') return txnId;
    throw answer && answer.status !== 200
      ? this.readFailure('payment_read', answer)
      : new ChannelFailure(
          'unknown',
          this.channel,
          'no_payment_txn_id',
          `${this.channel}: the refunded payment's txnId is not known`,
        );
  }

  /**
   * Setu's refund as it holds it, for reconciliation: its raw fields, or null when Setu answers
   * (with its own error body) that it has no refund with this id. A read only.
   */
  async refundRecord(id: string): Promise<Record<string, unknown> | null> {
    const answer = await this.call('refund_reconcile', 'GET', `${REFUNDS}/${encodeURIComponent(id)}`);
    if (answer.status === 404 && setuError(answer)) return null;
    if (answer.status !== 200 || !answer.body) throw failureOf(this.channel, 'refund_reconcile', answer);
    return answer.body;
  }

  /** The refund in an answer; an answer without Setu's id for it leaves the outcome unknown. */
  private stateIn(body: Record<string, unknown>, operation: string): RefundState {
    const state = setuRefundState(body);
    if (!state)
      throw new ChannelFailure(
        'unknown',
        this.channel,
        'bad_answer',
        `${this.channel} ${operation}: no refund id in the answer`,
      );
    return state;
  }

  /**
   * What a refusal of a refund's POST means: 401 (after a new token) and 429 did not reach the
   * refund (`unavailable`); 403, or an answer without Setu's error body (a wrong host or path), is
   * about Paygate's account (`account`); 5xx `unknown`; a 400 or 404 with Setu's error body is a
   * refusal of this refund (`rejected`, Setu's code).
   */
  private refusal(answer: ChannelAnswer): ChannelFailure {
    const { status } = answer;
    const code = providerCode(answer);
    if (
      status === 403 ||
      (status >= 400 && status < 500 && status !== 401 && status !== 429 && !setuError(answer))
    )
      return new ChannelFailure(
        'account',
        this.channel,
        code,
        `${this.channel} refund_create: HTTP ${status} ${code}`,
      );
    return failureOf(this.channel, 'refund_create', answer);
  }

  private readFailure(operation: string, answer: ChannelAnswer): ChannelFailure {
    const failure = failureOf(this.channel, operation, answer);
    // A read changes nothing at Setu: whatever it answered, the refund's outcome is still open.
    return failure.kind === 'rejected'
      ? new ChannelFailure('unknown', this.channel, failure.code, failure.message)
      : failure;
  }
}

/** Whether an answer carries Setu's error body (`code` and `detail`), not some other server's page. */
function setuError(answer: ChannelAnswer): boolean {
  return typeof answer.body?.code === 'string' && typeof answer.body?.detail === 'string';
}

/**
 * A Setu refund as Paygate's refund state: `success` is SUCCESS with `crn` as the bank reference,
 * `failed` is FAILED with NPCI's reason kept, anything else is still moving. Null without an id.
 */
export function setuRefundState(body: Record<string, unknown>): RefundState | null {
  const id = typeof body.id === 'string' ? body.id : '';
  if (!id) return null;
  const amount =
    body.amount === undefined
      ? undefined
      : typeof body.amount === 'number' && Number.isSafeInteger(body.amount)
        ? body.amount
        : -1;
  const base = {
    channelTxnId: id,
    reference: id,
    ...(amount !== undefined && { amount }),
    ...(amount === -1 && { amountText: String(JSON.stringify(body.amount) ?? 'nothing').slice(0, 40) }),
  };
  let outcome: FinalOutcome | null = null;
  if (body.status === 'success') {
    const crn = typeof body.crn === 'string' ? body.crn.replace(/[^A-Za-z0-9]/g, '').slice(0, 40) : '';
    outcome = { status: 'SUCCESS', utr: crn, ...base };
  } else if (body.status === 'failed') {
    outcome = { status: 'FAILED', utr: '', ...base, reason: refusalReason(body.reason) };
  }
  return { channelTxnId: id, outcome };
}

/** NPCI's reason for a failed refund, as operators read it: "refund-disabled R21: ONLINE REFUND IS DISABLED IN UPI". */
export function refusalReason(reason: unknown): string {
  if (!reason || typeof reason !== 'object') return 'refused by Setu (no reason given)';
  const r = reason as Record<string, unknown>;
  const word = (v: unknown) => (typeof v === 'string' ? v.replace(/[^\x20-\x7e]/g, '').trim() : '');
  const codes = [word(r.errCode), word(r.npciErrCode)].filter(Boolean).join(' ');
  const desc = word(r.npciErrDesc);
  const text = codes && desc ? `${codes}: ${desc}` : codes || desc;
  return (text || 'refused by Setu (no reason given)').slice(0, 200);
}
