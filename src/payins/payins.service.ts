/**
 * Pay-ins in three flows: onsite, P2P and offsite (docs/integration.md §2). A pay-in is one row:
 * created PENDING with the response it was created with (for replays), settled by the final-status
 * transition, failed by the worker when it expires.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import type { Config } from '../config.ts';
import type { Tables } from '../db/schema.ts';
import { normalUrl } from '../outbound/urls.ts';
import { AppError } from '../errors.ts';
import { newPaymentId } from '../ids.ts';
import { toPaise, toRupees } from '../money.ts';
import type { Principal } from '../merchants/merchants.service.ts';
import type { ChannelFor } from '../payments/channel-choice.ts';
import { checkCurrency } from '../payments/currency.ts';
import type { PayinFlow } from '../payments/flows.ts';
import { replayOf, requestHash, type Created } from '../payments/idempotency.ts';
import { readStatusOf, toStatusResponse, type StatusRef } from '../payments/status-view.ts';
import { BatchQueue } from '../db/batch-queue.ts';
import {
  ChannelFailure,
  type Channel,
  type PayinInstructions,
  type PayinOpening,
} from '../channels/channel.ts';
import {
  deleteOpening,
  findByOrderNos,
  insertTransactions,
  OPENING,
  recordOpened,
  type OrderKey,
  type OrderRow,
  type TransactionRow,
} from '../transactions/transactions.repository.ts';
import { newTransaction } from '../transactions/new-transaction.ts';
import type {
  OffsitePayinResponse,
  PagePayinResponse,
  PayinRequest,
  PayinStatusView,
} from './payins.schemas.ts';
import { deepLinks, qrDataUrl, upiIntent as buildIntent } from '../upi/upi.ts';

const PAGE_PATH: Record<PayinFlow, string> = { onsite: 'pay', p2p: 'p2p', offsite: 'cashier' };

/**
 * How long a pay-in may stay opening (recorded, its channel not answered yet): longer than any
 * channel call may take (`openingTimeoutMs`). A row still opening after it was abandoned by a
 * process that stopped.
 */
export const OPENING_TIMEOUT_MS = 60_000;

/** The opening timeout for a CHANNEL_TIMEOUT_MS: room for a token login, a call and its retry after a 401. */
export function openingTimeoutMs(channelTimeoutMs: number): number {
  return Math.max(OPENING_TIMEOUT_MS, 4 * channelTimeoutMs);
}
/** How often a repeat of an opening order looks whether the answer is there. */
const OPENING_POLL_MS = 25;

/** What a pay-in's creation answers. */
type PayinCreated = Created<PagePayinResponse | OffsitePayinResponse>;

/** A checked creation request: its channel, the row it writes, and what its channel is asked to open. */
interface Prepared {
  channel: Channel;
  row: TransactionRow;
  opening: PayinOpening;
}

