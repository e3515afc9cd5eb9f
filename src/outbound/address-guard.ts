/**
 * Which addresses a callback may connect to. A merchant chooses the callback URL, so
 * without a guard the gateway could be made to POST into its own network: the database, an admin
 * port, the cloud metadata service at 169.254.169.254. Only public unicast addresses pass.
 *
 * The check runs on the address actually connected to, at send time: hostnames go through
 * `guardedLookup` (handed to undici's connector, so the socket connects to exactly the address that
 * was checked, which also defeats DNS rebinding between a check and the connect), and literal IP
 * hosts, which never reach a lookup, are checked by `guardConnector` before any socket is opened.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { buildConnector } from 'undici';
import { undici } from './undici.ts';

/** Raised instead of connecting to a blocked address; recorded as error kind `blocked_address`. */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_BLOCKED_ADDRESS';

  constructor(readonly address: string) {
    super(`callback target ${address} is not a public address`);
    this.name = 'BlockedAddressError';
  }
}

/**
 * IPv6 addresses that may be globally routable: global unicast (2000::/3) less the special-purpose
 * blocks inside it (IANA's IPv6 Special-Purpose Address Registry): IETF protocol assignments
 * 2001::/23 (Teredo, benchmarking, ORCHID …), documentation 2001:db8::/32 and 3fff::/20, 6to4
 * 2002::/16. Everything outside 2000::/3 (loopback, IPv4-compatible ::/96, NAT64 64:ff9b::/96,
 * unique local, link local, multicast, discard …) is blocked without being named.
 */
const IPV6_GLOBAL = ipaddr.parseCIDR('2000::/3');
const IPV6_SPECIAL = ['2001::/23', '2001:db8::/32', '2002::/16', '3fff::/20'].map((c) => ipaddr.parseCIDR(c));

/**
 * True unless `address` is a globally routable unicast address. IPv4: ipaddr.js names every
 * special range (loopback, private, linkLocal, carrierGradeNat, multicast, broadcast, reserved,
 * as112, amt …) and calls the rest `unicast`. IPv6 by allow-list (`IPV6_GLOBAL` less
 * `IPV6_SPECIAL`), so an address ipaddr.js calls `unicast` outside global unicast (`::7f00:1`,
 * IPv4-compatible) is blocked. IPv4-mapped addresses (::ffff:10.0.0.1) are blocked as well: a
 * callback URL names an IPv4 target in its IPv4 form. Anything that does not parse is blocked.
 */
export function isBlockedAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (!v6.match(IPV6_GLOBAL)) return true;
  if (IPV6_SPECIAL.some((range) => v6.match(range))) return true;
  return v6.range() !== 'unicast';
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `net.connect`: resolves like `dns.lookup`, then refuses the host when any of its
 * addresses is blocked. Refusing the whole name (rather than keeping its public addresses) is
 * deliberate: a name that mixes public and internal answers is a rebinding attempt more often than
 * a mistake.
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const blocked = addresses.find((a) => isBlockedAddress(a.address));
    if (blocked) return callback(new BlockedAddressError(blocked.address) as NodeJS.ErrnoException, []);
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first)
      return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}

/** undici's connector with the guard: literal IPs are checked here, names in `guardedLookup`. */
export function guardConnector(options: { timeout: number }): buildConnector.connector {
  const connect = undici().buildConnector({ timeout: options.timeout, lookup: guardedLookup as never });
  return (opts, callback) => {
    // undici hands IPv6 literals over without their brackets.
    if (net.isIP(opts.hostname) !== 0 && isBlockedAddress(opts.hostname)) {
      callback(new BlockedAddressError(opts.hostname), null);
      return;
    }
    connect(opts, callback);
  };
}
