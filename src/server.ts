/**
 * Starts a serving process: migrations, the first-run sandbox merchant, the HTTP app and the
 * background workers; and stops it gracefully (in-flight requests finish, workers drain).
 */
import type { Config } from './config.ts';
import { migrateWhenReachable, openDatabase } from './db/database.ts';
import { keepStatistics } from './db/statistics.ts';
import { buildApp, type Paygate } from './app.ts';
import { createLogger } from './logger.ts';
import { ReconcileScheduler } from './reconcile/reconcile.scheduler.ts';
import { ReconcileService } from './reconcile/reconcile.service.ts';
import { notificationReachWarning } from './outbound/public-url.ts';
import { undici } from './outbound/undici.ts';

export interface RunningServer {
  paygate: Paygate;
  address: string;
  close(): Promise<void>;
}

/** The lines printed on first run: how to call the gateway right away. */
export function firstRunBanner(
  config: Config,
  created: { merchant_id: string; api_key: string; webhook_secret: string },
): string {
  const base = config.publicUrl;
  return [
    '',
    'Paygate created a sandbox merchant for you (shown once; keep them safe):',
    `  merchant_id:    ${created.merchant_id}`,
    `  api_key:        ${created.api_key}`,
    `  webhook_secret: ${created.webhook_secret}`,
    '',
    'Try it:',
    `  curl -s -X POST ${base}/payments/onsite/payin -H 'Authorization: Bearer ${created.api_key}' -H 'Content-Type: application/json' -d '{"money":{"amount":500,"currency":"INR"},"merchant_order_no":"order-1"}'`,
    '',
  ].join('\n');
}

export async function startServer(
  config: Config,
  options: {
    firstRun?: boolean;
    /** Told the sandbox merchant created on first run (default: its banner on stdout). */
    onFirstRun?: (created: { merchant_id: string; api_key: string; webhook_secret: string }) => void;
  } = {},
): Promise<RunningServer> {
  // A server makes HTTP calls (callbacks, providers): undici is loaded now, not by the first of them.
  undici();
  const logger = createLogger(config);
  const database = openDatabase(config.databaseUrl, {
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    logger,
  });
  // Processes and their database may start in any order: serving waits until it can be reached.
  await migrateWhenReachable(database, (attempt, retryInMs, reason) =>
    logger.warn(
      { database: database.label, attempt, reason },
      `database ${database.label} is unreachable; retrying in ${Math.round(retryInMs / 1000)} s`,
    ),
  );
  // Before serving: a database loaded or grown while no gateway ran gets its planner statistics now.
  const statistics = keepStatistics(database, logger);
  await statistics
    .refresh()
    .catch((err: unknown) =>
      logger.warn({ err: (err as Error)?.message }, 'gathering planner statistics failed'),
    );
  const paygate = await buildApp({ config, database, logger });
  const { app, services, worker, dispatcher } = paygate;

  if (options.firstRun && (await services.merchants.count()) === 0) {
    const created = await services.merchants.createIfNone({ name: 'Sandbox Merchant' }, database);
    if (created) (options.onFirstRun ?? ((c) => console.log(firstRunBanner(config, c))))(created);
  }

  const unreachable = notificationReachWarning(config);
  if (unreachable) logger.warn({ public_url: config.publicUrl }, unreachable);

  const address = await app.listen({ port: config.port, host: config.host });
  worker.start();
  dispatcher.start();
  statistics.start();
  // Through the app's own channels, so the daily run shares this process's limit with the worker.
  const reconciler = new ReconcileScheduler(
    database.db,
    new ReconcileService(
      database.db,
      { setu: services.setu, cashfree: services.cashfree },
      services.outcomes,
      {
        lookbackDays: config.reconcileLookbackDays,
      },
    ),
    { atMinutes: config.reconcileAtMinutes, logger: app.log },
  );
  reconciler.start();

  let closing: Promise<void> | null = null;
  return {
    paygate,
    address,
    close() {
      closing ??= (async () => {
        // A keep-alive connection whose request is in flight is not idle when closing starts, and
        // would hold the close for the whole keep-alive timeout: once answered, it ends at once.
        app.server.keepAliveTimeout = 1;
        await app.close();
        await reconciler.stop();
        await worker.stop();
        // After the worker, so that final statuses it records while draining still get their first attempt.
        await dispatcher.stop();
        await statistics.stop();
        await database.close();
      })();
      return closing;
    },
  };
}
