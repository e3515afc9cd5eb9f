/**
 * The merchants' callback receivers: up (answering 200) or down (503), and what each received.
 */
import type { AttemptResult } from '../src/callbacks/callback.sender.ts';

export interface Received {
  paymentId: string;
  status: string;
}

export class Receivers {
  up = true;
  readonly received: Received[] = [];

  async send(_url: string, body: string): Promise<AttemptResult> {
    if (!this.up)
      return { delivered: false, httpStatus: 503, errorKind: 'http_status', latencyMs: 1, snippet: '' };
    const parsed = JSON.parse(body) as Record<string, unknown>;
    this.received.push({ paymentId: String(parsed.payment_id), status: String(parsed.status) });
    return { delivered: true, httpStatus: 200, errorKind: null, latencyMs: 1, snippet: 'ok' };
  }
}
