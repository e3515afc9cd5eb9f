/**
 * Setu UPI (UMAP) for live pay-ins: one single-use dynamic QR per pay-in (`/api/v1/merchants/dqr`),
 * read while it waits and closed at its expiry; refunds of its payments (`setu-refunds.ts`). Calls carry a bearer token from Setu's login,
 * kept by the process and fetched again in its fourth minute (tokens live 300 s), by one call at a
 * time, and once more when Setu answers 401.
 */
import type { SetuSettings } from '../../config.ts';
import type { TransactionKind } from '../../db/schema.ts';
import {
  ChannelFailure,
  type Channel,
  type FinalOutcome,
  type OpenPayin,
  type PayinInstructions,
  type PayinOpening,
  type PayoutState,
  type VpaRegistration,
  type VpaRegistry,
} from '../channel.ts';
import { ChannelHttp, failureOf, IN_TRANSIT_MS, providerCode } from '../channel-http.ts';
import { SetuRefunds, type SetuCall } from './setu-refunds.ts';
import type { TurnStore } from '../../db/channel-turns.ts';
import { callGate } from '../shared-throttle.ts';
import { istRfc3339 } from '../../ist.ts';

/** Setu's tokens live 300 s; a new one is fetched in the fourth minute. */
export const SETU_TOKEN_REFRESH_MS = 240_000;

/** A UPI reference: the 12 digits NPCI gives a payment. */
const RRN = /^\d{12}$/;

export class SetuChannel implements Channel, VpaRegistry {
  readonly name = 'setu';
  readonly live = true;
  readonly opensRemotely = true;
  readonly inTransitMs = IN_TRANSIT_MS;
  readonly http: ChannelHttp;
  private token: { value: string; fetchedAt: number } | null = null;
  private login: Promise<string> | null = null;

  constructor(
    private readonly settings: SetuSettings,
    private readonly options: {
      timeoutMs: number;
      pollMs: number;
      maxRps: number;
      now?: () => number;
      turns?: TurnStore | null;
    },
  ) {
    this.http = new ChannelHttp(
      this.name,
      options.timeoutMs,
      callGate(this.name, options.maxRps, options.pollMs, options.turns ?? null),
    );
  }

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * A token that has at least a minute left, fetched by one login however many calls wait for it.
   * `refused`: a token Setu answered 401 to; a new one is fetched unless another call did already.
   */
  async bearer(refused?: string): Promise<string> {
    const current = this.token;
    const usable =
      current &&
      (refused === undefined
        ? this.now - current.fetchedAt < SETU_TOKEN_REFRESH_MS
        : current.value !== refused);
    if (current && usable) return current.value;
    this.login ??= this.fetchToken().finally(() => {
      this.login = null;
    });
    return this.login;
  }

  private async fetchToken(): Promise<string> {
    const answer = await this.http.send({
      operation: 'login',
      method: 'POST',
      url: `${this.settings.authUrl}/v1/users/login`,
      headers: { client: 'bridge' },
      body: {
        clientID: this.settings.clientId,
        secret: this.settings.clientSecret,
        grant_type: 'client_credentials',
      },
    });
    const body = answer.body ?? {};
    const data = (body.data ?? body) as Record<string, unknown>;
    const token = typeof data.access_token === 'string' ? data.access_token : '';
    if (answer.status >= 300 || !token) {
      // A refused login is the credentials': nothing was asked of Setu yet, so it is unavailable.
      throw new ChannelFailure(
        'unavailable',
        this.name,
        `login_http_${answer.status}`,
        `setu login at ${new URL(this.settings.authUrl).host}: HTTP ${answer.status}${
          answer.status < 300 ? ' without an access_token' : ''
        }`,
      );
    }
    this.token = { value: token, fetchedAt: this.now };
    return token;
  }

  /**
   * A UMAP call with the token; on 401 the token is fetched again and the call sent once more.
   * `notAfter`: not sent after this time (the caller's claim on the work runs out then).
   */
  readonly call: SetuCall = async (operation, method, path, body, notAfter) => {
    const send = async (token: string) =>
      this.http.send({
        operation,
        method,
        url: `${this.settings.baseUrl}${path}`,
        headers: { authorization: `Bearer ${token}`, merchantId: this.settings.merchantId },
        body,
        notAfter,
      });
    const token = await this.bearer();
    const answer = await send(token);
    if (answer.status !== 401) return answer;
    return send(await this.bearer(token));
  };

  /** Refunds of Setu's payments (`setu-refunds.ts`). */
  readonly refunds: SetuRefunds = new SetuRefunds(this.name, this.call);

