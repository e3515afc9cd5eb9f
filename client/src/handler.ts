/**
 * Receiving callbacks: read the raw body, verify it, and answer 200 only for an authentic
 * callback once your function has run (the gateway retries anything else). Adapters for Node's
 * http server (and Express, which uses the same signature) and for Fastify.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PaygateCallback, RefundCallback } from './types.js';
import { PaygateSignatureError } from './errors.js';
import { isRefundCallback, parseCallback, verifyCallback } from './verify.js';

export interface CallbackContext {
  /** `X-Callback-Attempt`: 1 for the first delivery, 2, 3, … for retries. */
  attempt: number;
  /** The body as received. */
  rawBody: string;
  /** `webhook-id`: one per event, the same on its retries and resends; a key to process it once. */
  webhookId: string | null;
}

export interface CallbackHandlerOptions {
  /** The webhook secret; several during a rotation. */
  secret: string | readonly string[];
  /**
   * Called once per authentic delivery, before the 200 goes out. A callback can arrive more than
   * once (a retry after a lost 200), so make this idempotent, e.g. by `payment_id`. Throwing
   * answers 500 and the gateway retries later.
   */
  onCallback: (callback: PaygateCallback, context: CallbackContext) => void | Promise<void>;
  /**
   * Called once per authentic refund callback (by `refund_id`), before the 200 goes out. Without
   * it a refund's callback is answered 500 (and retried by the gateway), never dropped.
   */
  onRefund?: (refund: RefundCallback, context: CallbackContext) => void | Promise<void>;
  /**
   * Told why a request was refused (for your logs); never told the secret. For `signature`, the
   * error is a `PaygateSignatureError` whose `reason` says what failed.
   */
  onRejected?: (
    reason: 'signature' | 'body' | 'method' | 'too_large' | 'handler_error',
    error?: unknown,
  ) => void;
  /** Largest body read, in bytes. Default 64 KiB. */
  maxBodyBytes?: number;
  /** How far `webhook-timestamp` may be from your clock, in seconds. Default 300. */
  toleranceSeconds?: number;
  /**
   * Refuse callbacks without the Standard Webhooks headers. Default true; false also accepts a
   * callback on the seed's `X-Verification-Token` alone (it signs only `payment_id:amount:status`).
   */
  requireStandardWebhooks?: boolean;
}

export interface CallbackRequest {
  method?: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw body, when you have it. */
  rawBody?: string | Uint8Array | null;
  /** An already-parsed body, when the raw one is gone (e.g. after express.json()). */
  body?: unknown;
}

export interface CallbackAnswer {
  status: 200 | 401 | 405 | 413 | 500;
  body: string;
}

function header(headers: CallbackRequest['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? (v.length === 1 ? v[0] : undefined) : v;
}

/** The framework-free core: decide the answer for one callback request. */
export async function handleCallback(
  req: CallbackRequest,
  options: CallbackHandlerOptions,
): Promise<CallbackAnswer> {
  const reject = options.onRejected ?? (() => {});
  if (req.method !== undefined && req.method.toUpperCase() !== 'POST') {
    reject('method');
    return { status: 405, body: 'method not allowed\n' };
  }
  const check = {
    headers: req.headers,
    secret: options.secret,
    toleranceSeconds: options.toleranceSeconds,
    requireStandardWebhooks: options.requireStandardWebhooks,
    throwOnFailure: true as const,
  };
  let callback: PaygateCallback | RefundCallback | null = null;
  let rawBody = '';
  let failure: unknown = new PaygateSignatureError('invalid_body', 'the callback has no JSON object body');
  try {
    if (req.rawBody !== undefined && req.rawBody !== null) {
      rawBody = typeof req.rawBody === 'string' ? req.rawBody : Buffer.from(req.rawBody).toString('utf8');
      verifyCallback({ ...check, rawBody });
      callback = parseCallback(rawBody);
    } else if (typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body)) {
      const body = req.body as Record<string, unknown>;
      verifyCallback({ ...check, body });
      callback = body as unknown as PaygateCallback | RefundCallback;
      rawBody = JSON.stringify(body);
    }
  } catch (err) {
    if (!(err instanceof PaygateSignatureError)) throw err;
    failure = err;
  }
  if (!callback) {
    reject('signature', failure);
    return { status: 401, body: 'callback not verified\n' };
  }
  const attempt = Number(header(req.headers, 'x-callback-attempt') ?? '1');
  const context = {
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1,
    rawBody,
    webhookId: header(req.headers, 'webhook-id') ?? null,
  };
  try {
    if (!isRefundCallback(callback)) await options.onCallback(callback, context);
    else if (options.onRefund) await options.onRefund(callback, context);
    else throw new Error('a refund callback arrived and no onRefund handler is set');
  } catch (err) {
    reject('handler_error', err);
    return { status: 500, body: 'callback not processed\n' };
  }
  return { status: 200, body: 'OK\n' };
}

