/**
 * Builds the Paygate HTTP app and the services behind it. `server.ts` and `cli.ts` start
 * processes; tests call `buildApp` directly against a real database.
 */
import type { Server } from 'node:http';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyInstance,
} from 'fastify';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Config } from './config.ts';
import { createLogger } from './logger.ts';
import type { Database } from './db/database.ts';
import { CallbackDispatcher } from './worker/callback.dispatcher.ts';
import { SecretOverlapScheduler } from './merchants/secret-overlap.scheduler.ts';
import { callbackRoutes } from './callbacks/callbacks.routes.ts';
import { AuthFailureLimit, authHook } from './http/auth.ts';
import { commonSchemas, ErrorEnvelopeSchema, ValidationErrorSchema } from './http/common.schemas.ts';
import { AppError } from './errors.ts';
import { countExceptions, countOpenExceptions } from './exceptions/exceptions.repository.ts';
import { channelBackoffMetric } from './channels/channel-backoff.metrics.ts';
import {
  channelMetrics,
  createMetrics,
  exceptionMetrics,
  httpMetrics,
  type Metrics,
  notificationMetrics,
  silenceMetrics,
} from './http/metrics.ts';
import { notificationRoutes } from './live/notifications.routes.ts';
import { lastNotifications } from './live/notifications.repository.ts';
import {
  API_HEADERS,
  clientErrorHandler,
  errorHandler,
  frameworkError,
  notFoundHandler,
  registerJsonParser,
  requestId,
} from './http/plumbing.ts';
import { publishedDocument, type OpenApiDocument } from './http/openapi.ts';
import { addKeywords } from './http/validation.ts';
import { opsRoutes } from './ops.routes.ts';
import { isPagePath, pageFrameworkError, pageRoutes } from './pages/pages.routes.ts';
import { UserService } from './dashboard/users.service.ts';
import { AccountService } from './dashboard/accounts.service.ts';
import { DashboardService } from './dashboard/dashboard.service.ts';
import { dashboardFrameworkError, dashboardRoutes, isDashboardPath } from './dashboard/dashboard.routes.ts';
import { PagesService } from './pages/pages.service.ts';
import { payinRoutes } from './payins/payins.routes.ts';
import { payoutRoutes } from './payouts/payouts.routes.ts';
import { refundRoutes } from './refunds/refunds.routes.ts';
import { sandboxRoutes } from './sandbox/sandbox.routes.ts';
import { TransactionWorker } from './worker/transaction.worker.ts';
import { walletRoutes } from './wallet/wallet.routes.ts';
import { VERSION } from './version.ts';
import { buildServices, workerOptions, type Services } from './services.ts';

export { buildServices, type Services };

export interface AppDeps {
  config: Config;
  database: Database;
  /** The clock; tests pass their own. */
  now?: () => number;
  /** false silences logging (tests); a logger is used as it is; otherwise pino JSON at LOG_LEVEL. */
  logger?: false | FastifyBaseLogger;
}

export interface Paygate {
  app: FastifyInstance;
  services: Services;
  worker: TransactionWorker;
  /** Delivers callbacks; `server.ts` starts it with the worker. */
  dispatcher: CallbackDispatcher;
  metrics: Metrics;
  config: Config;
  database: Database;
}

export async function buildApp(deps: AppDeps): Promise<Paygate> {
  const { config, database } = deps;
  const now = deps.now ?? Date.now;
  const services = buildServices(config, database, now);
  const metrics = createMetrics();
  const app = Fastify(fastifyOptions(deps));
  const { worker, dispatcher } = background(app, services, metrics, deps, now);
  addHooks(app, metrics);
  await registerDocs(app, config);
  await registerRoutes(app, services, metrics, deps, now);
  return { app, services, worker, dispatcher, metrics, config, database };
}

