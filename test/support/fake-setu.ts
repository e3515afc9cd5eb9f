/**
 * A stateful fake of Setu UMAP, written from its OpenAPI document and CHANNELS.md: token login,
 * single-use dynamic QRs (create, read, expire), payments (read, a QR's last one and its history),
 * UPI ids (availability, registration, read), refunds (create, read by id and by payment: pending,
 * success with a crn, or NPCI's refusal; reads that lag behind), and the signed notifications Setu sends, signed here
 * with the fake's own code (CHANNELS.md's formula), never with Paygate's. A test scripts what it
 * does: faults per operation (a status, a slow answer, a reset), an expired token, and payments
 * with their events in any order, duplicated, late, in progress or with another amount.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/** Setu's notification signature as CHANNELS.md states it: base64 of HMAC-SHA256(raw body, webhook secret). */
export function fakeSetuSignature(raw: string, secret: string): string {
  return createHmac('sha256', secret).update(raw, 'utf8').digest('base64');
}

/**
 * A scripted answer: a status instead of the work (`status`), a slow answer (`delayMs`), a reset
 * connection, or the work done and then a status instead of its answer (`afterStatus`: a 5xx from
 * a gateway in front of a backend that acted).
 */
export type Fault =
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { delayMs: number }
  | { afterStatus: number }
  | 'reset';

export interface FakeQr {
  id: string;
  amount: number;
  merchantVpa: string;
  referenceId: string;
  refId: string;
  expiryDate: string;
  transactionNote: string;
  status: 'active' | 'paid' | 'closed';
  createdAt: string;
  closedAt?: string;
  /** The payment that paid it. */
  payment?: FakePayment;
  /** Every payment attempt made on it, oldest first. */
  attempts: FakePayment[];
}

export interface FakeVpa {
  id: string;
  vpa: string;
  referenceId: string;
  status: 'active' | 'inactive';
  createdAt: string;
}

export interface FakePayment {
  id: string;
  qrId: string;
  amount: number;
  status: 'initiated' | 'pending' | 'success' | 'failed';
  rrn: string;
  txnId: string;
  customerVpa: string;
  txnTs: string;
}

export interface FakeRefund {
  id: string;
  paymentId: string;
  referenceId: string;
  amount: number;
  /** What it ends as, once `settleAt` has passed ('pending' stays pending). */
  ending: 'success' | 'failed' | 'pending';
  /** NPCI's refusal, for a failed one. */
  reason?: { errCode: string; npciErrCode: string; npciErrDesc: string };
  crn: string;
  createdAt: string;
  /** When reads start to show it (epoch ms): a read before then does not find it. */
  visibleAt: number;
  /** When it is final (epoch ms); before then it reads `pending`. */
  settleAt: number;
}

/** NPCI's refusal of a refund to a payment whose bank takes no online refunds (the document's example). */
export const REFUND_DISABLED = {
  errCode: 'refund-disabled',
  npciErrCode: 'R21',
  npciErrDesc: 'ONLINE REFUND IS DISABLED IN UPI',
};

export interface SetuRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** When it arrived (epoch ms). */
  at: number;
}

const MERCHANT_ID = '01HZPAYGATEFAKEMERCHANT0001';

