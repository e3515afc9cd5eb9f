/**
 * Cashfree Payouts (API version 2024-01-01) for live payouts: one transfer per payout, its
 * `transfer_id` the payment_id, read back by `transfer_id`. Every call carries the client id and
 * secret in headers. The statuses Cashfree's pages list are mapped to Paygate's in `cashfreeState`.
 */
import { constants, createPublicKey, publicEncrypt, randomUUID, type KeyObject } from 'node:crypto';
import type { CashfreeSettings } from '../../config.ts';
import type { TransactionKind } from '../../db/schema.ts';
import { toRupees } from '../../money.ts';
import {
  ChannelFailure,
  type Channel,
  type FinalOutcome,
  type PayinInstructions,
  type PayoutInFlight,
  type PayoutState,
  type PayoutSubmission,
  transferIdOf,
  transferOf,
} from '../channel.ts';
import {
  ChannelHttp,
  failureOf,
  IN_TRANSIT_MS,
  providerCode,
  rupeesToPaise,
  type ChannelAnswer,
} from '../channel-http.ts';
import { pollDelay } from '../setu/setu.channel.ts';
import type { TurnStore } from '../../db/channel-turns.ts';
import { callGate } from '../shared-throttle.ts';

/** Cashfree's code for a transfer_id it does not know (its document's example for GET /transfers). */
const TRANSFER_NOT_FOUND = 'transfer_id_not_found';

export const CASHFREE_API_VERSION = '2024-01-01';

/** Statuses that end a transfer unpaid (REVERSED is apart: see `cashfreeState`). */
const FAILED = new Set(['FAILED', 'REJECTED', 'MANUALLY_REJECTED']);

/**
 * The document's refusals of a transfer request's own fields (POST /transfers, 400 and 404): the
 * payout is at fault, and a refusal of its first send fails it. Any other refusal is about the
 * account or is not understood, and fails no payout.
 */
const TRANSFER_FIELD_ERRORS = new Set([
  'transfer_id_missing',
  'transfer_id_invalid',
  'transfer_amount_invalid',
  'transfer_amount_missing',
  'transfer_mode_invalid',
  'beneficiary_not_found',
]);

/**
 * Transfer status codes that Cashfree's pages assign to Paygate's own account, not to the transfer
 * (`specs/CHANNELS.md` lists each with its source): Paygate's balance too low (also what a
 * low-balance queue that expired ends with), payouts inactive on the account, a transfer mode not
 * enabled for it or for its fund source. A FAILED or REJECTED transfer with one of them fails no payout.
 */
export const ACCOUNT_STATUS_CODES: ReadonlySet<string> = new Set([
  'INSUFFICIENT_BALANCE',
  'PAYOUT_INACTIVE',
  'DISABLED_MODE',
  'INVALID_MODE_FOR_PYID',
]);

/** The statuses whose code may be the account's. */
const ACCOUNT_FAILED = new Set(['FAILED', 'REJECTED']);

/** Cashfree's answer to a read of a transfer it does not have (the document's not-found code). */
const NOT_FOUND = new Set(['transfer_id_not_found', 'cf_transfer_id_not_found']);

export class CashfreeChannel implements Channel {
  readonly name = 'cashfree';
  readonly live = true;
  readonly opensRemotely = true;
  readonly inTransitMs = IN_TRANSIT_MS;
  readonly http: ChannelHttp;
  private readonly publicKey: KeyObject | null;

  constructor(
    private readonly settings: CashfreeSettings,
    private readonly options: { timeoutMs: number; pollMs: number; maxRps: number; turns?: TurnStore | null },
  ) {
    // Parsed once: decoding the PEM text costs about 6 times the encryption itself, on every call.
    this.publicKey = settings.publicKey === null ? null : createPublicKey(settings.publicKey);
    this.http = new ChannelHttp(
      this.name,
      options.timeoutMs,
      callGate(this.name, options.maxRps, options.pollMs, options.turns ?? null),
    );
  }

  private headers(): Record<string, string> {
    return {
      'x-client-id': this.settings.clientId,
      'x-client-secret': this.settings.clientSecret,
      'x-api-version': CASHFREE_API_VERSION,
      'x-request-id': randomUUID(),
      ...(this.publicKey && {
        'x-cf-signature': cashfree2fa(this.settings.clientId, this.publicKey, Date.now()),
      }),
    };
  }

