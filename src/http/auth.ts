/** Bearer API-key authentication of the merchant API: 401 without a live key, 403 for a disabled merchant. */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { MerchantService, Principal } from '../merchants/merchants.service.ts';
import { AppError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const KEY_SHAPE = /^sk_(test|live)_[A-Za-z0-9]{20,100}$/;

/**
 * An onRequest hook: sets `request.principal` or answers 401/403. Written with `done` rather than
 * async: a cached key (almost every request) is answered without a promise.
 */
export function authHook(merchants: MerchantService) {
  return function authenticate(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match?.[1]) {
      done(new AppError('AUTH_MISSING', 'Authorization header with a Bearer API key is required'));
      return;
    }
    const key = match[1];
    const found = KEY_SHAPE.test(key) ? merchants.authenticate(key) : null;
    if (found instanceof Promise) {
      found.then((principal) => done(admit(request, principal)), done);
    } else {
      done(admit(request, found));
    }
  };
}

/** Lets the key's merchant in (undefined) or says why not. */
function admit(request: FastifyRequest, principal: Principal | null): AppError | undefined {
  if (!principal) return new AppError('AUTH_INVALID_API_KEY', 'The API key is not valid');
  if (principal.status !== 'active')
    return new AppError('MERCHANT_DISABLED', 'The merchant account is disabled');
  request.principal = principal;
  return undefined;
}

/** The authenticated merchant of a request that passed the auth hook. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new AppError('AUTH_MISSING', 'Authorization header with a Bearer API key is required');
  return request.principal;
}