export class FakeSetu {
  readonly clientId = 'setu-client-id';
  readonly clientSecret = `setu-secret-${randomBytes(8).toString('hex')}`;
  readonly webhookSecret = `setu-webhook-${randomBytes(8).toString('hex')}`;
  readonly merchantId = MERCHANT_ID;
  readonly qrs = new Map<string, FakeQr>();
  readonly requests: SetuRequest[] = [];
  /** Faults to answer with, per operation, in order (login, dqr_create, dqr_read, dqr_expire, payment_last, …: `operationOf`). */
  readonly faults = new Map<string, Fault[]>();
  /** UPI ids registered under this Setu merchant, by id. */
  readonly vpas = new Map<string, FakeVpa>();
  /** UPI ids held elsewhere (another Setu merchant): not available, not registrable here. */
  readonly takenVpas = new Set<string>();
  logins = 0;
  /** How long each answer takes (ms). */
  latencyMs = 0;
  /**
   * Refunds by Setu's id. A repeated `referenceId` is a new refund (as a real provider's idempotency
   * could not be relied on), so "one refund per refund_id" is Paygate's doing, counted on the POSTs.
   */
  readonly refunds = new Map<string, FakeRefund>();
  /** Payments (by id) whose customer's bank refuses online refunds: their refunds fail with R21 at once. */
  readonly refundDisabled = new Set<string>();
  /** How new refunds end: 'pending' keeps them open until a test changes them. */
  refundEnding: 'success' | 'failed' | 'pending' = 'success';
  /** NPCI's reason for refunds that end `failed` (other than refund-disabled payments'). */
  refundReason = { errCode: 'refund-failed', npciErrCode: 'U28', npciErrDesc: 'PSP NOT AVAILABLE' };
  /** How long after creation a refund stays pending before it shows its ending. */
  refundSettleMs = 0;
  /** How long after creation reads do not find a refund (a provider's read replica lagging). */
  refundReadLagMs = 0;
  /** Faults chosen at random per call (soak tests), after the scripted ones. */
  chaos: ((operation: string) => Fault | null) | null = null;
  /** Where notifications go (Paygate's endpoint). */
  notifyUrl = '';
  private readonly tokens = new Set<string>();
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** The settings Paygate needs to use this fake (through `base`, e.g. a spec proxy, when given). */
  env(base = this.url): Record<string, string> {
    return {
      SETU_BASE_URL: base,
      SETU_AUTH_URL: this.url,
      SETU_CLIENT_ID: this.clientId,
      SETU_CLIENT_SECRET: this.clientSecret,
      SETU_MERCHANT_ID: this.merchantId,
      SETU_WEBHOOK_SECRET: this.webhookSecret,
    };
  }

  fail(operation: string, ...faults: Fault[]): void {
    this.faults.set(operation, [...(this.faults.get(operation) ?? []), ...faults]);
  }

  /** Every token given so far stops working (as after 300 s): the next call is 401. */
  expireTokens(): void {
    this.tokens.clear();
  }

  count(operation: string): number {
    return this.requests.filter((r) => operationOf(r.method, r.path) === operation).length;
  }

  qrFor(paymentId: string): FakeQr | undefined {
    return [...this.qrs.values()].find((q) => q.referenceId === paymentId);
  }

