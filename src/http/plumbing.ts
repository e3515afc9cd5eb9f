/**
 * What every response passes through: the request id, the JSON body parser, the central error
 * handler that writes shape A and shape B, and the not-found handler (404, or 405 on API paths).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUnavailableError } from '../db/errors.ts';
import { AppError, envelope, ValidationError, type ErrorCode } from '../errors.ts';
import { toValidationIssues } from './validation.ts';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The caller's x-request-id when it is sane, else a fresh one. */
export function requestId(req: { headers: Record<string, string | string[] | undefined> }): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** API paths answer POST only; any other method gets 405 rather than 404. */
export const API_PATHS = new Set([
  '/payments/p2p/payin',
  '/payments/offsite/payin',
  '/payments/onsite/payin',
  '/payments/payout',
  '/payments/payin_status',
  '/payments/payout_status',
  '/payments/refund',
  '/payments/refund_status',
  '/wallet/balance',
  '/sandbox/payin/complete',
  '/sandbox/payout/complete',
  '/sandbox/refund/complete',
  '/callbacks/resend',
  '/channels/setu/notifications',
  '/channels/cashfree/notifications',
]);

/** Parses JSON bodies; an empty body is a missing body and bad JSON is `json_invalid` (shape B). */
export function registerJsonParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') {
      // No body at all: the schema reports it as missing, and routes without a body schema accept it.
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      const position = /position (\d+)/.exec(String((err as Error).message))?.[1];
      done(
        new ValidationError([
          { loc: position ? ['body', position] : ['body'], msg: 'JSON decode error', type: 'json_invalid' },
        ]),
        undefined,
      );
    }
  });
}

function sendAppError(reply: FastifyReply, err: AppError): FastifyReply {
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply
    .code(err.statusCode)
    .type('application/json; charset=utf-8')
    .send(envelope(err, reply.request.id));
}

const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: ['PAYLOAD_TOO_LARGE', 'Request body is larger than 64 KiB'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_TYPE: ['UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['PAYLOAD_TOO_LARGE', 'Content-Length does not match the body'],
};

const BAD_REQUEST = 'The request could not be parsed';

export function errorHandler(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof AppError) return sendAppError(reply, error);
  if (error instanceof ValidationError) return reply.code(422).send({ detail: error.detail });
  const fe = error as FastifyError;
  if (fe.validation) {
    return reply
      .code(422)
      .send({ detail: toValidationIssues(fe.validation as never, fe.validationContext ?? 'body') });
  }
  const known = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (known) return sendAppError(reply, new AppError(known[0], known[1]));
  // The HTTP layer's refusals carry a 4xx status; so does a request stream that broke because the
  // client went away (ECONNRESET, "aborted"), which is the client's doing, not the database's.
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 404) return sendAppError(reply, new AppError('NOT_FOUND', 'Not found'));
    if (fe.statusCode === 413)
      return sendAppError(reply, new AppError('PAYLOAD_TOO_LARGE', 'Request body is larger than 64 KiB'));
    if (fe.statusCode === 415)
      return sendAppError(
        reply,
        new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'),
      );
    request.log.debug({ code: fe.code, reason: fe.message }, 'client error');
    return sendAppError(reply, new AppError('BAD_REQUEST', BAD_REQUEST));
  }
  if (isUnavailableError(error)) {
    // The outage itself is logged once by the database layer; this is one request it turned away.
    request.log.debug({ reason: error.message }, 'storage unavailable');
    return sendAppError(
      reply,
      new AppError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable', {}, { 'Retry-After': '5' }),
    );
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendAppError(reply, new AppError('INTERNAL_ERROR', 'Internal server error'));
}

/**
 * Fastify's `frameworkErrors`: a URL it cannot decode (`%zz`) or a path parameter over its length,
 * found before routing, so no hook has run. Shape A 400 with the request id.
 */
export function frameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  request.log.debug({ code: error.code }, 'client error');
  reply.headers(API_HEADERS).header('x-request-id', request.id);
  return sendAppError(reply, new AppError('BAD_REQUEST', BAD_REQUEST));
}

/** What every API answer carries: never sniffed as another type, never cached. */
export const API_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes (a malformed header or chunk,
 * both Content-Length and Transfer-Encoding, NUL in a header, headers too large), or the request
 * did not arrive within REQUEST_TIMEOUT_MS. The answer is written to the socket by hand: shape A,
 * 408 or 400, with the caller's request id when its headers arrived (else a fresh one), and the
 * connection closed. Nothing is
 * written once a response has begun on that socket, or to a socket the client already closed.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const timeout = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
  // A request whose headers arrived (its body did not) has the caller's id; otherwise a fresh one.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: IncomingMessage } })
    ._httpMessage;
  const id = inFlight?.req ? requestId(inFlight.req) : randomUUID();
  this.log.debug({ code: error.code, request_id: id }, timeout ? 'request timed out' : 'client error');
  if (socket.writable && !inFlight?.headersSent) {
    const err = timeout
      ? new AppError('REQUEST_TIMEOUT', 'The request did not arrive in time')
      : new AppError('BAD_REQUEST', BAD_REQUEST);
    const body = JSON.stringify(envelope(err, id));
    socket.write(
      `HTTP/1.1 ${err.statusCode} ${timeout ? 'Request Timeout' : 'Bad Request'}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${id}\r\n` +
        'x-content-type-options: nosniff\r\n' +
        'cache-control: no-store\r\n' +
        'connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy();
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? '';
  if (API_PATHS.has(path) && request.method !== 'POST') {
    return sendAppError(
      reply,
      new AppError(
        'METHOD_NOT_ALLOWED',
        `${request.method} is not allowed here; use POST`,
        {},
        { Allow: 'POST' },
      ),
    );
  }
  return sendAppError(reply, new AppError('NOT_FOUND', 'Not found'));
}