  async submitPayout(p: PayoutSubmission): Promise<PayoutState> {
    const answer = await this.http.send({
      operation: 'transfer_create',
      method: 'POST',
      notAfter: p.notAfter,
      url: `${this.settings.baseUrl}/transfers`,
      headers: this.headers(),
      body: {
        transfer_id: transferIdOf(p.paymentId, p.attempt),
        transfer_amount: toRupees(p.amount),
        transfer_currency: p.currency,
        transfer_mode: 'banktransfer',
        beneficiary_details: {
          beneficiary_name: beneficiaryName(p.receiver.name),
          beneficiary_instrument_details: {
            bank_account_number: p.receiver.accountNo,
            bank_ifsc: p.receiver.ifsc,
          },
        },
      },
    });
    if (answer.status !== 200 && answer.status !== 201) throw this.refusal(answer);
    return this.stateIn(answer, 'transfer_create');
  }

  async readPayout(p: PayoutInFlight): Promise<PayoutState | null> {
    const answer = await this.readTransfer('transfer_read', transferIdOf(p.paymentId, p.attempt));
    // Its not-found code, not any 404 (a wrong path or a proxy's 404 says nothing of the transfer).
    if (answer.status === 404 && NOT_FOUND.has(providerCode(answer))) return null;
    if (answer.status === 401 || answer.status === 403) throw this.accountFailure('transfer_read', answer);
    if (answer.status !== 200) throw failureOf(this.name, 'transfer_read', answer);
    return this.stateIn(answer, 'transfer_read');
  }

  /**
   * The transfer as Cashfree holds it, for reconciliation: its raw fields, or null when Cashfree
   * answers that it has no transfer with this id. A read only; it goes through the provider's limit.
   */
  async transferRecord(transferId: string): Promise<Record<string, unknown> | null> {
    const answer = await this.readTransfer('transfer_reconcile', transferId);
    // Only Cashfree's own not-found says it has no such transfer; a bare 404 (a proxy's, a wrong
    // path) says nothing, and the read is unreadable.
    if (answer.status === 404 && NOT_FOUND.has(providerCode(answer))) return null;
    if (answer.status !== 200 || !answer.body) throw failureOf(this.name, 'transfer_reconcile', answer);
    return answer.body;
  }

  /**
   * What a refusal of POST /transfers means. A 401/403, or a 4xx that is not one of the document's
   * transfer-field errors, is about the account (`account`); a duplicate transfer_id means an
   * earlier send arrived (`unknown`: read it); 429 `unavailable`; 5xx `unknown`.
   */
  private refusal(answer: ChannelAnswer): ChannelFailure {
    const code = providerCode(answer);
    const { status } = answer;
    if (status === 401 || status === 403) return this.accountFailure('transfer_create', answer);
    if (status === 409 || /already_exists|duplicate/i.test(code))
      return new ChannelFailure(
        'unknown',
        this.name,
        code,
        `cashfree transfer_create: HTTP ${status} ${code}`,
      );
    const field = TRANSFER_FIELD_ERRORS.has(code) || code.startsWith('beneficiary_details.');
    if (status >= 400 && status < 500 && status !== 429 && !field)
      return this.accountFailure('transfer_create', answer);
    return failureOf(this.name, 'transfer_create', answer);
  }

  private accountFailure(operation: string, answer: ChannelAnswer): ChannelFailure {
    const code = providerCode(answer);
    return new ChannelFailure(
      'account',
      this.name,
      code,
      `cashfree ${operation}: HTTP ${answer.status} ${code}`,
    );
  }

  private readTransfer(operation: string, transferId: string): Promise<ChannelAnswer> {
    return this.http.send({
      operation,
      method: 'GET',
      url: `${this.settings.baseUrl}/transfers?transfer_id=${encodeURIComponent(transferId)}`,
      headers: this.headers(),
    });
  }

  /** The transfer in an answer; an answer without one leaves the outcome unknown. */
  private stateIn(answer: ChannelAnswer, operation: string): PayoutState {
    const state = answer.body && cashfreeState(answer.body);
    if (!state)
      throw new ChannelFailure(
        'unknown',
        this.name,
        'bad_answer',
        `cashfree ${operation}: no transfer in the answer`,
      );
    return state;
  }

  async openPayin(): Promise<PayinInstructions> {
    throw new ChannelFailure('rejected', this.name, 'payins_not_supported', 'cashfree carries payouts only');
  }

  async payinOutcome(): Promise<FinalOutcome | null> {
    return null;
  }

  async closePayin(): Promise<FinalOutcome> {
    throw new ChannelFailure('rejected', this.name, 'payins_not_supported', 'cashfree carries payouts only');
  }

  pollDelayMs(_kind: TransactionKind, ageMs: number): number {
    return pollDelay(this.options.pollMs, ageMs);
  }

