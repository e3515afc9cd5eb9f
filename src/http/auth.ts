/** Bearer API-key authentication of the merchant API: 401 without a live key, 403 for a disabled merchant. */
import net from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { MerchantService, Principal } from '../merchants/merchants.service.ts';
import { AppError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;
const KEY_SHAPE = /^sk_(test|live)_[A-Za-z0-9]{20,100}$/;

/** Failed authentications allowed per client address and minute (docs/integration.md §7). */
export const AUTH_FAILURES_PER_MINUTE = 60;
const WINDOW_MS = 60_000;
/** Addresses tracked at once; past it the oldest window is dropped. */
const MAX_ADDRESSES = 100_000;

/**
 * The client an address stands for: an IPv4 address, or an IPv6 address's /64 (a host usually holds a
 * whole /64 and could otherwise change address for every guess). IPv4-mapped addresses are IPv4.
 */
export function clientOf(ip: string): string {
  if (!net.isIPv6(ip)) return ip;
  try {
    const v6 = ipaddr.IPv6.parse(ip);
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    return `${v6.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
  } catch {
    return ip;
  }
}

/**
 * Counts failed authentications per client address in fixed one-minute windows, in this process.
 * An address past the limit gets 429 for the rest of its window without a lookup, except with a
 * key this process has found valid before (a merchant behind the same NAT as a key-guesser keeps
 * working).
 */
export class AuthFailureLimit {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds until `address` may try again, or 0 when it may now. */
  blockedFor(address: string): number {
    const w = this.windows.get(clientOf(address));
    if (!w || w.count < AUTH_FAILURES_PER_MINUTE) return 0;
    const left = w.start + WINDOW_MS - this.now();
    return left > 0 ? Math.ceil(left / 1000) : 0;
  }

  /** Takes back a failure counted in advance, for a key that turned out good. */
  forgive(address: string): void {
    const w = this.windows.get(clientOf(address));
    if (w && w.count > 0) w.count--;
  }

  fail(ip: string): void {
    const address = clientOf(ip);
    const at = this.now();
    const w = this.windows.get(address);
    if (w && at - w.start < WINDOW_MS) {
      w.count++;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= MAX_ADDRESSES) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    this.windows.set(address, { start: at, count: 1 });
  }
}

/**
 * An onRequest hook: sets `request.principal` or answers 401/403, or 429 to an address with too
 * many failures. Written with `done` rather than async: a cached key (almost every request) is
 * answered without a promise.
 */
export function authHook(merchants: MerchantService, failures: AuthFailureLimit) {
  const counted = new WeakSet<Promise<unknown>>();
  return function authenticate(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    const key = match?.[1];
    const wellFormed = key !== undefined && KEY_SHAPE.test(key);
    const wait = failures.blockedFor(request.ip);
    if (wait > 0 && !(wellFormed && merchants.isKnownKey(key))) {
      done(tooManyFailures(wait));
      return;
    }
    const refuse = (err: AppError | undefined) => {
      if (err?.statusCode === 401) failures.fail(request.ip);
      done(err);
    };
    if (key === undefined) {
      refuse(new AppError('AUTH_MISSING', 'Authorization header with a Bearer API key is required'));
      return;
    }
    const found = wellFormed ? merchants.authenticate(key) : null;
    if (found instanceof Promise) {
      // A lookup is counted as a failure when it starts, and forgiven when it finds a key: requests
      // sent all at once would otherwise all pass the check above while their lookups are out.
      // Requests with the same key share one lookup (MerchantService), and it is counted once.
      if (!counted.has(found)) {
        counted.add(found);
        failures.fail(request.ip);
        found.then(
          (principal) => principal !== null && failures.forgive(request.ip),
          () => failures.forgive(request.ip),
        );
      }
      found.then((principal) => done(admit(request, principal)), done);
    } else {
      refuse(admit(request, found));
    }
  };
}

/** The 429 for an address past its failed API-key authentications. */
export function tooManyFailures(waitS: number): AppError {
  return new AppError(
    'RATE_LIMITED',
    `Too many failed authentications from this address; try again in ${waitS} s`,
    { retry_after_s: waitS },
    { 'Retry-After': String(waitS) },
  );
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
