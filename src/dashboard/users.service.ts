/**
 * Managing the console's users (CONTRACT §11): the list, disabling and enabling, a password reset by
 * an operator or the CLI, and a user's change of their own password. Disabling a user or resetting
 * their password ends every session of theirs at once; each of these is written to the audit log.
 */
import type { Kysely } from 'kysely';
import type { Tables, UserTable } from '../db/schema.ts';
import { secretBase62 } from '../ids.ts';
import {
  AccountError,
  beginPasswordAttempt,
  checkPassword,
  failureScopes,
  hashPassword,
  normalEmail,
  passwordAttemptRight,
  passwordProblem,
  type DashboardUser,
} from './accounts.service.ts';
import { findUserByEmail } from './dashboard.repository.ts';
import {
  deleteSessionsOf,
  findUserById,
  listUsers,
  setPasswordHash,
  setUserDisabled,
  type UserRow,
} from './users.repository.ts';
import { insertAuditAction } from '../audit/audit.repository.ts';

export type { UserRow } from './users.repository.ts';

/** A user named by their email (the CLI) or their id (the console's buttons). */
export type UserRef = { email: string } | { id: string };

export interface UserView {
  user_id: string;
  email: string;
  role: UserTable['role'];
  merchant_id: string | null;
  status: 'active' | 'disabled';
  created_at: string;
}

export function userView(u: UserRow): UserView {
  return {
    user_id: u.id,
    email: u.email,
    role: u.role,
    merchant_id: u.merchant_id,
    status: u.disabled_at === null ? 'active' : 'disabled',
    created_at: new Date(u.created_at).toISOString(),
  };
}

export class UserService {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly now: () => number = Date.now,
  ) {}

  async list(merchantId: string | null): Promise<UserView[]> {
    return (await listUsers(this.db, merchantId)).map(userView);
  }

  private async find(ref: UserRef): Promise<UserTable> {
    const user =
      'email' in ref
        ? await findUserByEmail(this.db, normalEmail(ref.email))
        : await findUserById(this.db, ref.id);
    if (!user)
      throw new AccountError(
        'USER_NOT_FOUND',
        `there is no user ${'email' in ref ? ref.email.trim() : ref.id}`,
      );
    return user;
  }

  /**
   * Disables or enables a user; `actor` is who asks (an operator's email, or `cli`). A disabled
   * user's sessions end now. An operator cannot disable themselves (nobody might be left to undo it).
   */
  async setDisabled(actor: { email: string; userId: string | null }, ref: UserRef, disabled: boolean) {
    const user = await this.find(ref);
    if (disabled && user.id === actor.userId)
      throw new AccountError('INVALID_USER', 'you cannot disable your own account');
    const at = this.now();
    const disabledAt = disabled ? (user.disabled_at ?? at) : null;
    await setUserDisabled(this.db, user.id, disabledAt);
    if (disabled) await deleteSessionsOf(this.db, user.id);
    await this.record(
      actor.email,
      disabled ? 'user_disable' : 'user_enable',
      user,
      `${disabled ? 'disabled' : 'enabled'} user ${user.email}`,
    );
    return userView({ ...user, disabled_at: disabledAt });
  }

  /** Sets a new password (`password`, or a generated one shown once) and ends every session of the user. */
  async resetPassword(actor: string, ref: UserRef, password: string | null) {
    const user = await this.find(ref);
    const chosen = password ?? secretBase62(20);
    const problem = passwordProblem(chosen);
    if (problem) throw new AccountError('INVALID_USER', problem);
    await setPasswordHash(this.db, user.id, await hashPassword(chosen));
    await deleteSessionsOf(this.db, user.id);
    await this.record(actor, 'user_reset_password', user, `reset the password of ${user.email}`);
    return { user_id: user.id, email: user.email, password: password === null ? chosen : null };
  }

  /**
   * A signed-in user's change of their own password from `address`: the current one must be right.
   * A wrong one counts as a failed sign-in of the account and the address (a stolen session is no
   * way round the sign-in limit), and past the limit the answer is 429 RATE_LIMITED without a
   * check. Their other sessions end; the browser that changed it stays signed in.
   */
  async changePassword(
    signedIn: DashboardUser,
    current: string,
    next: string,
    address: string,
  ): Promise<void> {
    const user = await this.find({ id: signedIn.userId });
    const scopes = failureScopes(user.email, address);
    const attempt = await beginPasswordAttempt(this.db, scopes, this.now(), 'wrong passwords');
    if (!(await checkPassword(current.slice(0, 256), user.password_hash)))
      throw new AccountError('WRONG_PASSWORD', 'The current password is wrong.');
    await passwordAttemptRight(this.db, scopes, attempt);
    const problem = passwordProblem(next);
    if (problem) throw new AccountError('INVALID_USER', `The new password: ${problem}.`);
    await setPasswordHash(this.db, user.id, await hashPassword(next));
    await deleteSessionsOf(this.db, user.id, signedIn.tokenHash);
    await this.record(user.email, 'user_change_password', user, `changed their own password`);
  }

  private async record(actor: string, action: string, user: UserTable, detail: string) {
    await insertAuditAction(this.db, {
      at: this.now(),
      actor,
      action,
      merchant_id: user.merchant_id,
      detail,
    });
  }
}
