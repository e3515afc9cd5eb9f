/**
 * Merchants, their API keys and webhook secrets. Keys are shown once, at creation or rotation,
 * and stored only as SHA-256 hashes. `authenticate` keeps a short-lived cache so that a request
 * does not pay a database round-trip for its key, while a rotated or disabled key stops working
 * within `KEY_CACHE_MS`.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { ChannelFailure, type VpaRegistration, type VpaRegistry } from '../channels/channel.ts';
import type { Database } from '../db/database.ts';
import type { MerchantMode, MerchantStatus, MerchantTable, Tables } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { normalUrl } from '../outbound/urls.ts';
import { secretBase62, prefixedId, sha256Hex } from '../ids.ts';
import {
  countMerchants,
  findKeyOwner,
  findMerchant,
  insertApiKey,
  insertMerchant,
  listMerchants,
  revokeKeys,
  rotateWebhookSecret,
  updateMerchant,
  type KeyOwner,
} from './merchants.repository.ts';

/**
 * How long a key lookup is trusted: a rotated or revoked key, or a disabled merchant, stops working
 * within this (docs/decisions.md, "Authentication").
 */
export const KEY_CACHE_MS = 2000;
const KEY_CACHE_MAX = 10_000;
/**
 * Unknown keys are remembered apart from known ones, fewer of them, oldest out first: a stream of
 * made-up keys must not push the keys of real merchants out of the cache.
 */
const UNKNOWN_KEY_CACHE_MAX = 1_000;

export interface Principal {
  keyId: string;
  merchantId: string;
  merchantName: string;
  mode: MerchantMode;
  status: MerchantStatus;
  vpa: string;
  /** The merchant's default callback URL, used when a request names none. */
  callbackUrl: string | null;
}

export interface CreatedMerchant {
  merchant_id: string;
  name: string;
  api_key: string;
  webhook_secret: string;
  mode: MerchantMode;
}

export interface RotatedSecret {
  merchant_id: string;
  webhook_secret: string;
  /** When the previous secret stops signing (ISO 8601), or null when it stopped at once. */
  previous_secret_until: string | null;
}

export interface MerchantView {
  merchant_id: string;
  name: string;
  mode: MerchantMode;
  status: MerchantStatus;
  callback_url: string | null;
  vpa: string;
  created_at: string;
}

export interface NewMerchant {
  name: string;
  callbackUrl?: string | null;
  vpa?: string | null;
  live?: boolean;
  /** The id under which Setu already holds a live merchant's UPI id (`--setu-vpa-id`). */
  setuVpaId?: string | null;
}

/** Advisory-lock key that serialises the first-run merchant across processes. */
const FIRST_RUN_LOCK = 7_262_001;

export class MerchantNotFoundError extends Error {
  constructor(id: string) {
    super(`no merchant with id ${id}`);
  }
}

/**
 * Why `url` cannot be a merchant's default callback URL, or null when it can: https (http too
 * where private callback URLs are allowed), at most 512 characters, a URL.
 */
export function callbackUrlProblem(url: string, allowHttp: boolean): string | null {
  const schemes = allowHttp ? /^https?:\/\/\S+$/ : /^https:\/\/\S+$/;
  if (!schemes.test(url) || url.length > 512 || !URL.canParse(url))
    return `the callback URL must be an ${allowHttp ? 'http(s)' : 'https'} URL of at most 512 characters`;
  return null;
}

/** A UPI id: handle@psp. */
const VPA = /^[A-Za-z0-9._-]{2,256}@[A-Za-z][A-Za-z0-9.-]{1,63}$/;
/** A live merchant's UPI id, as Setu takes it (its document's merchantVpa pattern). */
const LIVE_VPA = /^[a-z0-9.-]+@[a-zA-Z]+$/;

/** Why `vpa` cannot be a merchant's UPI id, or null when it can (a live merchant needs one). */
export function vpaProblem(vpa: string | null, live: boolean): string | null {
  if (vpa !== null && !VPA.test(vpa)) return 'the UPI id must be handle@psp (such as shop@okaxis)';
  if (live && vpa === null) return 'a live merchant needs the UPI id customers pay it at';
  if (live && !LIVE_VPA.test(vpa ?? ''))
    return 'the UPI id of a live merchant takes lower-case letters, digits, . and - before the @ (Setu UPI)';
  return null;
}

function newApiKey(mode: MerchantMode): string {
  // 40 base62 characters: 238 bits of randomness.
  return `sk_${mode}_${secretBase62(40)}`;
}

/** A secret as Standard Webhooks serialises one: `whsec_` + padded base64 of 32 random bytes. */
function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function toView(m: MerchantTable): MerchantView {
  return {
    merchant_id: m.id,
    name: m.name,
    mode: m.mode,
    status: m.status,
    callback_url: m.callback_url,
    vpa: m.vpa,
    created_at: new Date(m.created_at).toISOString(),
  };
}

