/**
 * Pay-ins in three flows (seed §4, CONTRACT §3–§5). A pay-in is one row: created PENDING with
 * the response it was created with (for replays), settled by the final-status transition,
 * failed by the worker when it expires.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Config } from '../config.ts';
import type { Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newPaymentId } from '../ids.ts';
import { toPaise, toRupees } from '../money.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import type { ChannelFor } from '../payments/channel-choice.ts';
import { checkCurrency } from '../payments/currency.ts';
import type { PayinFlow } from '../payments/flows.ts';
import { replayOrConflict, requestHash, type Created } from '../payments/idempotency.ts';
import { toStatusResponse } from '../payments/status-view.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import {
  findStatus,
  insertTransactions,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import type {
  OffsitePayinResponse,
  PagePayinResponse,
  PayinRequest,
  PayinStatusView,
} from './payins.schemas.ts';
import { deepLinks, qrDataUrl, upiIntent } from './upi.ts';

const PAGE_PATH: Record<PayinFlow, string> = { onsite: 'pay', p2p: 'p2p', offsite: 'cashier' };

/** The most pay-ins written in one statement (27 parameters each). */
const MAX_BATCH = 100;

export class PayinService {
  private readonly now: () => number;
  /**
   * Pay-ins created while others are being written are written together, in one multi-row INSERT
   * (one commit for the batch). Answers, per row, whether it was inserted (false: the order
   * number was taken, by an earlier request or by an earlier row of the same batch).
   */
  private readonly inserts: BatchQueue<TransactionRow, boolean>;

  private readonly db: Kysely<Tables>;

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly channelFor: ChannelFor,
    now?: () => number,
  ) {
    this.db = database.db;
    this.now = now ?? Date.now;
    this.inserts = new BatchQueue(async (rows) => {
      const inserted = await insertTransactions(this.db, rows);
      return rows.map((r) => inserted.has(r.payment_id));
    }, MAX_BATCH);
  }

  async create(
    principal: Principal,
    flow: PayinFlow,
    req: PayinRequest,
  ): Promise<Created<PagePayinResponse | OffsitePayinResponse>> {
    const channel = this.channelFor(principal);
    const currency = checkCurrency(this.config, req.money.currency);
    const amount = toPaise(req.money.amount);
    const user = req.user_details ?? {};
    const phone = user.phone_number ?? req.phone ?? null;
    const callbackUrl = req.callback_url ?? null;
    const redirectUrl = flow === 'p2p' ? (req.redirect_url ?? null) : null;
    const hash = requestHash({
      flow,
      amount,
      currency,
      phone,
      user_name: user.user_name ?? null,
      email: user.email ?? null,
      callback_url: callbackUrl,
      redirect_url: redirectUrl,
    });

    const paymentId = newPaymentId();
    const pageUrl = `${this.config.publicUrl}/${PAGE_PATH[flow]}/${paymentId}`;
    const instructions = await channel.openPayin({
      paymentId,
      merchantOrderNo: req.merchant_order_no,
      amount,
      currency,
      merchant: { name: principal.merchantName, vpa: principal.vpa },
    });
    const base = { success: true, payment_id: paymentId };
    const tail = { amount: toRupees(amount), currency, message: 'Payment created' };
    let response: PagePayinResponse | OffsitePayinResponse;
    let stored: string;
    if (flow === 'offsite') {
      const upi = {
        payeeVpa: instructions.payeeVpa,
        payeeName: instructions.payeeName,
        amount,
        currency,
        paymentId,
        orderNo: req.merchant_order_no,
      };
      const intent = upiIntent(upi);
      const data = { cashier_url: pageUrl, cashier_string: intent, deep_links: deepLinks(upi) };
      // Stored without the QR code (1.5 KB of every row, a pure function of the intent): a replay
      // draws it again (`withQrCode`).
      stored = JSON.stringify({ ...base, data, ...tail });
      response = { ...base, data: { qrCode: await qrDataUrl(intent), ...data }, ...tail };
    } else {
      response = { ...base, payment_url: pageUrl, ...tail };
      stored = JSON.stringify(response);
    }

    const at = this.now();
    const expiresAt = at + this.config.payinExpiryS * 1000;
    const inserted = await this.inserts.submit({
      payment_id: paymentId,
      merchant_id: principal.merchantId,
      kind: 'payin',
      flow,
      merchant_order_no: req.merchant_order_no,
      amount,
      currency,
      status: 'PENDING',
      utr: '',
      channel_txn_id: instructions.channelTxnId,
      channel: channel.name,
      user_name: user.user_name ?? null,
      user_phone: phone,
      user_email: user.email ?? null,
      callback_url: callbackUrl ?? principal.callbackUrl,
      redirect_url: redirectUrl,
      receiver_name: null,
      receiver_account_no: null,
      receiver_ifsc: null,
      request_hash: hash,
      response_json: stored,
      expires_at: expiresAt,
      next_action_at: expiresAt,
      lease_until: null,
      created_at: at,
      updated_at: at,
      finalized_at: null,
    });
    if (inserted) return { body: response, replayed: false };
    const replay = await replayOrConflict(this.db, principal, 'payin', req.merchant_order_no, hash);
    // The flow is part of the request hash, so a replay here is of an offsite creation.
    return flow === 'offsite' ? { ...replay, body: await withQrCode(replay.body as string) } : replay;
  }

  async status(principal: Principal, paymentId: string): Promise<PayinStatusView> {
    const row = await findStatus(this.database, principal.merchantId, 'payin', paymentId);
    if (!row) throw new AppError('PAYMENT_NOT_FOUND', 'No pay-in with this payment_id');
    // A pay-in is never PROCESSING; only payouts pass through that status.
    return toStatusResponse(row) as PayinStatusView;
  }
}

/**
 * A stored offsite creation response as it was first sent: the same JSON with `data.qrCode` drawn
 * again, first in `data` as it was. Rows stored with their QR code (before it was left out) are
 * returned as they are.
 */
async function withQrCode(stored: string): Promise<string> {
  const body = JSON.parse(stored) as Omit<OffsitePayinResponse, 'data'> & {
    data: Omit<OffsitePayinResponse['data'], 'qrCode'> & { qrCode?: string };
  };
  if (body.data.qrCode !== undefined) return stored;
  return JSON.stringify({
    ...body,
    data: { qrCode: await qrDataUrl(body.data.cashier_string), ...body.data },
  });
}
