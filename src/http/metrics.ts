/** Prometheus metrics. Each app has its own registry, so several apps can live in one process (tests). */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

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
