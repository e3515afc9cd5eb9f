/**
 * Random identifiers and secrets, from the operating system's CSPRNG. A simulation may set a seeded
 * source for identifiers (`seedIds`), so that one seed gives one history; secrets (`secretBase62`)
 * always come from the CSPRNG.
 */
import { hash, randomFillSync, randomInt } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Random bytes drawn from the CSPRNG 4 KB at a time, each byte used once (as Node's randomUUID
 * keeps its own cache): one system call per many ids instead of one per id, a system call being
 * a noticeable part of a creation's CPU (docs/performance.md).
 */
const pool = Buffer.alloc(4096);
let poolUsed = pool.length;

/** A seeded byte source that replaces the CSPRNG for ids (the simulator's); null in service. */
let seeded: (() => number) | null = null;

/**
 * Makes ids (not secrets) come from `next` (a byte 0–255 per call) instead of the CSPRNG, or, with
 * null, from the CSPRNG again. Only the simulator calls it: its histories must repeat from their seed.
 */
export function seedIds(next: (() => number) | null): void {
  seeded = next;
}

function randomByte(): number {
  return seeded ? seeded() : secretByte();
}

function secretByte(): number {
  if (poolUsed === pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  return pool[poolUsed++] as number;
}

/** `length` characters of [A-Za-z0-9] from `byte`, each uniform (rejection sampling keeps the modulo unbiased). */
function base62Of(length: number, byte: () => number): string {
  let out = '';
  while (out.length < length) {
    const b = byte();
    if (b < 248) out += BASE62[b % 62];
  }
  return out;
}

/** An identifier's `length` characters of [A-Za-z0-9]. */
export function base62(length: number): string {
  return base62Of(length, randomByte);
}

/** A secret's (a key, a password, a session or CSRF token) `length` characters of [A-Za-z0-9]: always the CSPRNG's. */
export function secretBase62(length: number): string {
  return base62Of(length, secretByte);
}

const PAYMENT_ID = /^[A-Za-z0-9]{32}$/;

/** Whether `id` has a payment_id's shape (any other cannot name a transaction). */
export function isPaymentId(id: string): boolean {
  return PAYMENT_ID.test(id);
}

/** A transaction's payment_id: 32 base62 characters, about 190 bits. */
export function newPaymentId(): string {
  return base62(32);
}

/** How many characters of its pay-in's payment_id a refund's id begins with. Fixed: `0018_refund_ids` indexes by it. */
export const REFUND_ID_PREFIX = 20;

/**
 * A refund's refund_id: 32 characters like a payment_id, the first `REFUND_ID_PREFIX` its pay-in's
 * and the rest (12 base62 characters, about 71 bits) random, so that the refunds of a pay-in sort
 * next to it. A `payinId` that is not a payment_id's shape (the refund will be refused) gets a
 * random id.
 */
export function newRefundId(payinId: string): string {
  if (!isPaymentId(payinId)) return newPaymentId();
  return payinId.slice(0, REFUND_ID_PREFIX) + base62(32 - REFUND_ID_PREFIX);
}

/** 12 decimal digits, the shape of a bank UTR. */
export function newUtr(): string {
  if (seeded) {
    const next = seeded;
    return String(1 + (next() % 9)) + Array.from({ length: 11 }, () => next() % 10).join('');
  }
  return (
    String(randomInt(1, 10)) +
    String(randomInt(0, 100_000)).padStart(5, '0') +
    String(randomInt(0, 1_000_000)).padStart(6, '0')
  );
}

export function sha256Hex(text: string): string {
  // The one-shot form: no Hash object per call (it runs on every request's key and idempotency hash).
  return hash('sha256', text, 'hex');
}

/** A short random id with a readable prefix, for rows that the API never names. */
export function prefixedId(prefix: string, length = 20): string {
  return `${prefix}_${base62(length)}`;
}
