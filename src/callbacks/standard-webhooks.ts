/**
 * The headers of one callback attempt (CONTRACT §7): the seed's `X-Verification-Token` and the
 * Standard Webhooks headers beside it, for every kind of callback the outbox carries. Standard
 * Webhooks signs the whole body with the event's id and the attempt's time, so a body changed in
 * flight or an old attempt replayed later fails where the seed's token alone would not.
 */
import { createHmac } from 'node:crypto';
import { signBody } from './signature.ts';

const SECRET_PREFIX = 'whsec_';

/** A merchant's webhook secrets as they sign at one moment. */
export interface SigningSecrets {
  current: string;
  /** The secret before the last rotation, or null. */
  previous: string | null;
  /** Until when (epoch ms) the previous secret signs beside the current one. */
  previousUntil: number | null;
}

/**
 * The HMAC key of a webhook secret: the base64 decoding of the text after `whsec_`, as the
 * Standard Webhooks libraries read a secret. Secrets of 40 base62 characters decode as they are
 * (every base62 character is a base64 one, and 40 is a whole number of base64 quads).
 */
export function signingKey(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
}

/** One Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function standardSignature(
  secret: string,
  webhookId: string,
  timestampS: number,
  body: string,
): string {
  const mac = createHmac('sha256', signingKey(secret)).update(`${webhookId}.${timestampS}.${body}`);
  return `v1,${mac.digest('base64')}`;
}

/** The secrets that sign at `at`: the current one first, then the previous one while its overlap lasts. */
export function signingSecretsAt(secrets: SigningSecrets, at: number): string[] {
  const { current, previous, previousUntil } = secrets;
  return previous !== null && previousUntil !== null && at < previousUntil ? [current, previous] : [current];
}

export interface Attempt {
  /** The event's `webhook-id`, the same on every retry and resend of it. */
  eventId: string;
  body: string;
  /** 1 for the first attempt of a delivery. */
  attemptNo: number;
  /** When the attempt is made, epoch ms. */
  at: number;
}

/** The signed headers of one attempt. The seed's token is signed with the current secret only. */
export function callbackHeaders(secrets: SigningSecrets, attempt: Attempt): Record<string, string> {
  const timestampS = Math.floor(attempt.at / 1000);
  return {
    'x-verification-token': signBody(secrets.current, attempt.body),
    'x-callback-attempt': String(attempt.attemptNo),
    'webhook-id': attempt.eventId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signingSecretsAt(secrets, attempt.at)
      .map((secret) => standardSignature(secret, attempt.eventId, timestampS, attempt.body))
      .join(' '),
  };
}