  async openPayin(p: PayinOpening): Promise<PayinInstructions> {
    const answer = await this.call('dqr_create', 'POST', '/api/v1/merchants/dqr', {
      amount: p.amount,
      merchantVpa: p.merchant.vpa,
      referenceId: p.paymentId,
      expiryDate: istRfc3339(p.expiresAt),
      transactionNote: `Order ${p.merchantOrderNo}`.slice(0, 50),
    });
    if (answer.status !== 200 && answer.status !== 201) throw failureOf(this.name, 'dqr_create', answer);
    const b = answer.body ?? {};
    if (typeof b.id !== 'string' || typeof b.intentLink !== 'string' || !b.intentLink.startsWith('upi://'))
      throw new ChannelFailure(
        'unknown',
        this.name,
        'bad_answer',
        'setu dqr_create: no id or intentLink in the answer',
      );
    return {
      channelTxnId: b.id,
      payeeVpa: p.merchant.vpa,
      payeeName: p.merchant.name,
      upiIntent: b.intentLink,
    };
  }

  /** The QR's payment, when one succeeded: SUCCESS with the rrn as utr; null while none did. */
  async payinOutcome(p: OpenPayin): Promise<FinalOutcome | null> {
    const last = await this.lastPayment(p.channelTxnId);
    return last ? setuPaymentOutcome(last, p.channelTxnId) : null;
  }

  /**
   * At expiry: the QR's last payment is read first; a payment in progress keeps the pay-in open
   * (the customer may have approved it a moment ago), unless it is `stuck`. Otherwise the QR is
   * closed, and read once more: a payment that came before the close wins.
   */
  async closePayin(p: OpenPayin, opts: { stuck?: boolean } = {}): Promise<FinalOutcome | null> {
    const failed: FinalOutcome = { status: 'FAILED', utr: '', channelTxnId: p.channelTxnId };
    const before = await this.lastPayment(p.channelTxnId);
    if (before?.status === 'success') return setuPaymentOutcome(before, p.channelTxnId);
    if (inProgress(before) && !opts.stuck) return null;
    await this.closeQr(p.channelTxnId);
    const after = await this.lastPayment(p.channelTxnId);
    if (after?.status === 'success') return setuPaymentOutcome(after, p.channelTxnId);
    if (inProgress(after) && !opts.stuck) return null;
    return failed;
  }

  /**
   * Closes a QR, or throws. A QR that cannot be closed because it is paid or closed already is
   * refused with a 4xx: its read then says so. Any other answer leaves it payable, so the close
   * is tried again later and the pay-in stays open meanwhile.
   */
  private async closeQr(id: string): Promise<void> {
    const path = `/api/v1/merchants/dqr/${encodeURIComponent(id)}`;
    const closed = await this.call('dqr_expire', 'PUT', `${path}/expire`);
    if (closed.status === 200) return;
    if (closed.status >= 500 || closed.status === 429 || closed.status === 401 || closed.status < 400)
      throw failureOf(this.name, 'dqr_expire', closed);
    const qr = await this.call('dqr_read', 'GET', path);
    if (qr.status !== 200 || !qr.body) throw failureOf(this.name, 'dqr_read', qr);
    if (qr.body.status === 'active') throw failureOf(this.name, 'dqr_expire', closed);
  }

  /** The last payment made on a QR (Setu's documented status check), or null when none was made (404). */
  private async lastPayment(qrId: string): Promise<Record<string, unknown> | null> {
    const answer = await this.call(
      'payment_last',
      'GET',
      `/api/v1/merchants/payments/product-instances/${encodeURIComponent(qrId)}/last`,
    );
    if (answer.status === 404) return null;
    if (answer.status !== 200 || !answer.body) throw failureOf(this.name, 'payment_last', answer);
    return answer.body;
  }

  /**
   * Every payment made on a QR, oldest first, as Setu lists them (`/history`, which shows a second
   * payment that `/last` hides), for reconciliation. A read only; it goes through the provider's limit.
   */
  async paymentHistory(qrId: string): Promise<Record<string, unknown>[]> {
    const answer = await this.call(
      'payment_history',
      'GET',
      `/api/v1/merchants/payments/product-instances/${encodeURIComponent(qrId)}/history`,
    );
    // A QR that nobody paid may be answered 404 (no payment) rather than an empty list.
    if (answer.status === 404 && answer.body?.code === 'not-found') return [];
    const payments = answer.body?.payments;
    if (answer.status !== 200 || !Array.isArray(payments))
      throw failureOf(this.name, 'payment_history', answer);
    return payments.filter((p): p is Record<string, unknown> => typeof p === 'object' && p !== null);
  }

