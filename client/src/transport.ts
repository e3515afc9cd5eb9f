/**
 * One POST with retries. Retrying a Paygate call is safe: a creation repeated with the same
 * `merchant_order_no` and body replays the original response instead of creating a second
 * transaction, and the other calls only read. So network errors, 5xx and 429 are retried with
 * exponential backoff (or after the Retry-After the gateway asks for); other 4xx never are.
 */
import { randomUUID } from 'node:crypto';
import { PaygateApiError, PaygateNetworkError, PaygateValidationError } from './errors.js';
import type { ValidationIssue } from './types.js';
import { SDK_VERSION } from './version.js';

export interface TransportOptions {
  apiKey: string;
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  fetch: typeof fetch;
}

/** Per-call options. */
export interface CallOptions {
  /** Sent as `x-request-id` (the same on every retry); the gateway echoes it in logs and errors. */
  requestId?: string;
  /** Cancels the call, retries included. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
}

export interface Answer<T> {
  body: T;
  /** The response had `Idempotent-Replayed: true`: a repeat of an earlier creation. */
  replayed: boolean;
  requestId: string | null;
}

function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Exponential backoff with jitter: about base·2^(n-1), between half and all of it. */
function backoff(retry: number, base: number, cap: number): number {
  const full = Math.min(cap, base * 2 ** (retry - 1));
  return full / 2 + Math.random() * (full / 2);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Turns a non-2xx answer into the matching error class. */
function errorFor(status: number, text: string, headers: Headers): PaygateApiError | PaygateValidationError {
  const body = parseJson(text);
  const headerId = headers.get('x-request-id');
  if (status === 422 && isRecord(body) && Array.isArray(body.detail)) {
    return new PaygateValidationError(body.detail as ValidationIssue[], headerId);
  }
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'));
  if (isRecord(body) && body.status === false && isRecord(body.error)) {
    const e = body.error;
    const metadata = isRecord(e.metadata) ? e.metadata : {};
    const metaId = typeof metadata.request_id === 'string' ? metadata.request_id : null;
    return new PaygateApiError({
      status,
      code: typeof e.code === 'number' ? e.code : status,
      errorCode: typeof e.error_code === 'string' ? e.error_code : null,
      message: typeof e.message === 'string' && e.message ? e.message : `HTTP ${status}`,
      metadata,
      requestId: headerId ?? metaId,
      retryAfterMs,
    });
  }
  // Not Paygate's envelope: a proxy or load balancer answered.
  return new PaygateApiError({
    status,
    code: status,
    errorCode: null,
    message: `HTTP ${status} without a Paygate error body`,
    metadata: {},
    requestId: headerId,
    retryAfterMs,
  });
}

/** Makes one logical call: POST `body` to `path`, retried as described above. */
export async function post<T>(
  t: TransportOptions,
  path: string,
  body: unknown,
  call: CallOptions = {},
): Promise<Answer<T>> {
  const url = `${t.baseUrl.replace(/\/+$/, '')}${path}`;
  const payload = JSON.stringify(body);
  const requestId = call.requestId ?? randomUUID();
  const maxRetries = call.maxRetries ?? t.maxRetries;
  const timeoutMs = call.timeoutMs ?? t.timeoutMs;
  const headers = {
    authorization: `Bearer ${t.apiKey}`,
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': `paygate-client-node/${SDK_VERSION}`,
    'x-request-id': requestId,
  };

  for (let attempt = 1; ; attempt++) {
    const retriesLeft = attempt <= maxRetries;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    let res: Response;
    let text: string;
    try {
      res = await t.fetch(url, { method: 'POST', headers, body: payload, signal });
      text = await res.text();
    } catch (err) {
      // The caller's own cancellation ends the call as it is.
      if (call.signal?.aborted) throw call.signal.reason;
      const timedOut = timeout.aborted;
      if (retriesLeft) {
        await sleep(backoff(attempt, t.retryDelayMs, t.maxRetryDelayMs), call.signal);
        continue;
      }
      const what = timedOut
        ? `no answer within ${timeoutMs} ms`
        : String((err as Error)?.cause ?? (err as Error)?.message ?? err);
      throw new PaygateNetworkError(`POST ${path} failed after ${attempt} attempt(s): ${what}`, {
        attempts: attempt,
        timedOut,
        cause: err,
      });
    }

    if (res.status >= 200 && res.status < 300) {
      const parsed = parseJson(text);
      if (parsed === undefined) {
        throw new PaygateApiError({
          status: res.status,
          code: res.status,
          errorCode: null,
          message: 'The gateway answered with a body that is not JSON',
          metadata: {},
          requestId: res.headers.get('x-request-id'),
        });
      }
      return {
        body: parsed as T,
        replayed: res.headers.get('idempotent-replayed') === 'true',
        requestId: res.headers.get('x-request-id'),
      };
    }

    if (isRetryableStatus(res.status) && retriesLeft) {
      const asked = parseRetryAfter(res.headers.get('retry-after'));
      // A wait longer than the cap is a "come back much later": give the error to the caller instead.
      if (asked === null || asked <= t.maxRetryDelayMs) {
        await sleep(asked ?? backoff(attempt, t.retryDelayMs, t.maxRetryDelayMs), call.signal);
        continue;
      }
    }
    throw errorFor(res.status, text, res.headers);
  }
}
