/**
 * `paygate_channel_backoff_seconds{channel}`: how far apart a provider's calls are while it fails
 * every one (5xx or no answer) and they back off as a whole; 0 while it answers. On PostgreSQL the
 * cluster's back-off, read from the database when scraped (every process shows the same).
 */
import { Gauge, type Registry } from 'prom-client';
import type { ChannelHttp } from './channel-http.ts';

export function channelBackoffMetric(
  registry: Registry,
  channels: readonly ({ name: string; http: ChannelHttp } | null)[],
): void {
  const live = channels.filter((c) => c !== null);
  new Gauge({
    name: 'paygate_channel_backoff_seconds',
    help: 'How far apart calls to a payment channel are while it fails every call (5xx or no answer); 0 while it answers',
    labelNames: ['channel'] as const,
    registers: [registry],
    async collect() {
      for (const c of live) {
        try {
          this.set({ channel: c.name }, ((await c.http.gate?.backoffMs()) ?? 0) / 1000);
        } catch {
          // The database is down: /readyz says so; the gauge keeps its last value.
        }
      }
    },
  });
}
