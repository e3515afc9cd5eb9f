/**
 * Dashboard accounts: users with scrypt password hashes, sessions kept in the database (any
 * process serves any session), CSRF tokens, and the limit on failed sign-ins.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tables, UserRole } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { secretBase62, prefixedId, sha256Hex } from '../ids.ts';
import { clientOf } from '../http/auth.ts';
import { MerchantNotFoundError } from '../merchants/merchants.service.ts';
import {
  clearFailures,
  countFailuresSince,
  deleteEndedSessions,
  deleteOldFailures,
  deleteSession,
  failuresSince,
  findSession,
  findUserByEmail,
  insertSession,
  insertUser,
  recordFailures,
  forgetFailures,
  touchSession,
  type SessionUser,
} from './dashboard.repository.ts';
import { merchantStatusOf } from './users.repository.ts';
import { insertAuditAction } from '../audit/audit.repository.ts';

/** A session ends after this long without a request (CONTRACT §11). */
export const IDLE_EXPIRY_MS = 12 * 3600_000;
/** last_seen_at is written at most this often per session, not on every page. */
const TOUCH_EVERY_MS = 60_000;

/** A session ends this long after its sign-in, however active (CONTRACT §11). */
export const ABSOLUTE_EXPIRY_MS = 7 * 24 * 3600_000;

/**
 * The sign-in limit (CONTRACT §11). Failed sign-ins count within a window per (account, client
 * address) pair, per account and per address (an IPv6 address counts as its /64). Only a pair is
 * ever refused: past FAILURES_PER_PAIR its next attempt is 429 without a password check. An account
 * or an address with more than SLOW_AFTER failures (from anywhere, or of anyone) is only slowed: each
 * attempt waits SLOW_STEP_MS, doubling with every further failure up to SLOW_MAX_MS, before its
 * password is checked, so that guessing from many addresses cannot lock a user out, and guessing
 * behind a shared proxy cannot lock out everyone behind it.
 */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const FAILURES_PER_PAIR = 5;
export const SLOW_AFTER = 5;
export const SLOW_STEP_MS = 100;
export const SLOW_MAX_MS = 5_000;

/** scrypt at N = 2^15, r = 8: 32 MiB and some 60 ms per hash on this class of machine. */
const SCRYPT: ScryptOptions = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;

export const EMAIL = /^[^\s@<>"]{1,64}@[A-Za-z0-9.-]{1,189}\.[A-Za-z]{2,}$/;
export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

/** What a console user's request can be refused with, and the status the console answers it with. */
export const ACCOUNT_ERRORS = {
  /** A bad email or password. */
  INVALID_USER: 400,
  WRONG_PASSWORD: 400,
  USER_EXISTS: 409,
  USER_NOT_FOUND: 404,
  /** The user, or their merchant, is disabled. */
  USER_DISABLED: 403,
} as const;

export class AccountError extends Error {
  constructor(
    readonly code: keyof typeof ACCOUNT_ERRORS,
    message: string,
  ) {
    super(message);
  }

  get statusCode(): number {
    return ACCOUNT_ERRORS[this.code];
  }
}

/** Why a password cannot be used, or null when it can. */
export function passwordProblem(password: string): string | null {
  return password.length < PASSWORD_MIN || password.length > PASSWORD_MAX
    ? `the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters long`
    : null;
}

/** A lower-cased email, or AccountError INVALID_USER when it is not an address. */
export function normalEmail(input: string): string {
  const email = input.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email))
    throw new AccountError('INVALID_USER', 'the email must be an address such as ops@example.com');
  return email;
}

export interface CreatedUser {
  user_id: string;
  email: string;
  role: UserRole;
  merchant_id: string | null;
  /** The generated password, shown once; null when the caller chose it. */
  password: string | null;
}

