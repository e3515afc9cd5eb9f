/**
 * The notifications the simulated providers would send, queued until a command delivers them:
 * in order or not, once or twice, late, never, or forged.
 */
import { createHmac } from 'node:crypto';

export interface PendingNotice {
  provider: 'setu' | 'cashfree';
  raw: string;
  headers: Record<string, string>;
  /** What the history prints of it. */
  label: string;
}

/** Setu's signature, as its documents state it: base64 of HMAC-SHA256(raw body, webhook secret). */
export function setuSigned(raw: string, secret: string): Record<string, string> {
  return { 'x-setu-signature': createHmac('sha256', secret).update(raw, 'utf8').digest('base64') };
}

/** Cashfree's signature, as its documents state it: base64 HMAC-SHA256 of timestamp + raw body. */
export function cashfreeSigned(raw: string, secret: string, at: number): Record<string, string> {
  const timestamp = String(at);
  return {
    'x-webhook-timestamp': timestamp,
    'x-webhook-signature': createHmac('sha256', secret)
      .update(timestamp + raw)
      .digest('base64'),
    'x-webhook-version': '2024-01-01',
  };
}

export class NoticeQueue {
  readonly pending: PendingNotice[] = [];

  push(n: PendingNotice): void {
    this.pending.push(n);
  }

  /** The `i`-th pending notice (modulo their number), taken out unless `keep`. */
  take(i: number, keep = false): PendingNotice | null {
    if (this.pending.length === 0) return null;
    const at = i % this.pending.length;
    const n = this.pending[at]!;
    if (!keep) this.pending.splice(at, 1);
    return n;
  }
}