  /**
   * A live merchant's UPI id under Paygate's Setu merchant: asked for with `/vpas/availability`,
   * then registered (`POST /vpas`); routable only when Setu answers it active. A UPI id Setu holds
   * already is checked by its id instead (`GET /vpas/{id}`): it must be this UPI id, and active.
   */
  async register(vpa: string, opts: { referenceId: string; heldId?: string }): Promise<VpaRegistration> {
    if (opts.heldId !== undefined) {
      const held = await this.call(
        'vpa_read',
        'GET',
        `/api/v1/merchants/vpas/${encodeURIComponent(opts.heldId)}`,
      );
      if (held.status === 404 || held.status === 400)
        return { routable: false, reason: `Setu holds no UPI id under ${opts.heldId}` };
      if (held.status !== 200 || !held.body) throw failureOf(this.name, 'vpa_read', held);
      return activeVpa(held.body, vpa, `the UPI id Setu holds under ${opts.heldId}`);
    }
    const free = await this.call('vpa_availability', 'POST', '/api/v1/merchants/vpas/availability', { vpa });
    if (free.status === 400) return { routable: false, reason: `Setu refuses it (${providerCode(free)})` };
    if (free.status !== 200 || !free.body) throw failureOf(this.name, 'vpa_availability', free);
    if (free.body.availabilityStatus !== 'available')
      return {
        routable: false,
        reason:
          'Setu says it is not available; if Setu already holds it for Paygate, give its id with --setu-vpa-id',
      };
    const made = await this.call('vpa_register', 'POST', '/api/v1/merchants/vpas', {
      vpa,
      referenceId: opts.referenceId,
    });
    if (made.status === 400)
      return { routable: false, reason: `Setu refused to register it (${providerCode(made)})` };
    if ((made.status !== 200 && made.status !== 201) || !made.body)
      throw failureOf(this.name, 'vpa_register', made);
    return activeVpa(made.body, vpa, 'the UPI id Setu registered');
  }

  async submitPayout(): Promise<PayoutState> {
    throw new ChannelFailure('rejected', this.name, 'payouts_not_supported', 'setu carries pay-ins only');
  }

  async readPayout(): Promise<PayoutState | null> {
    return null;
  }

  /** First look after CHANNEL_POLL_MS; then after as long again as the pay-in's age (capped at an hour). */
  pollDelayMs(_kind: TransactionKind, ageMs: number): number {
    return pollDelay(this.options.pollMs, ageMs);
  }

  /**
   * Tries the settings as Setu's document says they should answer: a login that returns a token,
   * then a read of a QR that does not exist, which Setu answers 404 with its own error body. Any
   * other answer (a 404 page of a wrong host or path, a 200, a refusal) fails, naming the host.
   */
  async check(): Promise<string> {
    this.token = null;
    const host = new URL(this.settings.baseUrl).host;
    await this.bearer();
    const answer = await this.call('check', 'GET', '/api/v1/merchants/dqr/paygate-check-unknown-qr');
    const body = answer.body ?? {};
    if (answer.status !== 404 || typeof body.code !== 'string' || typeof body.detail !== 'string')
      throw new ChannelFailure(
        answer.status === 401 || answer.status === 403 ? 'unavailable' : 'rejected',
        this.name,
        providerCode(answer),
        `setu at ${host}: a read of an unknown QR answered HTTP ${answer.status}${
          typeof body.code === 'string' ? ` ${providerCode(answer)}` : " without Setu's error body"
        }, not Setu's 404 (check SETU_BASE_URL and SETU_MERCHANT_ID)`,
      );
    return `login at ${new URL(this.settings.authUrl).host} ok; ${host} answers for merchant ${this.settings.merchantId}`;
  }
}

/** A Setu UPI id resource that is `vpa` and active, or why not. */
function activeVpa(body: Record<string, unknown>, vpa: string, what: string): VpaRegistration {
  const id = typeof body.id === 'string' ? body.id : '';
  const held = typeof body.vpa === 'string' ? body.vpa.toLowerCase() : '';
  if (held !== vpa.toLowerCase())
    return { routable: false, reason: `${what} is ${held || 'unnamed'}, not ${vpa}` };
  if (body.status !== 'active' || !id)
    return {
      routable: false,
      reason: `${what} is ${String(body.status ?? 'of unknown status')}, not active`,
    };
  return { routable: true, id };
}

/** A payment the customer started that the bank has not finished: the pay-in waits for it. */
function inProgress(payment: Record<string, unknown> | null): boolean {
  return payment?.status === 'initiated' || payment?.status === 'pending';
}

/** A Setu payment (read, or a notification's) as an outcome: SUCCESS with its rrn, or null while not paid. */
export function setuPaymentOutcome(payment: Record<string, unknown>, qrId: string): FinalOutcome | null {
  if (payment.status !== 'success') return null;
  const rrn = typeof payment.rrn === 'string' && RRN.test(payment.rrn) ? payment.rrn : '';
  const amount =
    typeof payment.amount === 'number' && Number.isSafeInteger(payment.amount) ? payment.amount : -1;
  return {
    status: 'SUCCESS',
    utr: rrn,
    channelTxnId: qrId,
    amount,
    ...(amount < 0 && { amountText: String(JSON.stringify(payment.amount) ?? 'nothing').slice(0, 40) }),
    reference: typeof payment.id === 'string' ? payment.id : '',
    // What a refund of the pay-in names: the payment's id, and its txnId for reading its refunds.
    ...(typeof payment.id === 'string' &&
      payment.id !== '' && {
        payment: { id: payment.id, txnId: typeof payment.txnId === 'string' ? payment.txnId : '' },
      }),
  };
}

/** Asks after CHANNEL_POLL_MS, then after as long again as the transaction's age: 1, 2, 4 … minutes, at most an hour apart. */
export function pollDelay(pollMs: number, ageMs: number): number {
  return ageMs <= 0 ? pollMs : Math.max(pollMs, Math.min(ageMs, 3_600_000));
}