/** Who is signed in, as the routes see them. */
export interface DashboardUser {
  userId: string;
  email: string;
  role: UserRole;
  /** The merchant a merchant's user sees; null for an operator. */
  merchantId: string | null;
  /** That merchant's name, which the header shows; null for an operator. */
  merchantName: string | null;
  csrfToken: string;
  tokenHash: string;
}

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A stored hash of `password`: scrypt at `cost` (the service's own unless told), which the hash records. */
export async function hashPassword(password: string, cost: ScryptOptions = SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { ...cost, maxmem: SCRYPT.maxmem });
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function checkPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Compared against when the email is unknown, so that a wrong address costs as long as a wrong password. */
let decoyHash: Promise<string> | null = null;

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The scopes a password attempt counts against: the (account, address) pair, the account, the address. */
export type FailureScopes = [pair: string, account: string, address: string];

export function failureScopes(email: string, address: string): FailureScopes {
  const client = clientOf(address);
  return [`pair:${client} ${email}`, `email:${email}`, `ip:${client}`];
}

/** How long an attempt waits when its account or address has `failures` others within the window. */
export function slowdownMs(failures: number): number {
  return failures <= SLOW_AFTER ? 0 : Math.min(SLOW_MAX_MS, SLOW_STEP_MS * 2 ** (failures - SLOW_AFTER - 1));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Records a password attempt as a failure of each scope and returns its ids (to be forgotten once
 * the password proves right). 429 RATE_LIMITED, with the attempt taken back, when its pair has more
 * failures than FAILURES_PER_PAIR within the window, this attempt's included: attempts sent together
 * each count the others, so no more than the limit of them get their password checked. Otherwise it
 * returns after the account's or the address's slowdown. `what` names the failures in the message:
 * "failed sign-ins", "wrong passwords".
 */
export async function beginPasswordAttempt(
  db: Kysely<Tables>,
  scopes: FailureScopes,
  at: number,
  what: string,
): Promise<number[]> {
  const attempt = await recordFailures(db, scopes, at);
  const since = at - SIGN_IN_WINDOW_MS;
  const times = await failuresSince(db, scopes[0], since);
  if (times.length > FAILURES_PER_PAIR) {
    await forgetFailures(db, attempt);
    // Allowed again once all but `limit - 1` of the others have left the window.
    const waitS = Math.max(
      1,
      Math.ceil((times[times.length - 1 - FAILURES_PER_PAIR]! + SIGN_IN_WINDOW_MS - at) / 1000),
    );
    throw new AppError(
      'RATE_LIMITED',
      `Too many ${what} from this address; try again in ${Math.ceil(waitS / 60)} min`,
      { retry_after_s: waitS },
      { 'Retry-After': String(waitS) },
    );
  }
  const counted = Math.max(
    await countFailuresSince(db, scopes[1], since),
    await countFailuresSince(db, scopes[2], since),
  );
  // Counted with this attempt's own rows, which are not (yet) a failure.
  const wait = slowdownMs(counted - 1);
  if (wait > 0) await pause(wait);
  return attempt;
}

/**
 * A password attempt that proved right: the pair's count starts again, and the attempt is taken
 * back. The account's and the address's counts stay: failures from elsewhere are not undone by it.
 */
export async function passwordAttemptRight(
  db: Kysely<Tables>,
  scopes: FailureScopes,
  attempt: number[],
): Promise<void> {
  await clearFailures(db, scopes[0]);
  await forgetFailures(db, attempt);
}

export class AccountService {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly now: () => number = Date.now,
    /**
     * scrypt's cost for the users it creates. A hash records its cost and is checked at it, so
     * tests that sign in hundreds of times create their users cheaper; the service never does.
     */
    private readonly hashCost: ScryptOptions = SCRYPT,
  ) {}

  async createUser(input: {
    email: string;
    role: UserRole;
    merchantId: string | null;
    password: string | null;
    /** Who creates the user, for the audit log: an operator's email, or `cli`. */
    actor?: string;
  }): Promise<CreatedUser> {
    const email = normalEmail(input.email);
    const password = input.password ?? secretBase62(20);
    const problem = passwordProblem(password);
    if (problem) throw new AccountError('INVALID_USER', problem);
    if (input.role === 'merchant') {
      const merchant = await this.db
        .selectFrom('merchants')
        .select('id')
        .where('id', '=', input.merchantId ?? '')
        .executeTakeFirst();
      if (!merchant) throw new MerchantNotFoundError(input.merchantId ?? '');
    }
    if (await findUserByEmail(this.db, email))
      throw new AccountError('USER_EXISTS', `a user with the email ${email} already exists`);
    const user = {
      id: prefixedId('usr', 16),
      email,
      role: input.role,
      merchant_id: input.role === 'merchant' ? input.merchantId : null,
      password_hash: await hashPassword(password, this.hashCost),
      created_at: this.now(),
      disabled_at: null,
    };
    await insertUser(this.db, user).catch((err: unknown) => {
      // Two creations of one address at once: the unique key decides.
      if (/unique|duplicate/i.test(String((err as Error).message)))
        throw new AccountError('USER_EXISTS', `a user with the email ${email} already exists`);
      throw err;
    });
    await insertAuditAction(this.db, {
      at: user.created_at,
      actor: input.actor ?? 'cli',
      action: 'user_create',
      merchant_id: user.merchant_id,
      detail: `created ${user.role} user ${email}`,
    });
    return {
      user_id: user.id,
      email,
      role: user.role,
      merchant_id: user.merchant_id,
      password: input.password === null ? password : null,
    };
  }

  /**
   * Signs a user in: a new session's token (for the cookie) or null when the email or password is
   * wrong. 429 RATE_LIMITED, before the password is even checked, once this account has failed
   * too often from this address within the window; slower, never refused, when it has failed often
   * from elsewhere (`beginPasswordAttempt`).
   */
  async signIn(emailInput: string, password: string, address: string): Promise<string | null> {
    const at = this.now();
    const email = emailInput.trim().toLowerCase().slice(0, 254);
    const scopes = failureScopes(email, address);
    const attempt = await beginPasswordAttempt(this.db, scopes, at, 'failed sign-ins');
    const user = await findUserByEmail(this.db, email);
    decoyHash ??= hashPassword(secretBase62(20));
    const ok = await checkPassword(password.slice(0, PASSWORD_MAX), user?.password_hash ?? (await decoyHash));
    if (!user || !ok) return null;
    await passwordAttemptRight(this.db, scopes, attempt);
    // Told only to whoever knows the password: the account exists but may not be used.
    if (user.disabled_at !== null || (await merchantStatusOf(this.db, user)) === 'disabled')
      throw new AccountError(
        'USER_DISABLED',
        user.disabled_at !== null
          ? 'This account is disabled. Ask an operator to enable it.'
          : 'The merchant of this account is disabled. Ask an operator to enable it.',
      );
    const token = secretBase62(43);
    await insertSession(this.db, {
      token_hash: sha256Hex(token),
      user_id: user.id,
      csrf_token: secretBase62(32),
      created_at: at,
      last_seen_at: at,
    });
    // Housekeeping on the rare path: sessions and failures nobody can use any more.
    await deleteEndedSessions(this.db, at - IDLE_EXPIRY_MS, at - ABSOLUTE_EXPIRY_MS);
    await deleteOldFailures(this.db, at - SIGN_IN_WINDOW_MS);
    return token;
  }

  /**
   * The signed-in user of a session token, or null when there is none, it has been idle too long,
   * or it was signed in ABSOLUTE_EXPIRY_MS ago, however active since.
   */
  async session(token: string): Promise<DashboardUser | null> {
    const tokenHash = sha256Hex(token);
    const found: SessionUser | undefined = await findSession(this.db, tokenHash);
    const at = this.now();
    if (!found) return null;
    // A disabled user, or a user of a disabled merchant, is signed out at their next request.
    if (
      at - found.last_seen_at >= IDLE_EXPIRY_MS ||
      at - found.created_at >= ABSOLUTE_EXPIRY_MS ||
      found.disabled_at !== null ||
      found.merchant_status === 'disabled'
    ) {
      await deleteSession(this.db, tokenHash);
      return null;
    }
    if (at - found.last_seen_at >= TOUCH_EVERY_MS) await touchSession(this.db, tokenHash, at);
    return {
      userId: found.user_id,
      email: found.email,
      role: found.role,
      merchantId: found.merchant_id,
      merchantName: found.merchant_name,
      csrfToken: found.csrf_token,
      tokenHash,
    };
  }

  async signOut(user: DashboardUser): Promise<void> {
    await deleteSession(this.db, user.tokenHash);
  }

  /** Ends the session of a token, if there is one (the browser's earlier session, at a new sign-in). */
  async endSession(token: string): Promise<void> {
    await deleteSession(this.db, sha256Hex(token));
  }
}