/** The Fastify options: logging, request ids, timeouts, the framework's own errors in our shapes, validation. */
function fastifyOptions(deps: AppDeps): FastifyHttpOptions<Server> {
  const { config } = deps;
  return {
    ...(deps.logger === false ? { logger: false } : { loggerInstance: deps.logger ?? createLogger(config) }),
    // One line per response comes from the onResponse hook below, not two from Fastify.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestId,
    requestIdHeader: false,
    trustProxy: config.trustProxy ? [...config.trustProxy] : false,
    requestTimeout: config.requestTimeoutMs,
    // Given to Node's server at construction too: set only afterwards (as Fastify does), Node applies
    // it to the headers but not to a body that stops arriving. Timeouts are checked on the interval
    // (30 s by default, which would double the timeout).
    http: {
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs),
    },
    clientErrorHandler,
    frameworkErrors: (error, request, reply) =>
      isPagePath(request.url)
        ? pageFrameworkError(request, reply)
        : isDashboardPath(request.url)
          ? dashboardFrameworkError(request, reply)
          : frameworkError(error, request, reply),
    bodyLimit: 64 * 1024,
    return503OnClosing: true,
    ajv: {
      customOptions: {
        allErrors: true,
        coerceTypes: false,
        removeAdditional: false,
        useDefaults: false,
        verbose: true,
      },
      plugins: [addKeywords as never],
    },
  };
}

/**
 * The transaction worker and the callback dispatcher, created (not started: `server.ts` starts
 * them) and woken by what the services commit; and the deletion of rotated-out webhook secrets,
 * which runs while the app listens.
 */
function background(
  app: FastifyInstance,
  services: Services,
  metrics: Metrics,
  { config, database }: AppDeps,
  now: () => number,
): { worker: TransactionWorker; dispatcher: CallbackDispatcher } {
  const worker = new TransactionWorker(
    database,
    services.channel,
    services.finality,
    workerOptions(config, services, now, app.log),
  );
  services.notifications.logger = app.log;
  services.observeChannels(channelMetrics(metrics));
  silenceMetrics(metrics, () => services.silence.read());
  channelBackoffMetric(metrics.registry, [services.setu, services.cashfree]);
  exceptionMetrics(
    metrics,
    () => countExceptions(database.db),
    () => countOpenExceptions(database.db),
  );
  services.payouts.onCreated = () => worker.created();
  services.refunds.onCreated = () => worker.created();
  services.notifications.onRefundsDue = () => worker.wake();
  services.exceptions.onResent = () => worker.created();
  const dispatcher = new CallbackDispatcher(database, config, {
    registry: metrics.registry,
    logger: app.log,
    now,
  });
  services.finality.onFinal((_txn, deliveryId) => {
    if (deliveryId) dispatcher.wake();
  });
  services.callbacks.onQueued = () => dispatcher.wake();
  // A rotated-out webhook secret is deleted when its overlap ends, by every serving process.
  const secrets = new SecretOverlapScheduler(database.db, { now, logger: app.log });
  services.merchants.onSecretRotated = (until) => secrets.rotated(until);
  app.addHook('onListen', async () => secrets.start());
  app.addHook('onClose', () => secrets.stop());
  return { worker, dispatcher };
}

/** The hooks every request passes through: request id and API headers, encodings refused, one log line and metric per response. */
function addHooks(app: FastifyInstance, metrics: Metrics): void {
  app.decorateRequest('principal', null);
  // The hooks every API request passes through are synchronous, with `done`: an async hook costs a
  // promise and a trip through the microtask queue per request, a visible share of a status query's
  // CPU (docs/performance.md).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id).headers(API_HEADERS);
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      done(
        new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Encoding is not supported; send the body unencoded'),
      );
      return;
    }
    done();
  });
  const recordHttp = httpMetrics(metrics);
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    recordHttp(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500)
      req.log.warn({ status: reply.statusCode, url: req.url }, 'server error response');
    else
      req.log.debug(
        { method: req.method, url: route, status: reply.statusCode, ms: reply.elapsedTime },
        'request',
      );
    done();
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  app.addSchema(ErrorEnvelopeSchema);
  app.addSchema(ValidationErrorSchema);
}

