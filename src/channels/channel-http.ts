/**
 * HTTP to a payment channel: JSON over one keep-alive undici Agent, every request bounded by
 * CHANNEL_TIMEOUT_MS, every request counted and timed by channel and operation. Failures come back
 * as `ChannelFailure`s that say whether the channel may have acted on the request. Nothing here
 * logs a header or a body: secrets, tokens and account numbers travel in them.
 */
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { undici } from '../outbound/undici.ts';
import { errorKindOf } from '../outbound/error-kinds.ts';
import { CHANNEL_BACKOFF, CLAIM_EXPIRED, ChannelFailure } from './channel.ts';
import { retryAfterMs, type CallGate } from './throttle.ts';

/** Told after each request: its channel, its operation, how it ended and how long it took. */
export type ChannelObserver = (channel: string, operation: string, outcome: string, seconds: number) => void;

/** An answer the caller reads: its HTTP status and its body parsed as JSON (null if it was not JSON). */
export interface ChannelAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

export interface ChannelRequest {
  operation: string;
  method: 'GET' | 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  /**
   * Not sent after this time (epoch ms), however long the throttle kept it waiting: the caller's
   * claim on the work runs out then, and another process may be doing it.
   */
  notAfter?: number;
}

/**
 * How long a request that got no answer (a timeout, a broken connection) may still reach its
 * channel after Paygate gave up on it: its connection can wait, established on Paygate's side, in
 * the provider's accept queue while the provider's kernel retries the handshake (about a minute on
 * Linux), or a proxy can hold it. The `inTransitMs` of the channels reached over HTTP.
 */
export const IN_TRANSIT_MS = 120_000;

