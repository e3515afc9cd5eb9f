/**
 * Whether the providers can reach this gateway's notification endpoints: Setu and Cashfree post
 * to `{PUBLIC_URL}/channels/…/notifications` from the internet, over https. A PUBLIC_URL that is
 * plain http, a loopback or private address, or a name no public resolver knows (`localhost`, a
 * single label, `.local`) means no notification ever arrives, and pay-ins wait for polling.
 */
import { isIP } from 'node:net';
import { isBlockedAddress } from './address-guard.ts';

/** Names that never resolve on the public internet (RFC 6761, RFC 6762, RFC 8375 and common practice). */
const PRIVATE_SUFFIXES = [
  '.localhost',
  '.local',
  '.internal',
  '.lan',
  '.home.arpa',
  '.test',
  '.invalid',
  '.example',
];

/** Why the providers cannot reach `publicUrl`, or null when, as far as its text says, they can. */
export function publicUrlProblem(publicUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return 'it is not a URL';
  }
  if (url.protocol !== 'https:') return 'it is not https (the providers post notifications over https only)';
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host)) return isBlockedAddress(host) ? `${host} is not a public address` : null;
  if (host === 'localhost' || PRIVATE_SUFFIXES.some((s) => host.endsWith(s)))
    return `${host} is not a public name`;
  if (!host.includes('.')) return `${host} is a single-label name, not a public one`;
  return null;
}

/**
 * The warning `serve` and `channels check` give when a live channel is on and its notifications
 * cannot reach PUBLIC_URL, or null.
 */
export function notificationReachWarning(config: {
  publicUrl: string;
  setu: object | null;
  cashfree: object | null;
}): string | null {
  if (!config.setu && !config.cashfree) return null;
  const problem = publicUrlProblem(config.publicUrl);
  if (!problem) return null;
  return (
    `PUBLIC_URL ${config.publicUrl} cannot receive the live channels' notifications: ${problem}. ` +
    'Set PUBLIC_URL to the https address the providers reach this gateway at (see README, Going live).'
  );
}