  /**
   * A customer pays a QR: the payment is recorded (`success` unless told; `pending` is one the bank
   * has not finished, see `finish`) and, unless `notify` is false, its events are sent in `order`
   * (default initiated, then the final one; initiated alone for a pending one).
   */
  async pay(
    paymentId: string,
    opts: {
      amount?: number;
      status?: 'success' | 'failed' | 'pending';
      notify?: boolean;
      order?: string[];
      keepActive?: boolean;
    } = {},
  ): Promise<FakePayment> {
    const qr = this.qrFor(paymentId);
    if (!qr) throw new Error(`no QR for ${paymentId}`);
    const status = opts.status ?? 'success';
    const payment: FakePayment = {
      id: ulid(),
      qrId: qr.id,
      amount: opts.amount ?? qr.amount,
      status,
      rrn: String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999)),
      txnId: `SET${randomBytes(12).toString('hex')}`,
      customerVpa: 'customer@okaxis',
      txnTs: new Date().toISOString(),
    };
    qr.attempts.push(payment);
    if (status === 'success') this.paid(qr, payment, opts.keepActive);
    if (opts.notify !== false) {
      const final = status === 'pending' ? [] : [`payment.${status}`];
      for (const type of opts.order ?? ['payment.initiated', ...final]) await this.notify(type, qr, payment);
    }
    return payment;
  }

  /** The bank finishes a payment in progress; its final event is sent unless `notify` is false. */
  async finish(payment: FakePayment, status: 'success' | 'failed', notify = true): Promise<void> {
    const qr = this.qrs.get(payment.qrId)!;
    payment.status = status;
    if (status === 'success') this.paid(qr, payment);
    if (notify) await this.notify(`payment.${status}`, qr, payment);
  }

  private paid(qr: FakeQr, payment: FakePayment, keepActive = false): void {
    qr.payment = payment;
    if (!keepActive) qr.status = 'paid';
  }

  /** A UPI id registered under this merchant already (as an operator did in Setu's console). */
  holdVpa(vpa: string, status: 'active' | 'inactive' = 'active'): FakeVpa {
    const held: FakeVpa = {
      id: ulid(),
      vpa,
      referenceId: 'console',
      status,
      createdAt: new Date().toISOString(),
    };
    this.vpas.set(held.id, held);
    return held;
  }

  /** The notification body Setu would send for a payment event. */
  event(type: string, qr: FakeQr, p: FakePayment): Record<string, unknown> {
    return {
      eventId: randomUUID(),
      eventType: type,
      id: p.id,
      status: type.slice('payment.'.length),
      merchantReferenceId: qr.referenceId,
      productInstanceId: qr.id,
      productInstanceType: 'pay_single',
      txnId: p.txnId,
      rrn: p.rrn,
      amount: p.amount,
      currency: 'INR',
      customerVpa: p.customerVpa,
      merchantVpa: qr.merchantVpa,
      txnTs: p.txnTs,
    };
  }

  /** Sends one signed notification (or the given body, or a bad signature). Answers the HTTP status. */
  async notify(
    type: string,
    qr: FakeQr,
    p: FakePayment,
    opts: { body?: Record<string, unknown>; signature?: string } = {},
  ): Promise<number> {
    return this.send(JSON.stringify(opts.body ?? this.event(type, qr, p)), opts.signature);
  }

  async send(raw: string, signature?: string): Promise<number> {
    const res = await fetch(this.notifyUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-setu-signature': signature ?? fakeSetuSignature(raw, this.webhookSecret),
      },
      body: raw,
    });
    await res.arrayBuffer();
    return res.status;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    const method = req.method ?? 'GET';
    this.requests.push({ method, path, headers: req.headers, body, at: Date.now() });
    const operation = operationOf(method, path);
    const fault = this.faults.get(operation)?.shift() ?? this.chaos?.(operation) ?? undefined;
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs));
    const after = fault && typeof fault === 'object' && 'afterStatus' in fault ? fault.afterStatus : null;
    const reply = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      const [code, answer] =
        after === null ? [status, json] : [after, { code: 'internal-error', detail: 'injected' }];
      res.writeHead(code, { 'content-type': 'application/json', requestId: randomUUID(), ...headers });
      res.end(JSON.stringify(answer));
    };
    if (fault && 'status' in fault)
      return reply(
        fault.status,
        fault.body ?? { code: `fault-${fault.status}`, detail: 'injected' },
        fault.headers,
      );

    if (operation === 'login') {
      this.logins++;
      if (
        req.headers.client !== 'bridge' ||
        body?.clientID !== this.clientId ||
        body?.secret !== this.clientSecret
      )
        return reply(401, { code: 'invalid-credentials', detail: 'bad client id or secret' });
      const token = randomBytes(24).toString('base64url');
      this.tokens.add(token);
      return reply(200, { access_token: token, expiresIn: 300 });
    }
    const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    if (!token || !this.tokens.has(token))
      return reply(401, { code: 'unauthorized', detail: 'token expired or invalid' });
    if (req.headers.merchantid !== this.merchantId)
      return reply(403, { code: 'forbidden', detail: 'unknown merchant' });

    if (operation === 'dqr_create') {
      if (!body || typeof body.merchantVpa !== 'string' || !/^[a-z0-9.-]*@[a-zA-Z]*$/.test(body.merchantVpa))
        return reply(400, { code: 'invalid-merchant-vpa', detail: 'merchantVpa is not valid' });
      if (!Number.isInteger(body.amount) || body.amount < 100)
        return reply(400, { code: 'invalid-amount', detail: 'amount must be at least 100 paise' });
      const refId = String(1_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e15)));
      const qr: FakeQr = {
        id: ulid(),
        amount: body.amount,
        merchantVpa: body.merchantVpa,
        referenceId: String(body.referenceId ?? ''),
        refId,
        expiryDate: String(body.expiryDate ?? ''),
        transactionNote: String(body.transactionNote ?? ''),
        status: 'active',
        createdAt: new Date().toISOString(),
        attempts: [],
      };
      this.qrs.set(qr.id, qr);
      return reply(201, this.qrView(qr));
    }
    const qrMatch = /^\/api\/v1\/merchants\/dqr\/([^/]+)(\/expire)?$/.exec(path);
    if (qrMatch) {
      const qr = this.qrs.get(decodeURIComponent(qrMatch[1]!));
      if (!qr) return reply(404, { code: 'not-found', detail: 'no such QR' });
      if (qrMatch[2]) {
        if (qr.status === 'paid') return reply(400, { code: 'qr-already-paid', detail: 'the QR was paid' });
        if (qr.status === 'active') {
          qr.status = 'closed';
          qr.closedAt = new Date().toISOString();
        }
      }
      return reply(200, this.qrView(qr, !qrMatch[2]));
    }
    const instance = /^\/api\/v1\/merchants\/payments\/product-instances\/([^/]+)\/(last|history)$/.exec(
      path,
    );
    if (instance) {
      const qr = this.qrs.get(decodeURIComponent(instance[1]!));
      const attempts = qr?.attempts ?? [];
      if (instance[2] === 'history')
        return reply(200, { payments: attempts.map((p) => this.paymentView(p)) });
      const last = attempts.at(-1);
      if (!last) return reply(404, { code: 'not-found', detail: 'no payment for this product instance' });
      return reply(200, this.paymentView(last));
    }
    const payMatch = /^\/api\/v1\/merchants\/payments\/([^/]+)$/.exec(path);
    if (payMatch) {
      const p = [...this.qrs.values()]
        .flatMap((q) => q.attempts)
        .find((x) => x.id === decodeURIComponent(payMatch[1]!));
      if (!p) return reply(404, { code: 'not-found', detail: 'no such payment' });
      return reply(200, this.paymentView(p));
    }
    if (operation.startsWith('refund_')) return this.refundCall(operation, path, body, reply);
    if (operation === 'vpa_availability') {
      const vpa = String(body?.vpa ?? '');
      if (!VPA.test(vpa)) return reply(400, { code: 'invalid-vpa', detail: 'vpa is not valid' });
      const taken = this.takenVpas.has(vpa) || [...this.vpas.values()].some((v) => v.vpa === vpa);
      return reply(200, {
        availabilityStatus: taken ? 'not_available' : 'available',
        merchantId: this.merchantId,
        vpa,
      });
    }
    if (operation === 'vpa_register') {
      const vpa = String(body?.vpa ?? '');
      if (!VPA.test(vpa)) return reply(400, { code: 'invalid-vpa', detail: 'vpa is not valid' });
      if (this.takenVpas.has(vpa) || [...this.vpas.values()].some((v) => v.vpa === vpa))
        return reply(400, { code: 'vpa-not-available', detail: 'the vpa is not available' });
      const created: FakeVpa = {
        id: ulid(),
        vpa,
        referenceId: String(body?.referenceId ?? ''),
        status: 'active',
        createdAt: new Date().toISOString(),
      };
      this.vpas.set(created.id, created);
      return reply(201, this.vpaView(created));
    }
    const vpaMatch = /^\/api\/v1\/merchants\/vpas\/([^/]+)$/.exec(path);
    if (vpaMatch && method === 'GET') {
      const held = this.vpas.get(decodeURIComponent(vpaMatch[1]!));
      if (!held) return reply(404, { code: 'not-found', detail: 'no such vpa' });
      return reply(200, this.vpaView(held));
    }
    // A path Setu does not serve gets its HTTP server's bare answer, not Setu's error body.
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('404 page not found\n');
  }

  /** Every payment made on any QR. */
  payments(): FakePayment[] {
    return [...this.qrs.values()].flatMap((q) => q.attempts);
  }

  /** The refunds made under a referenceId (Paygate's refund_id), oldest first. */
  refundsFor(referenceId: string): FakeRefund[] {
    return [...this.refunds.values()].filter((r) => r.referenceId === referenceId);
  }

  /** Every POST of a refund with this referenceId that reached the fake (whatever it answered). */
  refundPosts(referenceId: string): SetuRequest[] {
    return this.requests.filter(
      (r) => operationOf(r.method, r.path) === 'refund_create' && r.body?.referenceId === referenceId,
    );
  }

  /** Sends a signed notification that names a refund (Setu documents no refund event; this is one it might send). */
  async notifyRefund(refund: FakeRefund, type = `refund.${this.refundStatus(refund)}`): Promise<number> {
    return this.send(
      JSON.stringify({
        eventId: randomUUID(),
        eventType: type,
        id: refund.id,
        referenceId: refund.referenceId,
        paymentId: refund.paymentId,
        status: this.refundStatus(refund),
        amount: refund.amount,
      }),
    );
  }

  /**
   * Sends a signed dispute notification of a payment, in the shape of Setu's disputes page
   * (SetuHQ/docs `content/payments/umap/notifications/disputes.mdx`): `dispute.created` with
   * `status` "created"; `won` and `lost` as `dispute.won` / `dispute.lost` (the names assumed in
   * specs/CHANNELS.md). Answers the HTTP status.
   */
  async notifyDispute(
    p: FakePayment,
    d: { id: string; amount: number; status?: 'created' | 'won' | 'lost' | 'in-review' },
  ): Promise<number> {
    const status = d.status ?? 'created';
    return this.send(
      JSON.stringify({
        eventId: randomUUID(),
        eventTs: new Date().toISOString(),
        eventType: `dispute.${status}`,
        resource: 'dispute',
        status,
        paymentId: p.id,
        orgTxnId: p.txnId,
        merchantId: this.merchantId,
        id: d.id,
        txnId: `SET${randomBytes(12).toString('hex')}`,
        rrn: p.rrn,
        amount: d.amount,
        currency: 'INR',
        reason: {},
      }),
    );
  }

  refundStatus(r: FakeRefund, now = Date.now()): 'pending' | 'success' | 'failed' {
    return now < r.settleAt ? 'pending' : r.ending;
  }

  private refundCall(
    operation: string,
    path: string,
    body: any,
    reply: (status: number, json: unknown) => void,
  ): void {
    const now = Date.now();
    if (operation === 'refund_create') {
      if (!body || typeof body.paymentId !== 'string' || !Number.isInteger(body.amount) || body.amount <= 0)
        return reply(400, { code: 'bad-request', detail: 'paymentId and a positive amount are required' });
      const payment = this.payments().find((p) => p.id === body.paymentId && p.status === 'success');
      if (!payment) return reply(404, { code: 'not-found', detail: 'no successful payment with this id' });
      const refunded = [...this.refunds.values()]
        .filter((r) => r.paymentId === payment.id && this.refundStatus(r, now) !== 'failed')
        .reduce((sum, r) => sum + r.amount, 0);
      if (refunded + body.amount > payment.amount)
        return reply(400, { code: 'refund-amount-exceeded', detail: 'refunds exceed the payment' });
      const disabled = this.refundDisabled.has(payment.id);
      const refund: FakeRefund = {
        id: ulid(),
        paymentId: payment.id,
        referenceId: String(body.referenceId ?? ''),
        amount: body.amount,
        ending: disabled ? 'failed' : this.refundEnding,
        reason: disabled ? REFUND_DISABLED : this.refundReason,
        crn: String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999)),
        createdAt: new Date(now).toISOString(),
        visibleAt: now + this.refundReadLagMs,
        // NPCI refuses a refund-disabled payment's refund at once.
        settleAt: disabled ? now : now + this.refundSettleMs,
      };
      this.refunds.set(refund.id, refund);
      return reply(201, this.refundView(refund, now));
    }
    if (operation === 'refund_list') {
      const txnId = decodeURIComponent(/\/refunds\/([^/]+)\/payment$/.exec(path)![1]!);
      const payment = this.payments().find((p) => p.txnId === txnId);
      if (!payment) return reply(404, { code: 'not-found', detail: 'no payment with this txn id' });
      const refunds = [...this.refunds.values()].filter(
        (r) => r.paymentId === payment.id && now >= r.visibleAt,
      );
      return reply(200, {
        paymentTxnId: txnId,
        refunds: refunds.map((r) => ({ ...this.refundView(r, now), requestId: randomUUID() })),
      });
    }
    const id = decodeURIComponent(/\/refunds\/([^/]+)$/.exec(path)![1]!);
    const refund = this.refunds.get(id);
    if (!refund || now < refund.visibleAt) return reply(404, { code: 'not-found', detail: 'no such refund' });
    return reply(200, this.refundView(refund, now));
  }

  private refundView(r: FakeRefund, now: number): Record<string, unknown> {
    const status = this.refundStatus(r, now);
    return {
      id: r.id,
      paymentId: r.paymentId,
      referenceId: r.referenceId,
      amount: r.amount,
      type: 'online',
      status,
      createdAt: r.createdAt,
      ...(status === 'success' && { crn: r.crn }),
      ...(status === 'failed' && { reason: { adjCode: '501', adjFlag: 'RRC', ...r.reason } }),
    };
  }

  private paymentView(p: FakePayment): Record<string, unknown> {
    const qr = this.qrs.get(p.qrId)!;
    return {
      id: p.id,
      amount: p.amount,
      currency: 'INR',
      status: p.status,
      rrn: p.rrn,
      txnId: p.txnId,
      customerVpa: p.customerVpa,
      merchantVpa: qr.merchantVpa,
      merchantId: this.merchantId,
      productInstanceId: qr.id,
      referenceId: qr.referenceId,
      refId: qr.refId,
      txnTs: p.txnTs,
      createdAt: p.txnTs,
    };
  }

  private vpaView(v: FakeVpa): Record<string, unknown> {
    const view: Record<string, unknown> = {
      id: v.id,
      vpa: v.vpa,
      merchantId: this.merchantId,
      status: v.status,
      verificationStatus: v.status === 'active' ? 'verified' : 'failed',
      createdAt: v.createdAt,
    };
    if (v.referenceId) view.referenceId = v.referenceId;
    return view;
  }

  private qrView(qr: FakeQr, withPayment = false): Record<string, unknown> {
    const am = (qr.amount / 100).toFixed(2);
    const view: Record<string, unknown> = {
      id: qr.id,
      amount: qr.amount,
      merchantId: this.merchantId,
      merchantVpa: qr.merchantVpa,
      referenceId: qr.referenceId,
      refId: qr.refId,
      expiryDate: qr.expiryDate,
      createdAt: qr.createdAt,
      transactionNote: qr.transactionNote,
      status: qr.status,
      qrCode: '',
      shortLink: `upipay.setu.co/${qr.id.slice(-12)}`,
      intentLink: `upi://pay?pa=${qr.merchantVpa}&pn=Paygate%20Merchant&am=${am}&tr=${qr.refId}&tn=${encodeURIComponent(qr.transactionNote)}&cu=INR&mc=5411`,
    };
    if (qr.closedAt) view.closedAt = qr.closedAt;
    if (withPayment && qr.payment)
      view.paymentDetails = {
        customerAccountType: 'SAVINGS',
        customerVpa: qr.payment.customerVpa,
        paymentId: qr.payment.id,
        paymentStatus: qr.payment.status,
        rrn: qr.payment.rrn,
        txnId: qr.payment.txnId,
        txnTs: qr.payment.txnTs,
      };
    return view;
  }
}