/** The most of an answer's body read; a provider's answers are a few KiB. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export class ChannelHttp {
  private agent: Agent | undefined;
  /** Replaced by the app with one that records into its metrics. */
  observe: ChannelObserver = () => {};

  constructor(
    readonly channel: string,
    private readonly timeoutMs: number,
    /** The provider's call limit (CASHFREE_MAX_RPS, SETU_MAX_RPS) and back-off; none when absent. */
    readonly gate: CallGate | null = null,
  ) {}

  /** The keep-alive pool, made by the first call. */
  private dispatcher(): Agent {
    this.agent ??= new (undici().Agent)({
      keepAliveTimeout: 30_000,
      connections: 256,
      connectTimeout: this.timeoutMs,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    return this.agent;
  }

  /**
   * Sends a request and answers its status and JSON body, whatever the status. Throws a
   * `ChannelFailure` when no answer came: `unavailable` when the connection could not be made
   * (nothing was sent), `unknown` when it timed out or broke after the request may have arrived.
   */
  async send(req: ChannelRequest): Promise<ChannelAnswer> {
    // The wait for a turn is not part of the call: CHANNEL_TIMEOUT_MS starts when the request does.
    const turn = (await this.gate?.take(req.notAfter)) ?? true;
    if (turn === 'backoff')
      throw new ChannelFailure(
        'unavailable',
        this.channel,
        CHANNEL_BACKOFF,
        `${this.channel} ${req.operation}: not sent, ${this.channel} fails every call and its calls back off`,
      );
    if (turn !== true || (req.notAfter !== undefined && Date.now() > req.notAfter))
      throw new ChannelFailure(
        'unavailable',
        this.channel,
        CLAIM_EXPIRED,
        `${this.channel} ${req.operation}: not sent, the claim ran out`,
      );
    // Made (and undici loaded) before the call's clock starts.
    const dispatcher = this.dispatcher();
    const started = performance.now();
    const done = (outcome: string) =>
      this.observe(this.channel, req.operation, outcome, (performance.now() - started) / 1000);
    // One timer for the whole call: the Agent's own timeouts are coarse (they tick about once a second).
    const abort = new AbortController();
    const timer = setTimeout(
      () => abort.abort(new DOMException('channel timeout', 'TimeoutError')),
      this.timeoutMs,
    );
    try {
      const res = await undici().request(req.url, {
        method: req.method,
        dispatcher,
        headers:
          req.body === undefined
            ? { accept: 'application/json', ...req.headers }
            : { accept: 'application/json', 'content-type': 'application/json', ...req.headers },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: abort.signal,
      });
      const length = Number(res.headers['content-length'] ?? 0);
      if (length > MAX_ANSWER_BYTES) {
        res.body.destroy();
        throw Object.assign(new Error('answer too large'), { code: 'ERR_ANSWER_TOO_LARGE' });
      }
      const text = await res.body.text();
      if (res.statusCode === 429) this.gate?.limited(retryAfterMs(res.headers));
      else if (res.statusCode >= 500) this.gate?.failed();
      else this.gate?.passed();
      done(res.statusCode < 400 ? 'ok' : `http_${res.statusCode}`);
      return { status: res.statusCode, body: parseObject(text) };
    } catch (err) {
      const kind = errorKindOf(err);
      done(kind);
      this.gate?.failed();
      const sent = !(kind === 'refused' || kind === 'dns' || kind === 'tls');
      throw new ChannelFailure(
        sent ? 'unknown' : 'unavailable',
        this.channel,
        kind,
        `${this.channel} ${req.operation} at ${hostOf(req.url)}: ${kind === 'error' ? 'the request failed' : kind}`,
        sent,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}

/** The host a request went to, for messages: an operator must see which address did not answer. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an unreadable address';
  }
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/**
 * The failure for an answer that is not the one asked for: 429 and 401 are `unavailable` (the
 * channel did not act), 5xx `unknown`, any other 4xx `rejected` with the provider's code.
 */
export function failureOf(channel: string, operation: string, answer: ChannelAnswer): ChannelFailure {
  const code = providerCode(answer);
  const kind =
    answer.status === 429 || answer.status === 401
      ? 'unavailable'
      : answer.status >= 500 || answer.status < 400
        ? 'unknown'
        : 'rejected';
  return new ChannelFailure(
    kind,
    channel,
    code,
    `${channel} ${operation}: HTTP ${answer.status} ${code}`,
    false,
    providerDescription(answer),
  );
}

/**
 * The provider's own words in a refusal (Cashfree `message`, Setu `detail`), as an operator reads
 * them on a FAILED transaction: printable characters only, at most 200; a run of 9 or more digits
 * (an account number echoed back) masked as `XXXXXXXX1234`, and a long token of letters and digits
 * (a key, a token, a signature) left out. '' when the answer has none.
 */
export function providerDescription(answer: ChannelAnswer): string {
  const b = answer.body ?? {};
  const words = [b.message, b.detail].find((v): v is string => typeof v === 'string') ?? '';
  return words
    .replace(/[^\x20-\x7e]/g, ' ')
    .replace(/\d{9,}/g, (digits) => `XXXXXXXX${digits.slice(-4)}`)
    .replace(/[A-Za-z0-9+/=_-]{20,}/g, (t) => (/\d/.test(t) && /[A-Za-z]/.test(t) ? '[hidden]' : t))
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
}

/** The provider's error code in an answer (Setu `code`, Cashfree `code` or `type`), else `http_<status>`. */
export function providerCode(answer: ChannelAnswer): string {
  const b = answer.body ?? {};
  const code = typeof b.code === 'string' ? b.code : typeof b.type === 'string' ? b.type : '';
  // A provider's code is echoed to merchants and operators: only its plain characters, and not too
  // many (Cashfree's field codes name the field's path, the longest 77 characters).
  const clean = code.replace(/[^A-Za-z0-9_.:-]/g, '').slice(0, 100);
  return clean || `http_${answer.status}`;
}

/** An amount in rupees from a provider's JSON number, as paise, exactly: "12.5" → 1250. Null if not an amount. */
export function rupeesToPaise(value: unknown): number | null {
  if (typeof value !== 'number' && typeof value !== 'string') return null;
  // The number's shortest decimal text is what the provider wrote (JSON.parse keeps it); read that text.
  const text = typeof value === 'number' ? String(value) : value.trim();
  const m = /^(\d{1,13})(?:\.(\d{1,2})0*)?$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}
