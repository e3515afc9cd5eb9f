/**
 * What every response passes through: the request id, the JSON body parser, the central error
 * handler that writes shape A and shape B, and the not-found handler (404, or 405 on API paths).
 */
import { randomUUID } from 'node:crypto';
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
  '/wallet/balance',
  '/sandbox/payin/complete',
  '/sandbox/payout/complete',
  '/callbacks/resend',
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
  FST_ERR_BAD_URL: ['NOT_FOUND', 'Not found'],
};

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
  if (isUnavailableError(error)) {
    // The outage itself is logged once by the database layer; this is one request it turned away.
    request.log.debug({ reason: error.message }, 'storage unavailable');
    return sendAppError(
      reply,
      new AppError('SERVICE_UNAVAILABLE', 'Service temporarily unavailable', {}, { 'Retry-After': '5' }),
    );
  }
  if (fe.statusCode === 404) return sendAppError(reply, new AppError('NOT_FOUND', 'Not found'));
  if (fe.statusCode === 413)
    return sendAppError(reply, new AppError('PAYLOAD_TOO_LARGE', 'Request body is larger than 64 KiB'));
  if (fe.statusCode === 415)
    return sendAppError(
      reply,
      new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json'),
    );
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    // Any other client error from the HTTP layer is a malformed request: report it in shape B.
    return reply
      .code(422)
      .send({ detail: [{ loc: ['request'], msg: 'Malformed request', type: 'value_error' }] });
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendAppError(reply, new AppError('INTERNAL_ERROR', 'Internal server error'));
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