class TooLarge extends Error {}

function readRaw(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new TooLarge());
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** An IncomingMessage after a body parser ran (Express `express.json()`, `express.raw()`, a `verify` hook). */
type MaybeParsed = IncomingMessage & { body?: unknown; rawBody?: unknown };

/**
 * A request listener for `http.createServer` and a route handler for Express:
 * `app.post('/paygate/callback', createCallbackHandler({ secret, onCallback }))`.
 * It reads the raw body itself; mount it before any JSON body parser, or keep the raw bytes
 * in `req.rawBody` (the parsed `req.body` is the fallback).
 */
export function createCallbackHandler(
  options: CallbackHandlerOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const limit = options.maxBodyBytes ?? 64 * 1024;
  return async (req, res) => {
    const send = (a: { status: number; body: string }) => {
      res.writeHead(a.status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(a.body);
    };
    const r = req as MaybeParsed;
    let rawBody: string | Uint8Array | null = null;
    let body: unknown;
    if (typeof r.rawBody === 'string' || r.rawBody instanceof Uint8Array) {
      rawBody = r.rawBody;
    } else if (typeof r.body === 'string' || r.body instanceof Uint8Array) {
      rawBody = r.body;
    } else if (req.readableEnded) {
      body = r.body;
    } else if (req.method === 'POST') {
      try {
        rawBody = await readRaw(req, limit);
      } catch (err) {
        if (err instanceof TooLarge) {
          options.onRejected?.('too_large');
          res.setHeader('connection', 'close');
          return send({ status: 413, body: 'callback too large\n' });
        }
        options.onRejected?.('body', err);
        return send({ status: 401, body: 'callback not verified\n' });
      }
    }
    send(await handleCallback({ method: req.method, headers: req.headers, rawBody, body }, options));
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any -- Fastify's own types are not a dependency of the SDK. */
/** The parts of a Fastify instance the plugin uses. */
export interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    opts: { parseAs: 'buffer' },
    parser: (req: any, body: Buffer, done: any) => void,
  ): void;
  post(path: string, handler: (request: any, reply: any) => any): any;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * A Fastify plugin that adds `POST path` (default `/paygate/callback`) for callbacks:
 * `await app.register(paygateCallbackPlugin({ secret, onCallback }))`. It keeps the raw body for
 * its own route only (Fastify plugins are encapsulated), so the rest of your app is unchanged.
 */
export function paygateCallbackPlugin(
  options: CallbackHandlerOptions & { path?: string },
): (app: FastifyLike) => Promise<void> {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    app.post(
      options.path ?? '/paygate/callback',
      async (
        request: { headers: CallbackRequest['headers']; body?: unknown },
        reply: { code(n: number): { type(t: string): { send(b: string): unknown } } },
      ) => {
        const rawBody = request.body instanceof Uint8Array ? request.body : Buffer.alloc(0);
        const answer = await handleCallback({ method: 'POST', headers: request.headers, rawBody }, options);
        return reply.code(answer.status).type('text/plain; charset=utf-8').send(answer.body);
      },
    );
  };
}