interface Answer {
  response: PagePayinResponse | OffsitePayinResponse;
  stored: string;
  channelTxnId: string;
  /** The channel's own UPI intent, when it made one. */
  upiIntent: string | null;
}

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
  /**
   * Repeats of order numbers that arrive together (a merchant's retries after a timeout) are looked
   * up together, in one statement: a replay then costs about what a creation does.
   */
  private readonly lookups: BatchQueue<OrderKey, OrderRow | undefined>;

  private readonly db: Kysely<Tables>;
  private readonly openingTimeoutMs: number;

  constructor(
    private readonly database: Database,
    private readonly config: Config,
    private readonly channelFor: ChannelFor,
    now?: () => number,
  ) {
    this.db = database.db;
    this.now = now ?? Date.now;
    this.openingTimeoutMs = openingTimeoutMs(config.channelTimeoutMs);
    this.inserts = new BatchQueue(async (rows) => {
      const inserted = await insertTransactions(this.db, rows);
      return rows.map((r) => inserted.has(r.payment_id));
    }, MAX_BATCH);
    // A read no key can make fail: a failure is the database's, and the group fails as one.
    this.lookups = new BatchQueue(
      (keys) => findByOrderNos(this.db, keys),
      MAX_BATCH,
      () => false,
    );
  }

  async create(principal: Principal, flow: PayinFlow, req: PayinRequest): Promise<PayinCreated> {
    const prepared = this.prepare(principal, flow, req);
    return prepared.channel.opensRemotely
      ? this.openRemotely(principal, flow, prepared)
      : this.openHere(principal, flow, prepared);
  }

  /**
   * A creation request checked (currency, then the channel's own limits) and made into the row it
   * writes and the opening its channel is asked for; nothing is written yet.
   */
  private prepare(principal: Principal, flow: PayinFlow, req: PayinRequest): Prepared {
    const currency = checkCurrency(this.config, req.money.currency);
    const amount = toPaise(req.money.amount);
    const channel = this.channelFor(principal, 'payin', amount, currency);
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
    const at = this.now();
    const expiresAt = at + this.config.payinExpiryS * 1000;
    const row = newTransaction({
      payment_id: paymentId,
      merchant_id: principal.merchantId,
      kind: 'payin',
      flow,
      merchant_order_no: req.merchant_order_no,
      amount,
      currency,
      status: 'PENDING',
      channel: channel.name,
      user_name: user.user_name,
      user_phone: phone,
      user_email: user.email,
      callback_url: normalUrl(callbackUrl) ?? principal.callbackUrl,
      redirect_url: normalUrl(redirectUrl),
      request_hash: hash,
      response_json: OPENING,
      expires_at: expiresAt,
      next_action_at: expiresAt,
      created_at: at,
    });
    const opening: PayinOpening = {
      paymentId,
      merchantOrderNo: req.merchant_order_no,
      amount,
      currency,
      expiresAt,
      merchant: { name: principal.merchantName, vpa: principal.vpa },
    };
    return { channel, row, opening };
  }

  /** A channel that answers at once: nothing to record first, the pay-in is written with its answer. */
  private async openHere(
    principal: Principal,
    flow: PayinFlow,
    { channel, row, opening }: Prepared,
  ): Promise<PayinCreated> {
    const answer = await this.answer(flow, row, await channel.openPayin(opening));
    const inserted = await this.inserts.submit({
      ...row,
      response_json: answer.stored,
      channel_txn_id: answer.channelTxnId,
    });
    if (inserted) return { body: answer.response, replayed: false };
    return this.replay(principal, flow, row.merchant_order_no, row.request_hash);
  }

  /**
   * A channel called over the network. The pay-in is recorded first, so that a repeat of the order
   * waits for this call instead of opening a second one; until the answer is recorded the worker
   * treats the row as abandoned after OPENING_TIMEOUT_MS, and removes it.
   */
  private async openRemotely(
    principal: Principal,
    flow: PayinFlow,
    { channel, row, opening }: Prepared,
  ): Promise<PayinCreated> {
    const at = row.created_at;
    if (!(await this.inserts.submit({ ...row, next_action_at: at + this.openingTimeoutMs })))
      return this.replay(principal, flow, row.merchant_order_no, row.request_hash);
    let answer: Answer;
    try {
      answer = await this.answer(flow, row, await channel.openPayin(opening));
    } catch (err) {
      await deleteOpening(this.db, row.payment_id);
      throw err instanceof ChannelFailure ? openingError(err) : err;
    }
    const recorded = await recordOpened(this.db, row.payment_id, {
      responseJson: answer.stored,
      channelTxnId: answer.channelTxnId,
      upiIntent: answer.upiIntent,
      expiresAt: opening.expiresAt,
      // A live channel's pay-in is asked about when no notification came within CHANNEL_POLL_MS.
      nextActionAt: Math.min(opening.expiresAt, at + channel.pollDelayMs('payin', 0)),
    });
    // Answered after OPENING_TIMEOUT_MS: the record was removed as abandoned, so this pay-in
    // does not exist and must not be handed out.
    if (!recorded)
      throw new AppError(
        'CHANNEL_UNAVAILABLE',
        'The payment channel answered too late; send the request again',
        {},
        { 'Retry-After': '1' },
      );
    return { body: answer.response, replayed: false };
  }

  /** The creation response for the channel's answer, and the JSON kept for replays. */
  private async answer(
    flow: PayinFlow,
    row: TransactionRow,
    instructions: PayinInstructions,
  ): Promise<Answer> {
    const paymentId = row.payment_id;
    const pageUrl = `${this.config.publicUrl}/${PAGE_PATH[flow]}/${paymentId}`;
    const base = { success: true, payment_id: paymentId };
    const tail = { amount: toRupees(row.amount), currency: row.currency, message: 'Payment created' };
    const channelTxnId = instructions.channelTxnId;
    const upiIntent = instructions.upiIntent ?? null;
    if (flow !== 'offsite') {
      const response = { ...base, payment_url: pageUrl, ...tail };
      return { response, stored: JSON.stringify(response), channelTxnId, upiIntent };
    }
    const upi = {
      payeeVpa: instructions.payeeVpa,
      payeeName: instructions.payeeName,
      amount: row.amount,
      currency: row.currency,
      paymentId,
      orderNo: row.merchant_order_no,
    };
    const intent = upiIntent ?? buildIntent(upi);
    const data = { cashier_url: pageUrl, cashier_string: intent, deep_links: deepLinks(intent) };
    return {
      response: { ...base, data: { qrCode: await qrDataUrl(intent), ...data }, ...tail },
      // Stored without the QR code (most of the response's size, and a pure function of the
      // intent): a replay draws it again (`withQrCode`).
      stored: JSON.stringify({ ...base, data, ...tail }),
      channelTxnId,
      upiIntent,
    };
  }

  /**
   * A repeat of an order number: the original response, or 409 for another request. While the
   * original is still opening, waits for its answer; if its opening failed, 503 (the order number
   * is free again, and the merchant's retry creates it).
   */
  private async replay(
    principal: Principal,
    flow: PayinFlow,
    orderNo: string,
    hash: string,
  ): Promise<PayinCreated> {
    const deadline = Date.now() + this.openingTimeoutMs;
    for (;;) {
      const existing = await this.lookups.submit({
        merchantId: principal.merchantId,
        kind: 'payin',
        orderNo,
      });
      if (!existing || existing.request_hash !== hash || existing.response_json !== OPENING) {
        if (!existing) {
          throw new AppError(
            'SERVICE_UNAVAILABLE',
            'The first request with this merchant_order_no did not complete; send it again',
            {},
            { 'Retry-After': '1' },
          );
        }
        const replay = replayOf(existing, 'payin', hash);
        // The flow is part of the request hash, so a replay here is of an offsite creation.
        return flow === 'offsite' ? { ...replay, body: await withQrCode(replay.body as string) } : replay;
      }
      if (Date.now() > deadline)
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'Service temporarily unavailable',
          {},
          { 'Retry-After': '5' },
        );
      await new Promise((r) => setTimeout(r, OPENING_POLL_MS));
    }
  }

  /** A pay-in's status, by its payment_id or by the merchant's order number. */
  async status(principal: Principal, ref: StatusRef): Promise<PayinStatusView> {
    const row = await readStatusOf(this.database, principal.merchantId, 'payin', ref);
    // A pay-in is never PROCESSING; only payouts pass through that status.
    return toStatusResponse(row) as PayinStatusView;
  }
}

/**
 * What the merchant is told when the channel did not open the pay-in: 400 CHANNEL_REJECTED with the
 * provider's code when it refused the request, else 503 CHANNEL_UNAVAILABLE (try again shortly).
 */
function openingError(failure: ChannelFailure): AppError {
  if (failure.kind === 'rejected')
    return new AppError('CHANNEL_REJECTED', 'The payment channel refused the request', {
      channel: failure.channel,
      provider_code: failure.code,
    });
  return new AppError(
    'CHANNEL_UNAVAILABLE',
    'The payment channel is not answering; send the request again shortly',
    { channel: failure.channel },
    { 'Retry-After': '5' },
  );
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
