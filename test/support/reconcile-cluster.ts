/**
 * A process of a cluster for the reconciliation tests: its own database connection, its own live
 * channels and its own scheduler (a lease holder of its own), on a clock the test sets.
 */
import { openDatabase } from '../../src/db/database.ts';
import { ReconcileScheduler } from '../../src/reconcile/reconcile.scheduler.ts';
import { ReconcileService } from '../../src/reconcile/reconcile.service.ts';
import { buildServices } from '../../src/services.ts';
import type { LiveGateway } from './live.ts';

export function clusterProcess(l: LiveGateway, clock: { now: number }, holder: string, atMinutes: number) {
  const database = openDatabase(l.gw.config.databaseUrl);
  const services = buildServices(l.gw.config, database, () => clock.now);
  const channels = { setu: services.setu, cashfree: services.cashfree };
  const service = new ReconcileService(database.db, channels, services.outcomes, {
    now: () => clock.now,
    lookbackDays: l.gw.config.reconcileLookbackDays,
  });
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
