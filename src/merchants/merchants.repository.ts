/** SQL for merchants and their API keys. */
import type { Kysely } from 'kysely';
import type { ApiKeyTable, MerchantStatus, MerchantTable, Tables } from '../db/schema.ts';

export interface KeyOwner {
  key_id: string;
  merchant_id: string;
  name: string;
  mode: MerchantTable['mode'];
  status: MerchantStatus;
  vpa: string;
  callback_url: string | null;
}

export async function insertMerchant(db: Kysely<Tables>, merchant: MerchantTable): Promise<void> {
  await db.insertInto('merchants').values(merchant).execute();
}

export async function insertApiKey(db: Kysely<Tables>, key: ApiKeyTable): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

export async function findKeyOwner(db: Kysely<Tables>, keyHash: string): Promise<KeyOwner | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('merchants', 'merchants.id', 'api_keys.merchant_id')
    .select([
      'api_keys.id as key_id',
      'merchants.id as merchant_id',
      'merchants.name',
      'merchants.mode',
      'merchants.status',
      'merchants.vpa',
      'merchants.callback_url',
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function findMerchant(db: Kysely<Tables>, id: string): Promise<MerchantTable | undefined> {
  return db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listMerchants(db: Kysely<Tables>): Promise<MerchantTable[]> {
  return db.selectFrom('merchants').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function countMerchants(db: Kysely<Tables>): Promise<number> {
  const row = await db
    .selectFrom('merchants')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function revokeKeys(db: Kysely<Tables>, merchantId: string, at: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function updateMerchant(
  db: Kysely<Tables>,
  id: string,
  changes: Partial<Pick<MerchantTable, 'status' | 'callback_url'>>,
): Promise<boolean> {
  const result = await db.updateTable('merchants').set(changes).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Puts `secret` in place of the merchant's webhook secret, which becomes the previous one until
 * `previousUntil` (null: none). One statement, so rotations at the same time each keep the secret
 * they replaced.
 */
export async function rotateWebhookSecret(
  db: Kysely<Tables>,
  id: string,
  secret: string,
  previousUntil: number | null,
): Promise<boolean> {
  const result = await db
    .updateTable('merchants')
    .set((eb) => ({
      webhook_secret: secret,
      previous_webhook_secret: previousUntil === null ? null : eb.ref('webhook_secret'),
      previous_secret_until: previousUntil,
    }))
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Forgets every rotated-out webhook secret whose overlap has ended by `at`: the secret is deleted,
 * not merely unused. Returns how many were forgotten.
 */
export async function forgetEndedSecrets(db: Kysely<Tables>, at: number): Promise<number> {
  const result = await db
    .updateTable('merchants')
    .set({ previous_webhook_secret: null, previous_secret_until: null })
    .where('previous_secret_until', '<=', at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** When the next overlap ends (epoch ms), or null when no rotated-out secret is kept. */
export async function nextSecretEnd(db: Kysely<Tables>): Promise<number | null> {
  const row = await db
    .selectFrom('merchants')
    .select((eb) => eb.fn.min('previous_secret_until').as('until'))
    .where('previous_secret_until', 'is not', null)
    .executeTakeFirst();
  return row?.until == null ? null : Number(row.until);
}