/** `/openapi.json` and `/docs`. */
async function registerDocs(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    transformObject: (doc) =>
      'openapiObject' in doc
        ? (publishedDocument(
            doc.openapiObject as OpenApiDocument,
            config.publicUrl,
          ) as typeof doc.openapiObject)
        : doc.swaggerObject,
    // Components keep their $id as their name (ErrorEnvelope, ValidationError) instead of def-N.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Paygate',
        version: VERSION,
        description:
          'Merchant payment gateway: pay-ins (onsite, offsite, P2P), payouts, refunds, status queries and signed callbacks. Amounts are rupees with at most 2 decimals.',
      },
      // In this order in /docs: what merchants call most first, the operations endpoints last.
      tags: [
        { name: 'Pay-ins', description: 'Collect money from customers: onsite, offsite (UPI QR), P2P' },
        { name: 'Payouts', description: 'Send money to bank accounts from the wallet balance' },
        { name: 'Refunds', description: 'Give back all or part of a successful pay-in' },
        { name: 'Wallet', description: 'The merchant balance' },
        { name: 'Callbacks', description: 'Signed notifications of final statuses' },
        { name: 'Sandbox', description: 'Settle test transactions at once (sk_test_ keys only)' },
        {
          name: 'Channels',
          description: 'Notifications from the live payment channels (signed by the provider)',
        },
        { name: 'Operations', description: 'Health, readiness, metrics and this document' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'sk_test_… or sk_live_…' },
        },
      },
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The project's name in the top bar, where the framework's logo would be.
    logo: {
      type: 'image/svg+xml',
      content: Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="140" height="32"><text x="0" y="24" font-family="sans-serif" font-size="24" font-weight="700" fill="#fff">Paygate</text></svg>',
      ),
    },
    theme: { title: 'Paygate API' },
  });
}

/** The routes: operations, hosted pages, the console, the merchant API (key, rate limit) and the providers' notifications. */
async function registerRoutes(
  app: FastifyInstance,
  services: Services,
  metrics: Metrics,
  { config, database }: AppDeps,
  now: () => number,
): Promise<void> {
  await app.register(opsRoutes, { database, metrics, metricsToken: config.metricsToken });
  // Hosted payment pages: customers' browsers, no API key, HTML forms.
  await app.register(pageRoutes, {
    pages: new PagesService(database.db, services.sandbox, {
      sandboxChannel: services.sandboxChannel.name,
      publicUrl: config.publicUrl,
      now,
    }),
  });

  // The console for merchants' users and operators: signed-in sessions, HTML forms.
  await app.register(dashboardRoutes, {
    prefix: '/dashboard',
    accounts: new AccountService(database.db, now),
    dashboard: new DashboardService(database.db, services, config, now),
    users: new UserService(database.db, now),
    secure: new URL(config.publicUrl).protocol === 'https:',
    currencies: config.supportedCurrencies,
  });

  const schemas = commonSchemas(config);
  // Failed API keys per client address (channel signatures are counted apart: `SignatureFailures`).
  const authFailures = new AuthFailureLimit(now);
  await app.register(async (api) => {
    registerJsonParser(api);
    api.addHook('onRequest', authHook(services.merchants, authFailures));
    if (config.rateLimitPerMinute > 0) {
      await api.register(rateLimit, {
        max: config.rateLimitPerMinute,
        timeWindow: 60_000,
        keyGenerator: (req) => req.principal?.keyId ?? req.ip,
        errorResponseBuilder: (_req, ctx) =>
          new AppError('RATE_LIMITED', `Rate limit of ${ctx.max} requests per minute exceeded`, {
            retry_after_s: Math.ceil(ctx.ttl / 1000),
          }),
      });
    }
    await api.register(payinRoutes, { payins: services.payins, schemas });
    await api.register(payoutRoutes, { payouts: services.payouts, schemas });
    await api.register(refundRoutes, { refunds: services.refunds, schemas });
    await api.register(walletRoutes, { wallets: services.wallets, config });
    await api.register(sandboxRoutes, { sandbox: services.sandbox });
    await api.register(callbackRoutes, { callbacks: services.callbacks });
  });
  // The providers' notifications: no API key (the signature is the authentication), raw bodies.
  await app.register(notificationRoutes, {
    notifications: services.notifications,
    count: notificationMetrics(metrics, () => lastNotifications(database.db, ['setu', 'cashfree'])),
  });
}
