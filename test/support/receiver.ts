/**
 * A merchant's callback endpoint for tests: a real HTTP server on 127.0.0.1 that records every
 * request and connection, verifies signatures the way docs/integration.md tells merchants to, and
 * answers as each test tells it (a status, a hang, a reset).
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface Received {
  /** Date.now() when the request arrived (headers and body read). */
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body bytes as text, exactly as sent. */
  raw: string;
  body: any;
  /** X-Callback-Attempt as a number (NaN when absent). */
  attempt: number;
  /** The signature checks out with the receiver's secret. */
  verified: boolean;
}

/** A status code, or a full answer, or `hang` (never answer), or `reset` (drop the connection). */
export type Answer =
  number | 'hang' | 'reset' | { status: number; body?: string; headers?: Record<string, string> };

export interface ReceiverOptions {
  /** The merchant's webhook secret; without one, `verified` is always false. */
  secret?: string;
  /** How to answer; `nth` counts the requests for this payment_id so far (1 for the first). Default 200. */
  answer?: (req: Received, nth: number) => Answer;
  /** Listen address; `::` takes IPv4 and IPv6 loopback alike. Default 127.0.0.1. */
  host?: string;
}

export interface Receiver {
  port: number;
  /** http://127.0.0.1:PORT + path */
  url(path?: string): string;
  received: Received[];
  /** TCP connections accepted so far (counts even ones that never sent a request, such as TLS). */
  connections(): number;
  forPayment(paymentId: string): Received[];
  /** Resolves once `ready()` is true; rejects with `what` after `timeoutMs`. */
  waitFor(ready: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The recipe of docs/integration.md ("Verifying a callback"), written from the text alone: HMAC-SHA256 over
 * `payment_id:amount:status` (a refund's: `refund_id:amount:status`) with the amount exactly as it appears in the raw JSON, lowercase hex,
 * compared in constant time. A missing header or field means "not verified". Tolerates a trailing
 * comma before the closing brace, as the integration guide asks.
 */
export function verifyCallback(secret: string, rawBody: string, token: string | undefined): boolean {
  if (!token) return false;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(rawBody.replace(/,\s*}\s*$/, '}')) as Record<string, unknown>;
  } catch {
    return false;
  }
  const amountText = /"amount"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(rawBody)?.[1];
  const { status } = body;
  const paymentId = 'refund_id' in body ? body.refund_id : body.payment_id;
  if (typeof paymentId !== 'string' || typeof status !== 'string' || amountText === undefined) return false;
  const expected = Buffer.from(
    createHmac('sha256', secret).update(`${paymentId}:${amountText}:${status}`).digest('hex'),
  );
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const received: Received[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const token = req.headers['x-verification-token'];
      const r: Received = {
        at: Date.now(),
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        attempt: Number(req.headers['x-callback-attempt']),
        verified:
          opts.secret !== undefined &&
          verifyCallback(opts.secret, raw, typeof token === 'string' ? token : undefined),
      };
      received.push(r);
      const paymentId = (body as { payment_id?: unknown } | undefined)?.payment_id;
      const nth = received.filter(
        (x) => (x.body as { payment_id?: unknown } | undefined)?.payment_id === paymentId,
      ).length;
      const answer = opts.answer ? opts.answer(r, nth) : 200;
      if (answer === 'hang') return;
      if (answer === 'reset') {
        req.socket.destroy();
        return;
      }
      const a = typeof answer === 'number' ? { status: answer } : answer;
      res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
      res.end(a.body ?? (a.status === 200 ? 'OK' : `answer ${a.status}`));
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    url: (path = '/callback') => `http://127.0.0.1:${port}${path}`,
    received,
    connections: () => connections,
    forPayment: (paymentId) =>
      received.filter((r) => (r.body?.refund_id ?? r.body?.payment_id) === paymentId),
    async waitFor(ready, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!ready()) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what} (received ${received.length} requests)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