  /**
   * Tries the settings as Cashfree's document says they should answer: a read of a transfer that
   * does not exist is 404 with its not-found code. Anything else (a 404 of a wrong host or path, a
   * refusal of the keys, the IP allow-list or the 2FA signature) fails, naming the host.
   */
  async check(): Promise<string> {
    const host = new URL(this.settings.baseUrl).host;
    const answer = await this.readTransfer('check', 'paygate_check_unknown_transfer');
    if (answer.status !== 404 || answer.body?.code !== TRANSFER_NOT_FOUND)
      throw new ChannelFailure(
        answer.status === 401 || answer.status === 403 ? 'unavailable' : 'rejected',
        this.name,
        providerCode(answer),
        `cashfree at ${host}: a read of an unknown transfer answered HTTP ${answer.status} ${providerCode(answer)}, ` +
          `not Cashfree's 404 ${TRANSFER_NOT_FOUND} (check CASHFREE_BASE_URL, the keys and the 2FA settings)`,
      );
    return `credentials accepted; ${host} answers Payouts API 2024-01-01`;
  }
}

/**
 * A transfer as Cashfree shows it (an answer, or a webhook's `data`) as a payout state. SUCCESS
 * carries `transfer_utr`; FAILED, REJECTED and MANUALLY_REJECTED fail it; REVERSED fails it too,
 * marked `reversed` (after a recorded SUCCESS that is a reversal); every other status is still
 * moving. An amount that cannot be read exactly is -1, which matches no payout. A FAILED or
 * REJECTED transfer whose `status_code` is the account's (`ACCOUNT_STATUS_CODES`) has no outcome:
 * it carries the code, and the payout waits for the operator.
 */
export function cashfreeState(t: Record<string, unknown>): PayoutState | null {
  const status = typeof t.status === 'string' ? t.status.toUpperCase() : '';
  if (!status) return null;
  const code = typeof t.status_code === 'string' ? t.status_code.toUpperCase() : '';
  const attempt = transferOf(typeof t.transfer_id === 'string' ? t.transfer_id : '').attempt;
  const channelTxnId =
    typeof t.cf_transfer_id === 'string' || typeof t.cf_transfer_id === 'number'
      ? String(t.cf_transfer_id)
      : '';
  const utr =
    typeof t.transfer_utr === 'string' ? t.transfer_utr.replace(/[^A-Za-z0-9]/g, '').slice(0, 40) : '';
  const amount = rupeesToPaise(t.transfer_amount) ?? -1;
  const reference = typeof t.transfer_id === 'string' ? t.transfer_id : '';
  const reversed = status === 'REVERSED';
  if (ACCOUNT_FAILED.has(status) && ACCOUNT_STATUS_CODES.has(code))
    return { channelTxnId, outcome: null, reversed: false, accountCode: code, attempt };
  const outcome: FinalOutcome | null =
    status === 'SUCCESS'
      ? { status: 'SUCCESS', utr, channelTxnId, amount, reference }
      : FAILED.has(status) || reversed
        ? {
            status: 'FAILED',
            utr: '',
            channelTxnId,
            amount,
            reference,
            reason: failureReason(t, status, code),
          }
        : null;
  return { channelTxnId, outcome, reversed, attempt };
}

/** Cashfree's words for a transfer it ended unpaid: its status, its `status_code` and `status_description`. */
function failureReason(t: Record<string, unknown>, status: string, code: string): string {
  const description = typeof t.status_description === 'string' ? t.status_description.trim() : '';
  const head = `cashfree ${status}${code && code !== status ? ` ${code}` : ''}`;
  return (description ? `${head}: ${description}` : head).slice(0, 300);
}

/**
 * Cashfree's two-factor signature: base64 of `clientId.unixSeconds` encrypted with Cashfree's
 * public key by RSA-OAEP with SHA-1 (its 2FA page's RSA/ECB/OAEPWithSHA-1AndMGF1Padding); fresh
 * for each call, since Cashfree refuses one older than a few minutes.
 */
export function cashfree2fa(clientId: string, publicKey: KeyObject | string, now: number): string {
  return publicEncrypt(
    { key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
    Buffer.from(`${clientId}.${Math.floor(now / 1000)}`),
  ).toString('base64');
}

/** Cashfree takes letters and spaces only in `beneficiary_name` (at most 100); Paygate keeps the original. */
export function beneficiaryName(name: string): string {
  const clean = name
    .normalize('NFKD')
    .replace(/[^A-Za-z ]/g, '')
    .replace(/ +/g, ' ')
    .trim()
    .slice(0, 100);
  return clean || 'Beneficiary';
}
