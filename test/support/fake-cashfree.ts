/**
 * A stateful fake of Cashfree Payouts (2024-01-01), written from its OpenAPI document and
 * CHANNELS.md: transfers created and read by `transfer_id`, and the signed V2 webhooks Cashfree
 * sends. A test scripts it: how long each answer takes, how a transfer ends (SUCCESS, FAILED,
 * REJECTED, SUCCESS then REVERSED, or never), whether webhooks come, and faults per operation.
 * Modes: the account refused (401/403), Cashfree's 2FA (`require2fa`: it holds the private key and
 * refuses a missing, wrong or 5-minute-old `X-Cf-Signature`), reads that lag behind writes, and
 * duplicate transfer_ids taken as new transfers (so one transfer per payout is Paygate's doing).
 * It signs webhooks with its own code, as Cashfree documents the formula.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants, createHmac, generateKeyPairSync, privateDecrypt, randomBytes } from 'node:crypto';
import { Pool } from 'undici';
import type { Fault } from './fake-setu.ts';

export interface FakeTransfer {
  transfer_id: string;
  cf_transfer_id: string;
  status: string;
  status_code: string;
  /** Cashfree's words for the status (its `status_description`), when the fake has some to say. */
  status_description?: string;
  transfer_amount: number;
  transfer_mode: string;
  transfer_utr: string;
  beneficiary_name: string;
  bank_account_number: string;
  bank_ifsc: string;
  added_on: string;
  updated_on: string;
}

/**
 * A fault to answer with; a 429's `headers` carry its `Retry-After` or `x-ratelimit-retry`.
 * `arriveAfterMs`: the request takes effect only this long after it came (it waited in a queue on
 * the provider's side, as a connection does in a full accept queue), whether or not its caller
 * still waits for the answer.
 */
export type CashfreeFault =
  Fault | { status: number; body?: unknown; headers?: Record<string, string> } | { arriveAfterMs: number };

export type Ending = 'SUCCESS' | 'FAILED' | 'REJECTED' | 'REVERSED' | 'never';

export interface CashfreeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: any;
  at: number;
  /** The HTTP status it was answered (undefined: no answer, a reset). */
  answered?: number;
}

