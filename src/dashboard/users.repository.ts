/** SQL of the console's users as operators manage them: the list, disabling, passwords, and ending sessions. */
import type { Kysely } from 'kysely';
import type { MerchantStatus, Tables, UserTable } from '../db/schema.ts';

type Db = Kysely<Tables>;

/** A user as the list shows them (never the password hash). */
export type UserRow = Omit<UserTable, 'password_hash'>;

const USER_COLUMNS = ['id', 'email', 'role', 'merchant_id', 'created_at', 'disabled_at'] as const;

/** Every user, or a merchant's users, oldest first. */
export async function listUsers(db: Db, merchantId: string | null): Promise<UserRow[]> {
  let q = db.selectFrom('users').select(USER_COLUMNS);
  if (merchantId !== null) q = q.where('merchant_id', '=', merchantId);
  return q.orderBy('created_at').orderBy('id').execute();
}

export async function findUserById(db: Db, id: string): Promise<UserTable | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The status of the merchant a user belongs to; null for an operator. */
export async function merchantStatusOf(
  db: Db,
  user: Pick<UserTable, 'merchant_id'>,
): Promise<MerchantStatus | null> {
  if (user.merchant_id === null) return null;
  const m = await db
    .selectFrom('merchants')
    .select('status')
    .where('id', '=', user.merchant_id)
    .executeTakeFirst();
  return m?.status ?? null;
}

export async function setUserDisabled(db: Db, id: string, disabledAt: number | null): Promise<void> {
  await db.updateTable('users').set({ disabled_at: disabledAt }).where('id', '=', id).execute();
}

export async function setPasswordHash(db: Db, id: string, hash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: hash }).where('id', '=', id).execute();
}

/** Ends every session of a user, or every one but `keep` (the browser that changed its own password). */
export async function deleteSessionsOf(db: Db, userId: string, keep: string | null = null): Promise<void> {
  let q = db.deleteFrom('sessions').where('user_id', '=', userId);
  if (keep !== null) q = q.where('token_hash', '!=', keep);
  await q.execute();
}