export function operationOf(method: string, path: string): string {
  if (path === '/v1/users/login') return 'login';
  if (method === 'POST' && path === '/api/v1/merchants/dqr') return 'dqr_create';
  if (method === 'PUT' && /\/dqr\/[^/]+\/expire$/.test(path)) return 'dqr_expire';
  if (method === 'GET' && /\/dqr\/[^/]+$/.test(path)) return 'dqr_read';
  if (method === 'GET' && /\/product-instances\/[^/]+\/last$/.test(path)) return 'payment_last';
  if (method === 'GET' && /\/product-instances\/[^/]+\/history$/.test(path)) return 'payment_history';
  if (method === 'GET' && /\/payments\/[^/]+$/.test(path)) return 'payment_read';
  if (method === 'POST' && path === '/api/v1/merchants/vpas/availability') return 'vpa_availability';
  if (method === 'POST' && path === '/api/v1/merchants/vpas') return 'vpa_register';
  if (method === 'GET' && /\/vpas\/[^/]+$/.test(path)) return 'vpa_read';
  if (method === 'POST' && path === '/api/v1/merchants/refunds') return 'refund_create';
  if (method === 'GET' && /^\/api\/v1\/merchants\/refunds\/[^/]+\/payment$/.test(path)) return 'refund_list';
  if (method === 'GET' && /^\/api\/v1\/merchants\/refunds\/[^/]+$/.test(path)) return 'refund_read';
  return 'other';
}

/** Setu's UPI id pattern for registration, from its document. */
const VPA = /^[a-z0-9.-]*@[a-z]*$/;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID-shaped id, as Setu's ids are. */
function ulid(): string {
  const bytes = randomBytes(26);
  return Array.from(bytes, (b) => CROCKFORD[b % 32]).join('');
}
