/**
 * A process of a cluster for the reconciliation tests: its own database connection, its own live
 * channels and its own scheduler (a lease holder of its own), on a clock the test sets.
 */
import { openDatabase } from '../../src/db/database.ts';
import { ReconcileScheduler } from '../../src/reconcile/reconcile.scheduler.ts';
import { ReconcileService } from '../../src/reconcile/reconcile.service.ts';
import { liveChannels } from '../../src/services.ts';
import type { LiveGateway } from './live.ts';

export function clusterProcess(l: LiveGateway, clock: { now: number }, holder: string, atMinutes: number) {
  const database = openDatabase(l.gw.config.databaseUrl);
  const channels = liveChannels(l.gw.config);
  const service = new ReconcileService(database.db, channels, { now: () => clock.now });
  const scheduler = new ReconcileScheduler(database.db, service, {
    atMinutes,
    now: () => clock.now,
    holder,
    leaseMs: 60_000,
  });
  return {
    scheduler,
    async close() {
      await scheduler.stop();
      await channels.setu?.http.close();
      await channels.cashfree?.http.close();
      await database.close();
    },
  };
}
