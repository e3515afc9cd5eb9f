/** Prometheus metrics of callback delivery, on the app's registry. */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface CallbackMetrics {
  /** One per attempt, by result: delivered or the error kind. */
  attempts: Counter<'result'>;
  /** One per delivery that reached an end: delivered or failed. */
  deliveries: Counter<'outcome'>;
  latency: Histogram<'result'>;
}

/**
 * `queue` is read on each scrape: pending deliveries and the age of the oldest due one. A scrape
 * while the database is unreachable keeps the last values rather than failing /metrics.
 */
export function createCallbackMetrics(
  registry: Registry,
  queue: () => Promise<{ pending: number; oldestDueAgeSeconds: number }>,
): CallbackMetrics {
  let last = { pending: 0, oldestDueAgeSeconds: 0 };
  const refresh = async () => {
    try {
      last = await queue();
    } catch {
      // keep the last values
    }
  };
  new Gauge({
    name: 'paygate_callback_queue_depth',
    help: 'Callback deliveries waiting to be delivered (pending, due or scheduled for a retry)',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(last.pending);
    },
  });
  new Gauge({
    name: 'paygate_callback_oldest_due_age_seconds',
    help: 'How long the oldest due callback delivery has been waiting for its attempt (0 when none is due)',
    registers: [registry],
    async collect() {
      await refresh();
      this.set(last.oldestDueAgeSeconds);
    },
  });
  return {
    attempts: new Counter({
      name: 'paygate_callback_attempts_total',
      help: 'Callback attempts by result: delivered, or the error kind (http_status, redirect, timeout, refused, reset, dns, tls, blocked_address, …)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'paygate_callback_deliveries_total',
      help: 'Callback deliveries that reached an end, by outcome: delivered or failed (retries exhausted)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'paygate_callback_attempt_duration_seconds',
      help: 'Callback attempt latency, from sending to the answer (or the error), by result',
      labelNames: ['result'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
