/**
 * One HTTP attempt of a callback. It never throws: whatever happens (an answer, a timeout, a
 * refused or reset connection, a blocked address) comes back as an `AttemptResult` for the attempt
 * log. One undici Agent keeps a keep-alive pool per merchant origin, so a busy merchant's callbacks
 * reuse their connections; redirects are never followed (a 3xx is just a failed attempt).
 */
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { undici } from '../outbound/undici.ts';
import { guardConnector } from '../outbound/address-guard.ts';
import { errorKindOf } from '../outbound/error-kinds.ts';

export interface AttemptResult {
  /** True only for HTTP 200: any other answer, a redirect included, is a failed attempt. */
  delivered: boolean;
  httpStatus: number | null;
  /**
   * null when delivered; otherwise one of: http_status (an answer other than 200 and not a
   * redirect), redirect, timeout, refused, reset, dns, tls, blocked_address, blocked_scheme,
   * invalid_url, error.
   */
  errorKind: string | null;
  latencyMs: number;
  /** The first 1 KiB of the answer's body, as text; null when there was no answer. */
  snippet: string | null;
}

export interface SenderOptions {
  timeoutMs: number;
  /** ALLOW_PRIVATE_CALLBACK_URLS: http and internal targets allowed (local testing only). */
  allowPrivate: boolean;
  userAgent: string;
}

const SNIPPET_BYTES = 1024;
/** Past this, an answer's body is not worth draining for connection reuse; the socket is dropped. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

export class CallbackSender {
  private agent: Agent | undefined;

  constructor(private readonly options: SenderOptions) {}

  /** The keep-alive pools, made by the first send. */
  private dispatcher(): Agent {
    const { timeoutMs, allowPrivate } = this.options;
    this.agent ??= new (undici().Agent)({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      connect: allowPrivate ? { timeout: timeoutMs } : guardConnector({ timeout: timeoutMs }),
    });
    return this.agent;
  }

  /** POSTs `body` to `url` once, within the callback timeout (connect, answer and body together). */
  async send(url: string, body: string, headers: Record<string, string>): Promise<AttemptResult> {
    // Made (and undici loaded) before the attempt's clock starts.
    const dispatcher = this.dispatcher();
    const started = performance.now();
    const elapsed = () => Math.max(0, Math.round(performance.now() - started));
    const failed = (errorKind: string): AttemptResult => ({
      delivered: false,
      httpStatus: null,
      errorKind,
      latencyMs: elapsed(),
      snippet: null,
    });

    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return failed('invalid_url');
    }
    if (target.protocol !== 'https:' && !(this.options.allowPrivate && target.protocol === 'http:')) {
      return failed('blocked_scheme');
    }

    try {
      const res = await undici().request(target, {
        dispatcher,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': this.options.userAgent, ...headers },
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const snippet = await readSnippet(res.body);
      const latencyMs = elapsed();
      const status = res.statusCode;
      if (status === 200) return { delivered: true, httpStatus: status, errorKind: null, latencyMs, snippet };
      const errorKind = status >= 300 && status < 400 ? 'redirect' : 'http_status';
      return { delivered: false, httpStatus: status, errorKind, latencyMs, snippet };
    } catch (err) {
      return failed(errorKindOf(err));
    }
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}

/** The first 1 KiB of a body as text. Drains a little more so that the connection can be reused. */
async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let seen = 0;
  try {
    for await (const chunk of body) {
      if (keptBytes < SNIPPET_BYTES) {
        const part = chunk.subarray(0, SNIPPET_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      seen += chunk.length;
      if (seen > DRAIN_LIMIT_BYTES) {
        body.destroy();
        break;
      }
    }
  } catch {
    // A body cut short still leaves the status, which is what decides the attempt.
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(Buffer.concat(kept));
}
