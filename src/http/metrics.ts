/** Prometheus metrics. Each app has its own registry, so several apps can live in one process (tests). */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'paygate_' });
  return { registry };
}

/** Records a finished request: count and latency by method, route and status. */
export type HttpRecorder = (method: string, route: string, status: number, seconds: number) => void;

/** The request counter and latency histogram, and the function that records into both. */
export function httpMetrics(metrics: Metrics): HttpRecorder {
  const requests = new Counter({
    name: 'paygate_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [metrics.registry],
  });
  const latency = new Histogram({
    name: 'paygate_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [metrics.registry],
  });
  return (method, route, status, seconds) => {
    const labels = { method, route, status: String(status) };
    requests.inc(labels);
    latency.observe(labels, seconds);
  };
}

/** Requests to the live channels: count by channel, operation and outcome; latency by channel and operation. */
export function channelMetrics(
  metrics: Metrics,
): (channel: string, operation: string, outcome: string, seconds: number) => void {
  const requests = new Counter({
    name: 'paygate_channel_requests_total',
    help: 'Requests to payment channels by channel, operation and outcome (ok, http_<status>, timeout, reset, refused, …)',
    labelNames: ['channel', 'operation', 'outcome'] as const,
    registers: [metrics.registry],
  });
  const latency = new Histogram({
    name: 'paygate_channel_request_duration_seconds',
    help: 'Latency of requests to payment channels by channel and operation',
    labelNames: ['channel', 'operation'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [metrics.registry],
  });
  return (channel, operation, outcome, seconds) => {
    requests.inc({ channel, operation, outcome });
    latency.observe({ channel, operation }, seconds);
  };
}

/** Channel exceptions by kind, counted in the database when scraped (every process shows the same). */
export function exceptionMetrics(
  metrics: Metrics,
  count: () => Promise<{ kind: string; count: number }[]>,
  countOpen?: () => Promise<{ kind: string; count: number }[]>,
): void {
  exceptionGauge(
    metrics,
    'paygate_channel_exceptions',
    'Channel exceptions kept for the operator, by kind (paygate channels exceptions lists them)',
    count,
  );
  if (countOpen)
    exceptionGauge(
      metrics,
      'paygate_channel_exceptions_open',
      'Exceptions not resolved yet, by kind (paygate channels exceptions --open lists them)',
      countOpen,
    );
}

function exceptionGauge(
  metrics: Metrics,
  name: string,
  help: string,
  count: () => Promise<{ kind: string; count: number }[]>,
): void {
  new Gauge({
    name,
    help,
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
    async collect() {
      try {
        const rows = await count();
        this.reset();
        for (const kind of [
          'amount_mismatch',
          'payment_after_final',
          'unknown_reference',
          'reversal',
          'stuck',
        ])
          this.set({ kind }, 0);
        for (const r of rows) this.set({ kind: r.kind }, r.count);
      } catch {
        // The database is down: /readyz says so; the gauge keeps its last values.
      }
    },
  });
}

/**
 * `paygate_channel_silence_seconds{channel}`: how long each live channel has sent no verified
 * notification, read from the database when scraped (every process shows the same). While open
 * transactions wait on a silent channel, `paygate_channel_exceptions_open{kind="channel_silent"}` is 1.
 */
export function silenceMetrics(
  metrics: Metrics,
  read: () => Promise<{ channel: string; silenceS: number | null }[]>,
): void {
  new Gauge({
    name: 'paygate_channel_silence_seconds',
    help: 'Seconds since each live channel last sent a verified notification (since its oldest open pay-in or payout when none came; absent when neither)',
    labelNames: ['channel'] as const,
    registers: [metrics.registry],
    async collect() {
      try {
        const rows = await read();
        this.reset();
        for (const r of rows) if (r.silenceS !== null) this.set({ channel: r.channel }, r.silenceS);
      } catch {
        // The database is down: /readyz says so; the gauge keeps its last values.
      }
    },
  });
}

/** How a notification from a channel was answered: stored (new or duplicate) or refused, and why. */
export type NotificationResult = 'accepted' | 'duplicate' | 'signature_invalid' | 'not_configured';

/**
 * Notifications by channel and result, and each channel's last verified one (read from the
 * database when scraped, so every process shows the same): a provider that stops sending, or
 * sends with another secret, shows here before pay-ins wait for polling.
 */
export function notificationMetrics(
  metrics: Metrics,
  last: () => Promise<{ provider: string; at: number | null }[]>,
): (channel: string, result: NotificationResult) => void {
  const notifications = new Counter({
    name: 'paygate_channel_notifications_total',
    help: 'Notifications from payment channels by channel and result (accepted, duplicate, signature_invalid, not_configured); signature_invalid is apart from failed API keys',
    labelNames: ['channel', 'result'] as const,
    registers: [metrics.registry],
  });
  new Gauge({
    name: 'paygate_channel_last_notification_timestamp_seconds',
    help: 'When each payment channel last sent a verified notification (Unix seconds; absent when none came)',
    labelNames: ['channel'] as const,
    registers: [metrics.registry],
    async collect() {
      try {
        const rows = await last();
        this.reset();
        for (const r of rows) if (r.at !== null) this.set({ channel: r.provider }, r.at / 1000);
      } catch {
        // The database is down: /readyz says so; the gauge keeps its last values.
      }
    },
  });
  return (channel, result) => notifications.inc({ channel, result });
}
