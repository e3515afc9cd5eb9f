/**
 * The `paygate` command. Every command takes `--json` and then prints exactly one
 * JSON object on stdout; without it, lines for people. Commands that touch the database run the
 * migrations first.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DatabaseSetupError, migrate, openDatabase, type Database } from './db/database.ts';
import { buildServices } from './services.ts';
import { formatAmount, parseAmountText, toRupees } from './money.ts';
import { MerchantNotFoundError } from './merchants/merchants.service.ts';
import { DELIVERY_STATUSES } from './callbacks/callbacks.service.ts';
import type { DeliveryStatus } from './db/schema.ts';
import { AppError } from './errors.ts';
import { isUnavailableError } from './db/errors.ts';
import { disableAllocationSitePretenuring } from './gc-tuning.ts';

class UsageError extends Error {}

const USAGE = `Usage: paygate <command> [options] [--json]

  serve                                   start the HTTP service and its workers
  migrate                                 bring the database schema up to date
  merchant create --name NAME [--callback-url URL] [--vpa VPA] [--live]
  merchant list
  merchant disable --merchant ID | merchant enable --merchant ID
  merchant rotate-secret --merchant ID    issue a new webhook secret
  key rotate --merchant ID                new API key; the old one stops working
  wallet credit --merchant ID --amount 1000.00 [--currency INR]
  wallet show --merchant ID [--currency INR]
  ledger verify                           every journal balances, every wallet equals its entries
  callbacks list [--status pending|delivered|failed]
                                          the latest 100 callback deliveries
  callbacks resend PAYMENT_ID             send a final transaction's callback again

Settings come from the environment (DATABASE_URL, PORT, …); see README.md.`;

type Flags = Record<string, string | boolean | undefined>;
type Out = (json: Record<string, unknown>, human: string) => void;

function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

async function openMigrated<T>(
  config: Config,
  fn: (db: Database, applied: string[]) => Promise<T>,
): Promise<T> {
  const database = openDatabase(config.databaseUrl, { connectTimeoutMs: config.databaseConnectTimeoutMs });
  try {
    const applied = await migrate(database).catch((err: unknown) => {
      throw new DatabaseSetupError(database, err);
    });
    return await fn(database, applied);
  } catch (err) {
    throw isUnavailableError(err) ? new DatabaseSetupError(database, err) : err;
  } finally {
    await database.close().catch(() => {});
  }
}

function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  return openMigrated(config, (db) => fn(db));
}

async function run(argv: string[], out: Out): Promise<number> {
  const { values: flags, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      name: { type: 'string' },
      'callback-url': { type: 'string' },
      vpa: { type: 'string' },
      live: { type: 'boolean' },
      merchant: { type: 'string' },
      amount: { type: 'string' },
      currency: { type: 'string' },
      status: { type: 'string' },
    },
  });
  const [command, sub] = positionals;
  if (flags.help || !command) {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfig();
  const currency = () => {
    const c = (flags.currency as string | undefined) ?? 'INR';
    if (!config.supportedCurrencies.includes(c))
      throw new UsageError(`currency ${c} is not in SUPPORTED_CURRENCIES`);
    return c;
  };

  switch (`${command} ${sub ?? ''}`.trim()) {
    case 'serve': {
      disableAllocationSitePretenuring();
      // Loaded here only: the web stack costs a second of start-up that other commands do not need.
      const { startServer } = await import('./server.ts');
      const server = await startServer(config, { firstRun: true });
      console.log(`Paygate listening on ${server.address}`);
      const stop = (signal: string) => {
        server.paygate.app.log.info({ signal }, 'shutting down');
        server.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
      return -1;
    }
    case 'migrate': {
      const applied = await openMigrated(config, async (_db, done) => done);
      out({ applied }, applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      return 0;
    }
    case 'merchant create': {
      const name = required(flags, 'name');
      if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
      const callbackUrl = flags['callback-url'] as string | undefined;
      const schemes = config.allowPrivateCallbackUrls ? /^https?:\/\/\S+$/ : /^https:\/\/\S+$/;
      if (
        callbackUrl !== undefined &&
        (!schemes.test(callbackUrl) || callbackUrl.length > 512 || !URL.canParse(callbackUrl))
      ) {
        throw new UsageError(
          `--callback-url must be an ${config.allowPrivateCallbackUrls ? 'http(s)' : 'https'} URL of at most 512 characters`,
        );
      }
      const created = await withDatabase(config, (d) =>
        buildServices(config, d).merchants.create({
          name,
          callbackUrl,
          vpa: flags.vpa as string | undefined,
          live: Boolean(flags.live),
        }),
      );
      out(
        { ...created },
        `merchant_id:    ${created.merchant_id}\nmode:           ${created.mode}\napi_key:        ${created.api_key}\nwebhook_secret: ${created.webhook_secret}\n(the key and secret are shown once)`,
      );
      return 0;
    }
    case 'merchant list': {
      const merchants = await withDatabase(config, (d) => buildServices(config, d).merchants.list());
      out(
        { merchants },
        merchants.map((m) => `${m.merchant_id}  ${m.mode}  ${m.status}  ${m.name}`).join('\n') ||
          'no merchants',
      );
      return 0;
    }
    case 'merchant disable':
    case 'merchant enable': {
      const status = sub === 'disable' ? 'disabled' : 'active';
      const m = await withDatabase(config, (d) =>
        buildServices(config, d).merchants.setStatus(required(flags, 'merchant'), status),
      );
      out({ ...m }, `${m.merchant_id} is ${m.status}`);
      return 0;
    }
    case 'merchant rotate-secret': {
      const r = await withDatabase(config, (d) =>
        buildServices(config, d).merchants.rotateSecret(required(flags, 'merchant')),
      );
      out(
        { ...r },
        `webhook_secret: ${r.webhook_secret}\n(shown once; callbacks are signed with it from now on)`,
      );
      return 0;
    }
    case 'key rotate': {
      const r = await withDatabase(config, (d) =>
        buildServices(config, d).merchants.rotateKey(required(flags, 'merchant')),
      );
      out({ ...r }, `api_key: ${r.api_key}\n(shown once; the previous key no longer works)`);
      return 0;
    }
    case 'wallet credit': {
      const merchantId = required(flags, 'merchant');
      const amount = parseAmountText(required(flags, 'amount'));
      if (amount === null || amount <= 0)
        throw new UsageError('--amount must be a positive amount with at most 2 decimals, such as 1000.00');
      const cur = currency();
      const b = await withDatabase(config, async (d) => {
        const s = buildServices(config, d);
        await s.merchants.get(merchantId);
        return s.wallets.topUp(merchantId, cur, amount);
      });
      out(
        {
          merchant_id: merchantId,
          credited: toRupees(amount),
          currency: b.currency,
          available: toRupees(b.available),
          held: toRupees(b.held),
        },
        `credited ${formatAmount(amount)} ${b.currency}; available ${formatAmount(b.available)}, held ${formatAmount(b.held)}`,
      );
      return 0;
    }
    case 'wallet show': {
      const merchantId = required(flags, 'merchant');
      const cur = currency();
      const b = await withDatabase(config, async (d) => {
        const s = buildServices(config, d);
        await s.merchants.get(merchantId);
        return s.wallets.balance(merchantId, cur);
      });
      out(
        { currency: b.currency, available: toRupees(b.available), held: toRupees(b.held) },
        `${b.currency}  available ${formatAmount(b.available)}  held ${formatAmount(b.held)}`,
      );
      return 0;
    }
    case 'ledger verify': {
      const report = await withDatabase(config, (d) => buildServices(config, d).wallets.verify());
      out(
        { ...report },
        report.ok
          ? `ledger ok: ${report.journals} journals balance, ${report.wallets} wallets match their entries`
          : `ledger has ${report.problems.length} problem(s):\n${report.problems.join('\n')}`,
      );
      return report.ok ? 0 : 1;
    }
    case 'callbacks list': {
      const status = flags.status as string | undefined;
      if (status !== undefined && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
        throw new UsageError(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      }
      // Each delivery with its attempt log: time, HTTP status or error kind, latency, start of the answer.
      const deliveries = await withDatabase(config, async (d) => {
        const callbacks = buildServices(config, d).callbacks;
        const list = await callbacks.list({ status: status as DeliveryStatus | undefined });
        return Promise.all(
          list.map(async (c) => ({ ...c, attempt_log: await callbacks.attempts(c.delivery_id) })),
        );
      });
      out(
        { deliveries },
        deliveries
          .map((c) =>
            [
              `${c.delivery_id}  ${c.payment_id}  ${c.status.padEnd(9)}  ${c.attempts}/${c.max_attempts}  ${c.url}`,
              ...c.attempt_log.map(
                (a) =>
                  `    #${a.attempt}  ${a.started_at}  ${a.http_status ?? a.error ?? ''}  ${a.latency_ms} ms`,
              ),
            ].join('\n'),
          )
          .join('\n') || 'no callback deliveries',
      );
      return 0;
    }
    case 'callbacks resend': {
      const paymentId = positionals[2];
      if (!paymentId) throw new UsageError('callbacks resend needs a PAYMENT_ID');
      const r = await withDatabase(config, (d) => buildServices(config, d).callbacks.resend(paymentId));
      out({ ...r }, `queued ${r.delivery_id} for ${r.payment_id}`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
  }
}

/** The `code` of a `--json` error. */
function errorCode(err: unknown): string {
  if (err instanceof UsageError) return 'USAGE_ERROR';
  if (err instanceof ConfigError) return 'CONFIG_INVALID';
  if (err instanceof MerchantNotFoundError) return 'MERCHANT_NOT_FOUND';
  if (err instanceof DatabaseSetupError)
    return err.unavailable ? 'DATABASE_UNAVAILABLE' : 'DATABASE_UNUSABLE';
  if (err instanceof AppError) return err.errorCode;
  return 'INTERNAL_ERROR';
}

const argv = process.argv.slice(2);
const json = argv.includes('--json');
const out: Out = (obj, human) => console.log(json ? JSON.stringify(obj) : human);

run(argv, out).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    const code = errorCode(err);
    const message =
      code === 'INTERNAL_ERROR'
        ? `unexpected error: ${(err as Error)?.message ?? String(err)}`
        : (err as Error).message;
    if (json) console.log(JSON.stringify({ error: { code, message } }));
    else console.error(`paygate: ${message}`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  },
);