function ownerToPrincipal(owner: KeyOwner): Principal {
  return {
    keyId: owner.key_id,
    merchantId: owner.merchant_id,
    merchantName: owner.name,
    mode: owner.mode,
    status: owner.status,
    vpa: owner.vpa,
    callbackUrl: owner.callback_url,
  };
}

export class MerchantService {
  private readonly keyCache = new Map<string, { principal: Principal; until: number }>();
  private readonly unknownKeys = new Map<string, number>();
  private readonly lookups = new Map<string, Promise<Principal | null>>();

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly now: () => number = Date.now,
    /** WEBHOOK_SECRET_OVERLAP_S: how long a rotated-out webhook secret still signs. */
    private readonly secretOverlapS = 86_400,
    /** Where live merchants' UPI ids are registered (Setu), when that channel is configured. */
    private readonly vpas: VpaRegistry | null = null,
  ) {}

  /**
   * Creates a merchant. A live one's UPI id is registered with the pay-in channel first (outside
   * the transaction), and the merchant is created only when the channel answers it routable:
   * otherwise 400 VPA_NOT_ROUTABLE, or 503 CHANNEL_UNAVAILABLE when the channel could not be asked.
   * Without that channel a live merchant is 403 LIVE_CHANNEL_NOT_CONFIGURED, and without a UPI id
   * 400 BAD_REQUEST: the console and the CLI both come here, and neither creates one unregistered.
   */
  async create(input: NewMerchant): Promise<CreatedMerchant> {
    if (input.live) {
      if (!this.vpas)
        throw new AppError(
          'LIVE_CHANNEL_NOT_CONFIGURED',
          'a live merchant needs Setu to register its UPI id, and Setu is not configured (SETU_*, see docs/going-live.md); nothing was created',
        );
      if (!input.vpa)
        throw new AppError('BAD_REQUEST', 'a live merchant needs the UPI id customers pay it at');
      await this.registerVpa(input.vpa, input.setuVpaId ?? undefined);
    }
    return this.db.transaction().execute((tx) => this.insertNew(tx, input));
  }

  private async registerVpa(vpa: string, heldId: string | undefined): Promise<void> {
    let registration: VpaRegistration;
    try {
      registration = await this.vpas!.register(vpa, { referenceId: prefixedId('vpa', 16), heldId });
    } catch (err) {
      if (!(err instanceof ChannelFailure)) throw err;
      throw new AppError(
        'CHANNEL_UNAVAILABLE',
        `Setu could not be asked about ${vpa} (${err.message}); nothing was created, try again`,
        { provider_code: err.code },
        { 'Retry-After': '30' },
      );
    }
    if (!registration.routable)
      throw new AppError('VPA_NOT_ROUTABLE', `${vpa} cannot receive live pay-ins: ${registration.reason}`);
  }

  /**
   * Creates a merchant only when there is none yet (the first run of `serve`). The advisory lock
   * makes processes that start together on one database create one merchant between them.
   */
  async createIfNone(
    input: NewMerchant,
    locks: Pick<Database, 'advisoryLock'>,
  ): Promise<CreatedMerchant | null> {
    return this.db.transaction().execute(async (tx) => {
      await locks.advisoryLock(tx, FIRST_RUN_LOCK);
      if ((await countMerchants(tx)) > 0) return null;
      return this.insertNew(tx, input);
    });
  }

  private async insertNew(tx: Kysely<Tables>, input: NewMerchant): Promise<CreatedMerchant> {
    const mode: MerchantMode = input.live ? 'live' : 'test';
    const id = prefixedId('mer', 16);
    const apiKey = newApiKey(mode);
    const webhookSecret = newWebhookSecret();
    const at = this.now();
    await insertMerchant(tx, {
      id,
      name: input.name,
      mode,
      status: 'active',
      callback_url: normalUrl(input.callbackUrl),
      vpa: input.vpa || `${id.toLowerCase()}@paygate`,
      webhook_secret: webhookSecret,
      previous_webhook_secret: null,
      previous_secret_until: null,
      created_at: at,
    });
    await insertApiKey(tx, {
      id: prefixedId('key', 16),
      merchant_id: id,
      key_hash: sha256Hex(apiKey),
      key_prefix: apiKey.slice(0, 12),
      created_at: at,
      revoked_at: null,
    });
    return { merchant_id: id, name: input.name, api_key: apiKey, webhook_secret: webhookSecret, mode };
  }

  async list(): Promise<MerchantView[]> {
    return (await listMerchants(this.db)).map(toView);
  }

  async count(): Promise<number> {
    return countMerchants(this.db);
  }

  async get(id: string): Promise<MerchantTable> {
    const merchant = await findMerchant(this.db, id);
    if (!merchant) throw new MerchantNotFoundError(id);
    return merchant;
  }

  /** Revokes every key of the merchant and issues a new one, in one transaction. */
  async rotateKey(merchantId: string): Promise<{ merchant_id: string; api_key: string }> {
    const merchant = await this.get(merchantId);
    const apiKey = newApiKey(merchant.mode);
    const at = this.now();
    await this.db.transaction().execute(async (tx) => {
      await revokeKeys(tx, merchantId, at);
      await insertApiKey(tx, {
        id: prefixedId('key', 16),
        merchant_id: merchantId,
        key_hash: sha256Hex(apiKey),
        key_prefix: apiKey.slice(0, 12),
        created_at: at,
        revoked_at: null,
      });
    });
    this.forgetKeys();
    return { merchant_id: merchantId, api_key: apiKey };
  }

  /**
   * Issues a new webhook secret. The one it replaces keeps signing beside it (a second
   * `webhook-signature`) for the overlap, so that merchants can switch their verifiers without
   * refusing a callback; a rotation within the overlap drops the oldest. With `overlap: false`
   * (`--no-overlap`) the one it replaces is deleted at once. Returns when the overlap ends, or null
   * without one; `SecretOverlapScheduler` deletes the old secret then.
   */
  async rotateSecret(merchantId: string, options: { overlap?: boolean } = {}): Promise<RotatedSecret> {
    const webhookSecret = newWebhookSecret();
    const at = this.now();
    const overlap = (options.overlap ?? true) && this.secretOverlapS > 0;
    const until = overlap ? at + this.secretOverlapS * 1000 : null;
    const rotated = await rotateWebhookSecret(this.db, merchantId, webhookSecret, until);
    if (!rotated) throw new MerchantNotFoundError(merchantId);
    this.onSecretRotated?.(until);
    return {
      merchant_id: merchantId,
      webhook_secret: webhookSecret,
      previous_secret_until: until === null ? null : new Date(until).toISOString(),
    };
  }

  /** Told when a rotation leaves an old secret to forget at `until` (the scheduler in this process). */
  onSecretRotated: ((until: number | null) => void) | null = null;

  /** Sets (or, with null, clears) the callback URL used when a request names none. */
  async setCallbackUrl(merchantId: string, url: string | null): Promise<MerchantView> {
    if (!(await updateMerchant(this.db, merchantId, { callback_url: normalUrl(url) })))
      throw new MerchantNotFoundError(merchantId);
    this.forgetKeys();
    return toView(await this.get(merchantId));
  }

  async setStatus(merchantId: string, status: MerchantStatus): Promise<MerchantView> {
    if (!(await updateMerchant(this.db, merchantId, { status }))) throw new MerchantNotFoundError(merchantId);
    this.forgetKeys();
    return toView(await this.get(merchantId));
  }

  /**
   * The owner of an API key, or null for an unknown or revoked key. Answers without a promise when
   * the key's lookup is cached (almost every request), so the auth hook can let the request go on
   * synchronously.
   */
  authenticate(apiKey: string): Principal | null | Promise<Principal | null> {
    const keyHash = sha256Hex(apiKey);
    const at = this.now();
    const cached = this.cached(keyHash, at);
    if (cached !== undefined) return cached;
    // Requests that arrive together with one key share its lookup.
    let lookup = this.lookups.get(keyHash);
    if (!lookup) {
      lookup = this.lookUp(keyHash, at).finally(() => this.lookups.delete(keyHash));
      this.lookups.set(keyHash, lookup);
    }
    return lookup;
  }

  /**
   * Whether this process has found `apiKey` to be a merchant's key before (its lookup may since have
   * expired). An address that failed too often may still use such a key: it is looked up as usual.
   */
  isKnownKey(apiKey: string): boolean {
    return this.keyCache.has(sha256Hex(apiKey));
  }

  private cached(keyHash: string, at: number): Principal | null | undefined {
    const known = this.keyCache.get(keyHash);
    if (known && known.until > at) return known.principal;
    const unknownUntil = this.unknownKeys.get(keyHash);
    if (unknownUntil !== undefined && unknownUntil > at) return null;
    return undefined;
  }

  private async lookUp(keyHash: string, at: number): Promise<Principal | null> {
    const owner = await findKeyOwner(this.db, keyHash);
    const until = at + KEY_CACHE_MS;
    if (!owner) {
      this.unknownKeys.delete(keyHash);
      if (this.unknownKeys.size >= UNKNOWN_KEY_CACHE_MAX) {
        const oldest = this.unknownKeys.keys().next().value;
        if (oldest !== undefined) this.unknownKeys.delete(oldest);
      }
      this.unknownKeys.set(keyHash, until);
      return null;
    }
    const principal = ownerToPrincipal(owner);
    this.keyCache.delete(keyHash);
    if (this.keyCache.size >= KEY_CACHE_MAX) {
      const oldest = this.keyCache.keys().next().value;
      if (oldest !== undefined) this.keyCache.delete(oldest);
    }
    this.keyCache.set(keyHash, { principal, until });
    return principal;
  }

  /**
   * After a key or a merchant's status changes, every cached lookup is asked again. Known keys stay
   * known (expired, not deleted), so they keep their way past the failed-authentication limit.
   */
  private forgetKeys(): void {
    for (const entry of this.keyCache.values()) entry.until = 0;
    this.unknownKeys.clear();
  }
}
