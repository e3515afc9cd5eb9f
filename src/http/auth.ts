/** Bearer API-key authentication for the merchant API (seed §5.1, CONTRACT §8). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MerchantService, Principal } from '../merchants/merchants.service.ts';
import { AppError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const KEY_SHAPE = /^sk_(test|live)_[A-Za-z0-9]{20,100}$/;

/** An onRequest hook: sets `request.principal` or answers 401/403. */
export function authHook(merchants: MerchantService) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (!match?.[1]) {
      throw new AppError('AUTH_MISSING', 'Authorization header with a Bearer API key is required');
    }
    const key = match[1];
    const principal = KEY_SHAPE.test(key) ? await merchants.authenticate(key) : null;
    if (!principal) throw new AppError('AUTH_INVALID_API_KEY', 'The API key is not valid');
    if (principal.status !== 'active')
      throw new AppError('MERCHANT_DISABLED', 'The merchant account is disabled');
    request.principal = principal;
  };
}

/** The authenticated merchant of a request that passed the auth hook. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new AppError('AUTH_MISSING', 'Authorization header with a Bearer API key is required');
  return request.principal;
}