export class FakeCashfree {
  readonly clientId = 'cf-client-id';
  readonly clientSecret = `cf-secret-${randomBytes(8).toString('hex')}`;
  readonly transfers = new Map<string, FakeTransfer>();
  readonly requests: CashfreeRequest[] = [];
  readonly faults = new Map<string, CashfreeFault[]>();
  /** Requests held by an `arriveAfterMs` fault that have taken effect. */
  lateArrivals = 0;
  /** Every POST /transfers that created a transfer, by transfer_id (to prove one transfer per payout). */
  readonly created = new Map<string, number>();
  /** How each new transfer ends, and after how long (ms). */
  ending: Ending = 'SUCCESS';
  /** The `status_code` a transfer that ends FAILED or REJECTED carries (its status when null). */
  endingCode: string | null = null;
  /** The `status_description` a transfer that ends FAILED or REJECTED carries, when set. */
  endingDescription: string | null = null;
  endAfterMs = 0;
  /** How long each answer takes (ms). */
  latencyMs = 0;
  /** Whether webhooks are sent when a transfer ends. */
  webhooks = true;
  /** Answer POST /transfers with the final status at once, when the transfer ends at once. */
  syncAnswer = false;
  notifyUrl = '';
  /** Every call refused as the account's: 401 (a wrong key) or 403 (IP not whitelisted, no 2FA). */
  accountRefusal: 401 | 403 | null = null;
  /** A read finds a new transfer only this long after it was created (ms). */
  readLagMs = 0;
  /** A POST with a transfer_id it has creates another transfer (pays again) instead of a 409. */
  acceptDuplicates = false;
  /** Asked for a fault for each call that has none scripted (random faults, for the soak). */
  chaos: ((operation: 'transfer_create' | 'transfer_read') => CashfreeFault | null) | null = null;
  /** Every call must carry a fresh `X-Cf-Signature` made with `publicKey`. */
  require2fa = false;
  private readonly keyPair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  /** Cashfree's public key for 2FA (PEM), which Paygate is given. */
  readonly publicKey = this.keyPair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  /** The webhook secret (Cashfree signs with the account's oldest active key, not the API secret). */
  webhookSecret = `cf-whsec-${randomBytes(8).toString('hex')}`;
  private readonly createdAt = new Map<string, number>();
  /** Webhook HTTP statuses seen, and the bodies Paygate answered, for assertions. */
  readonly webhookStatuses: number[] = [];
  readonly webhookReplies: string[] = [];
  /** Added to every transfer_amount the fake shows (rupees): a provider reporting another amount. */
  reportedAmountDelta = 0;
  private server!: http.Server;
  url = '';
  private pendingWebhooks = new Set<Promise<unknown>>();
  /** Keep-alive connections to Paygate for webhooks (as a provider's sender keeps them). */
  private notifyPool: { origin: string; pool: Pool } | null = null;

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.pendingWebhooks]);
    await this.notifyPool?.pool.close().catch(() => {});
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  env(base = this.url): Record<string, string> {
    return {
      CASHFREE_BASE_URL: base,
      CASHFREE_CLIENT_ID: this.clientId,
      CASHFREE_CLIENT_SECRET: this.clientSecret,
      CASHFREE_WEBHOOK_SECRET: this.webhookSecret,
      CASHFREE_PUBLIC_KEY: this.publicKey,
    };
  }

  /** Sends the webhooks of `types` for a transfer, in that order, setting its status as each says. */
  async events(transferId: string, types: string[]): Promise<number[]> {
    const t = this.transfers.get(transferId);
    if (!t) throw new Error(`no transfer ${transferId}`);
    const statuses: number[] = [];
    for (const type of types) {
      const status = type.replace(/^TRANSFER_/, '');
      t.status = status === 'ACKNOWLEDGED' ? 'SUCCESS' : status;
      t.status_code = status;
      t.updated_on = stamp();
      if ((status === 'SUCCESS' || status === 'ACKNOWLEDGED') && !t.transfer_utr)
        t.transfer_utr = String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999));
      statuses.push(await this.webhook(type, t));
    }
    return statuses;
  }

  /** Why a call is refused as the account's, or null: the 2FA signature is `clientId.unixSeconds`, RSA-OAEP (SHA-1). */
  private accountProblem(headers: http.IncomingHttpHeaders): string | null {
    if (this.accountRefusal === 401) return 'authentication_failed';
    if (this.accountRefusal === 403) return 'ip_not_whitelisted';
    if (!this.require2fa) return null;
    const given = headers['x-cf-signature'];
    if (typeof given !== 'string') return 'signature_missing';
    let text: string;
    try {
      text = privateDecrypt(
        { key: this.keyPair.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
        Buffer.from(given, 'base64'),
      ).toString('utf8');
    } catch {
      return 'signature_invalid';
    }
    const [id, seconds] = text.split('.');
    if (id !== this.clientId || !/^\d+$/.test(seconds ?? '')) return 'signature_invalid';
    if (Math.abs(Date.now() / 1000 - Number(seconds)) >= 300) return 'signature_expired';
    return null;
  }

  fail(operation: 'transfer_create' | 'transfer_read', ...faults: CashfreeFault[]): void {
    this.faults.set(operation, [...(this.faults.get(operation) ?? []), ...faults]);
  }

  count(operation: 'transfer_create' | 'transfer_read'): number {
    return this.requests.filter(
      (r) => (r.method === 'POST' ? 'transfer_create' : 'transfer_read') === operation,
    ).length;
  }

  /**
   * Ends a transfer now (and sends its webhook unless webhooks are off); a FAILED or REJECTED one
   * carries `code` as its `status_code` (else `endingCode`, else its status).
   */
  async end(transferId: string, status: Exclude<Ending, 'never'>, code?: string): Promise<void> {
    const t = this.transfers.get(transferId);
    if (!t) throw new Error(`no transfer ${transferId}`);
    if (status === 'REVERSED' && t.status !== 'SUCCESS') await this.end(transferId, 'SUCCESS');
    t.status = status;
    t.status_code = status === 'SUCCESS' ? 'COMPLETED' : this.codeOf(status, code);
    if (status === 'FAILED' || status === 'REJECTED') t.status_description = this.endingDescription ?? '';
    t.updated_on = stamp();
    if (status === 'SUCCESS')
      t.transfer_utr = String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999));
    if (this.webhooks) await this.webhook(`TRANSFER_${status}`, t);
  }

  /** The V2 webhook body for a transfer event. */
  webhookBody(type: string, t: FakeTransfer): Record<string, unknown> {
    return {
      type,
      event_time: stamp(),
      data: {
        transfer_id: t.transfer_id,
        cf_transfer_id: t.cf_transfer_id,
        status: t.status,
        status_code: t.status_code,
        status_description: t.status_description || type,
        transfer_utr: t.transfer_utr,
        transfer_amount: t.transfer_amount + this.reportedAmountDelta,
        transfer_mode: t.transfer_mode,
        added_on: t.added_on,
        updated_on: t.updated_on,
      },
    };
  }

  /** Sends a signed webhook (or the given body, timestamp or signature). Answers the HTTP status. */
  async webhook(
    type: string,
    t: FakeTransfer,
    opts: { body?: string; timestamp?: string; signature?: string } = {},
  ): Promise<number> {
    const raw = opts.body ?? JSON.stringify(this.webhookBody(type, t));
    const timestamp = opts.timestamp ?? String(Date.now());
    const url = new URL(this.notifyUrl);
    if (this.notifyPool?.origin !== url.origin) {
      // Paygate moved (a restart on another port): connections to the old one are no use.
      void this.notifyPool?.pool.close().catch(() => {});
      this.notifyPool = { origin: url.origin, pool: new Pool(url.origin, { connections: 16 }) };
    }
    const sent = this.notifyPool.pool
      .request({
        method: 'POST',
        path: url.pathname,
        headers: {
          'content-type': 'application/json',
          'x-webhook-timestamp': timestamp,
          'x-webhook-signature': opts.signature ?? this.sign(timestamp, raw),
          'x-webhook-version': '2024-01-01',
        },
        body: raw,
      })
      .then(async (res) => {
        this.webhookReplies.push(await res.body.text());
        this.webhookStatuses.push(res.statusCode);
        return res.statusCode;
      });
    this.pendingWebhooks.add(sent);
    try {
      return await sent;
    } catch {
      this.webhookStatuses.push(0);
      return 0;
    } finally {
      this.pendingWebhooks.delete(sent);
    }
  }

  /** Cashfree's webhook signature, as its pages give it: base64 HMAC-SHA256 of timestamp + raw body. */
  sign(timestamp: string, raw: string, secret = this.webhookSecret): string {
    return createHmac('sha256', secret)
      .update(timestamp + raw)
      .digest('base64');
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const arrived = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    const seen: CashfreeRequest = {
      method,
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      at: arrived,
    };
    this.requests.push(seen);
    const operation = method === 'POST' ? 'transfer_create' : 'transfer_read';
    const fault: CashfreeFault | undefined =
      this.faults.get(operation)?.shift() ?? this.chaos?.(operation) ?? undefined;
    const reply = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      seen.answered = status;
      res.writeHead(status, {
        ...headers,
        'content-type': 'application/json',
        // The document declares this header with the single value 2022-09-01.
        'x-api-version': '2022-09-01',
        'x-request-id': String(req.headers['x-request-id'] ?? ''),
      });
      res.end(JSON.stringify(json));
    };
    if (fault === 'reset') {
      // A transfer the request would have created is created: the answer is what is lost.
      if (operation === 'transfer_create') this.createAndSchedule(body);
      req.socket.destroy();
      return;
    }
    if (fault && 'arriveAfterMs' in fault) {
      await new Promise((r) => setTimeout(r, fault.arriveAfterMs));
      seen.at = Date.now();
      this.lateArrivals++;
    }
    if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
    if (fault && 'delayMs' in fault) {
      const t = operation === 'transfer_create' ? this.createAndSchedule(body) : null;
      await new Promise((r) => setTimeout(r, fault.delayMs));
      if (t) return reply(200, this.view(t));
    }
    if (fault && 'status' in fault)
      return reply(
        fault.status,
        fault.body ?? { type: 'api_error', code: `fault_${fault.status}`, message: 'injected' },
        'headers' in fault ? (fault.headers as Record<string, string> | undefined) : {},
      );

    const refused = this.accountProblem(req.headers);
    if (refused)
      return reply(this.accountRefusal === 401 ? 401 : 403, {
        type: 'invalid_request_error',
        code: refused,
        message: refused === 'authentication_failed' ? 'bad credentials' : 'IP not whitelisted',
      });
    if (req.headers['x-client-id'] !== this.clientId || req.headers['x-client-secret'] !== this.clientSecret)
      return reply(401, {
        type: 'authentication_error',
        code: 'authentication_failed',
        message: 'bad credentials',
      });
    if (req.headers['x-api-version'] !== '2024-01-01')
      return reply(400, {
        type: 'invalid_request_error',
        code: 'x-api-version_invalid',
        message: 'bad version',
      });

    if (url.pathname !== '/transfers')
      return reply(404, { type: 'invalid_request_error', code: 'not_found', message: 'no route' });
    if (method === 'GET') {
      const t = this.transfers.get(url.searchParams.get('transfer_id') ?? '');
      const visible = t && Date.now() - (this.createdAt.get(t.transfer_id) ?? 0) >= this.readLagMs;
      if (!t || !visible)
        return reply(404, {
          type: 'invalid_request_error',
          code: 'transfer_id_not_found',
          message: 'transfer_id does not exist',
        });
      return reply(200, this.view(t));
    }
    const problem = invalid(body);
    if (problem) return reply(400, { type: 'invalid_request_error', code: problem, message: problem });
    if (this.acceptDuplicates) this.transfers.delete(body.transfer_id);
    // The document lists no duplicate refusal for single transfers: a 400 with a code of the fake's own.
    if (this.transfers.has(body.transfer_id))
      return reply(400, {
        type: 'invalid_request_error',
        code: 'transfer_id_already_exists',
        message: 'duplicate transfer_id',
      });
    const t = this.create(body);
    if (this.syncAnswer && this.endAfterMs === 0 && this.ending !== 'never' && this.ending !== 'REVERSED') {
      t.status = this.ending;
      t.status_code = this.codeOf(this.ending);
      if (this.ending === 'FAILED' || this.ending === 'REJECTED')
        t.status_description = this.endingDescription ?? '';
      if (this.ending === 'SUCCESS')
        t.transfer_utr = String(100_000_000_000 + Math.floor(Math.random() * 899_999_999_999));
      return reply(200, this.view(t));
    }
    reply(200, this.view(t));
    this.schedule(t);
  }

  /** The `status_code` of a transfer ending with `status`. */
  private codeOf(status: string, code?: string): string {
    return status === 'FAILED' || status === 'REJECTED' ? (code ?? this.endingCode ?? status) : status;
  }

  private createAndSchedule(body: any): FakeTransfer {
    const isNew = !this.transfers.has(body.transfer_id);
    const t = this.create(body);
    if (isNew) this.schedule(t);
    return t;
  }

  private create(body: any): FakeTransfer {
    const existing = this.transfers.get(body.transfer_id);
    if (existing) return existing;
    const t: FakeTransfer = {
      transfer_id: body.transfer_id,
      cf_transfer_id: String(10_000_000 + this.transfers.size + 1),
      status: 'RECEIVED',
      status_code: 'RECEIVED',
      status_description: '',
      transfer_amount: body.transfer_amount,
      transfer_mode: body.transfer_mode ?? 'banktransfer',
      transfer_utr: '',
      beneficiary_name: body.beneficiary_details?.beneficiary_name ?? '',
      bank_account_number:
        body.beneficiary_details?.beneficiary_instrument_details?.bank_account_number ?? '',
      bank_ifsc: body.beneficiary_details?.beneficiary_instrument_details?.bank_ifsc ?? '',
      added_on: stamp(),
      updated_on: stamp(),
    };
    this.transfers.set(t.transfer_id, t);
    this.createdAt.set(t.transfer_id, Date.now());
    this.created.set(t.transfer_id, (this.created.get(t.transfer_id) ?? 0) + 1);
    return t;
  }

  private schedule(t: FakeTransfer): void {
    const { ending, endingCode } = this;
    if (ending === 'never') return;
    const run = () => void this.end(t.transfer_id, ending, endingCode ?? undefined).catch(() => {});
    if (this.endAfterMs === 0) setImmediate(run);
    else setTimeout(run, this.endAfterMs).unref();
  }

  private view(t: FakeTransfer): Record<string, unknown> {
    return {
      transfer_id: t.transfer_id,
      cf_transfer_id: t.cf_transfer_id,
      status: t.status,
      status_code: t.status_code,
      ...(t.status_description ? { status_description: t.status_description } : {}),
      beneficiary_details: {
        beneficiary_id: '',
        beneficiary_instrument_details: { bank_account_number: t.bank_account_number, ifsc: t.bank_ifsc },
      },
      transfer_amount: t.transfer_amount + this.reportedAmountDelta,
      transfer_service_charge: 0,
      transfer_service_tax: 0,
      transfer_mode: t.transfer_mode,
      transfer_utr: t.transfer_utr,
      fundsource_id: 'CASHFREE_DEFAULT',
      added_on: t.added_on,
      updated_on: t.updated_on,
    };
  }
}

/** What the real API checks of a transfer request, as its document and pages describe. */
function invalid(body: any): string | null {
  if (!body || typeof body !== 'object') return 'invalid_request';
  if (typeof body.transfer_id !== 'string' || !/^[A-Za-z0-9_]{1,40}$/.test(body.transfer_id))
    return 'transfer_id_invalid';
  if (typeof body.transfer_amount !== 'number' || body.transfer_amount < 1) return 'transfer_amount_invalid';
  const b = body.beneficiary_details;
  if (!b || typeof b.beneficiary_name !== 'string' || !/^[A-Za-z ]{1,100}$/.test(b.beneficiary_name))
    return 'beneficiary_details.beneficiary_name_invalid';
  const i = b.beneficiary_instrument_details;
  if (!i || !/^[A-Za-z0-9]{9,18}$/.test(i.bank_account_number ?? ''))
    return 'beneficiary_details.beneficiary_instrument_details.bank_account_number_invalid';
  if (!/^[A-Z]{4}0[A-Z0-9]{6}$/.test(i.bank_ifsc ?? ''))
    return 'beneficiary_details.beneficiary_instrument_details.bank_ifsc_invalid';
  return null;
}

function stamp(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}
