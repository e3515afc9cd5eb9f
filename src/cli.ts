/**
 * The `paygate` command. Every command takes `--json` and then prints exactly one
 * JSON object on stdout; without it, lines for people. Commands that touch the database run the
 * migrations first.
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DatabaseSetupError, migrate, openDatabase, type Database } from './db/database.ts';
import { buildServices, liveChannels } from './services.ts';
import { formatAmount, parseAmountText, toRupees } from './money.ts';
import { callbackUrlProblem, MerchantNotFoundError, vpaProblem } from './merchants/merchants.service.ts';
import { DELIVERY_STATUSES } from './callbacks/callbacks.service.ts';
import type { DeliveryStatus } from './db/schema.ts';
import { AppError } from './errors.ts';
import { isUnavailableError } from './db/errors.ts';
import { disableAllocationSitePretenuring } from './gc-tuning.ts';
import { listExceptions } from './live/exceptions.repository.ts';
import { AccountError, AccountService, PASSWORD_MAX, PASSWORD_MIN } from './dashboard/accounts.service.ts';
import { insertAuditAction } from './dashboard/dashboard.repository.ts';

class UsageError extends Error {}
class PortInUseError extends Error {}

type OptionSpec = { type: 'string' | 'boolean'; value?: string; help: string; required?: true };

/** One command: how it is called, what it does, and the options it takes (besides --json and --help). */
interface CommandSpec {
  args?: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** How many positional arguments follow the command's words. */
  positionals?: number;
}

const MERCHANT: Record<string, OptionSpec> = {
  merchant: { type: 'string', value: 'ID', help: 'the merchant', required: true },
};
const CURRENCY: OptionSpec = {
  type: 'string',
  value: 'CODE',
  help: 'a currency of SUPPORTED_CURRENCIES (default INR)',
};

const COMMANDS: Record<string, CommandSpec> = {
  serve: { summary: 'start the HTTP service and its workers', options: {} },
  migrate: { summary: 'bring the database schema up to date', options: {} },
  'merchant create': {
    summary: 'create a merchant; its API key and webhook secret are shown once',
    options: {
      name: {
        type: 'string',
        value: 'NAME',
        help: 'the name customers see (1 to 100 characters)',
        required: true,
      },
      'callback-url': {
        type: 'string',
        value: 'URL',
        help: 'default callback URL (https, at most 512 characters)',
      },
      vpa: {
        type: 'string',
        value: 'VPA',
        help: 'the UPI id pay-ins are paid to, handle@psp (required with --live: its own id under the Setu merchant)',
      },
      live: { type: 'boolean', help: 'a live merchant (sk_live_ key) instead of a sandbox one' },
    },
  },
  'merchant list': { summary: 'every merchant, with its mode and status', options: {} },
  'merchant disable': { summary: "stop a merchant's API key (403 MERCHANT_DISABLED)", options: MERCHANT },
  'merchant enable': { summary: 'let a disabled merchant in again', options: MERCHANT },
  'merchant rotate-secret': { summary: 'issue a new webhook secret', options: MERCHANT },
  'key rotate': { summary: 'issue a new API key; the old one stops working', options: MERCHANT },
  'wallet credit': {
    summary: "add money to a merchant's available balance",
    options: {
      ...MERCHANT,
      amount: {
        type: 'string',
        value: 'AMOUNT',
        help: 'rupees, at most 2 decimals, such as 1000.00',
        required: true,
      },
      currency: CURRENCY,
    },
  },
  'wallet show': {
    summary: "a merchant's available and held balance",
    options: { ...MERCHANT, currency: CURRENCY },
  },
  'ledger verify': {
    summary: 'check that every journal balances and every wallet equals its entries',
    options: {},
  },
  'callbacks list': {
    summary: 'the latest 100 callback deliveries, with their attempts',
    options: { status: { type: 'string', value: 'STATUS', help: 'pending, delivered or failed' } },
  },
  'callbacks resend': {
    args: 'PAYMENT_ID',
    summary: "send a final transaction's callback again",
    options: {},
    positionals: 1,
  },
  'channels check': {
    summary: "try each configured live channel's credentials (Setu login and API, Cashfree API)",
    options: {},
  },
  'channels exceptions': {
    summary:
      'the latest 100 channel exceptions: amount mismatches, late payments, unknown references, reversals, stuck',
    options: {},
  },
  'user create': {
    summary: 'create a dashboard user (--merchant ID or --operator); a generated password is shown once',
    options: {
      email: { type: 'string', value: 'EMAIL', help: 'the address the user signs in with', required: true },
      merchant: { type: 'string', value: 'ID', help: 'the merchant whose data the user sees' },
      operator: { type: 'boolean', help: 'an operator, who sees every merchant' },
      'password-stdin': {
        type: 'boolean',
        help: `read the password from standard input (${PASSWORD_MIN} to ${PASSWORD_MAX} characters) instead of generating one`,
      },
    },
  },
};

const GLOBAL_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function optionUsage(name: string, o: OptionSpec): string {
  return o.type === 'string' ? `--${name} ${o.value ?? 'VALUE'}` : `--${name}`;
}

function commandLine(name: string, spec: CommandSpec): string {
  const opts = Object.entries(spec.options).map(([n, o]) =>
    o.required ? optionUsage(n, o) : `[${optionUsage(n, o)}]`,
  );
  return ['paygate', name, spec.args, ...opts].filter(Boolean).join(' ');
}

const USAGE = `Usage: paygate <command> [options] [--json]

${Object.entries(COMMANDS)
  .map(([name, spec]) => `  ${`${name}${spec.args ? ` ${spec.args}` : ''}`.padEnd(26)}${spec.summary}`)
  .join('\n')}

Every command takes --json (one JSON object on stdout) and --help. Settings come from the
environment (DATABASE_URL, PORT, …); see README.md.`;

function commandHelp(name: string): string {
  const spec = COMMANDS[name]!;
  const options = Object.entries(spec.options).map(([n, o]) => `  ${optionUsage(n, o).padEnd(24)}${o.help}`);
  options.push(`  ${'--json'.padEnd(24)}print one JSON object on stdout`);
  return `Usage: ${commandLine(name, spec)} [--json]\n\n${spec.summary}\n\nOptions:\n${options.join('\n')}`;
}

/** Help for the command `words` name, or the list of all commands when they name none. */
function helpFor(words: string[]): string {
  if (words.length === 0) return USAGE;
  try {
    return commandHelp(findCommand(words).name);
  } catch {
    return USAGE;
  }
}

/** The command named by the leading words of `words`, or a usage error that says what exists. */
function findCommand(words: string[]): { name: string; rest: string[] } {
  const [first, second] = words;
  if (
    first &&
    Object.hasOwn(COMMANDS, first) &&
    !Object.keys(COMMANDS).some((n) => n.startsWith(`${first} `))
  )
    return { name: first, rest: words.slice(1) };
  const subs = Object.keys(COMMANDS)
    .filter((n) => n.startsWith(`${first} `))
    .map((n) => n.slice(first!.length + 1));
  if (subs.length === 0) throw new UsageError(`unknown command "${first}"; see paygate --help`);
  if (second === undefined) throw new UsageError(`${first} needs a subcommand: ${subs.join(', ')}`);
  if (!subs.includes(second))
    throw new UsageError(`unknown command "${first} ${second}"; ${first} has: ${subs.join(', ')}`);
  return { name: `${first} ${second}`, rest: words.slice(2) };
}

/** parseArgs's own errors, as one line that names the command. */
function usageFromParse(err: Error & { code?: string }, command: string): UsageError {
  const option = /'(-[^' ]+)/.exec(err.message)?.[1];
  const see = `see paygate ${command} --help`;
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`${command}: unknown option ${option ?? ''}; ${see}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return /ambiguous/.test(err.message)
        ? new UsageError(
            `${command}: ${option} needs a value; to give one starting with "-", write ${option}=VALUE`,
          )
        : new UsageError(
            `${command}: ${option ?? 'an option'} ${/argument missing/.test(err.message) ? 'needs a value' : 'takes no value'}; ${see}`,
          );
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(
        `${command}: unexpected argument ${/'([^']*)'/.exec(err.message)?.[1] ?? ''}; ${see}`,
      );
    default:
      return new UsageError(`${command}: ${err.message}`);
  }
}

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

/** Rows under a header, each column as wide as its widest cell. */
/** Writes an operator's action to the audit log the dashboard lists (CONTRACT §11). */
function audit(d: Database, action: string, merchantId: string | null, detail: string): Promise<void> {
  return insertAuditAction(d.db, { at: Date.now(), actor: 'cli', action, merchant_id: merchantId, detail });
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

async function run(argv: string[], out: Out): Promise<number> {
  // A first, lenient pass finds the command; the second knows its options and refuses others.
  const words = parseArgs({ args: argv, allowPositionals: true, strict: false }).positionals;
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  // Help always answers (exit 0): a command's own, or the list of all for a partial or unknown one.
  const helpWords = words[0] === 'help' ? words.slice(1) : wantsHelp ? words : null;
  if (helpWords) {
    const text = helpFor(helpWords);
    out({ usage: text }, text);
    return 0;
  }
  if (words.length === 0) throw new UsageError(`a command is needed; see paygate --help`);
  const { name: command } = findCommand(words);
  const spec = COMMANDS[command]!;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...GLOBAL_OPTIONS,
        ...Object.fromEntries(Object.entries(spec.options).map(([n, o]) => [n, { type: o.type }])),
      },
    });
  } catch (err) {
    throw usageFromParse(err as Error, command);
  }
  const flags = parsed.values as Flags;
  const positionals = parsed.positionals.slice(command.split(' ').length);
  if (positionals.length > (spec.positionals ?? 0))
    throw new UsageError(
      `${command}: unexpected argument ${positionals[spec.positionals ?? 0]}; see paygate ${command} --help`,
    );
  const config = loadConfig();
  const currency = () => {
    const c = (flags.currency as string | undefined) ?? 'INR';
    if (!config.supportedCurrencies.includes(c))
      throw new UsageError(`currency ${c} is not in SUPPORTED_CURRENCIES`);
    return c;
  };

  switch (command) {
    case 'serve': {
      disableAllocationSitePretenuring();
      // Loaded here only: the web stack costs a second of start-up that other commands do not need.
      const { startServer } = await import('./server.ts');
      const server = await startServer(config, { firstRun: true }).catch((err: unknown) => {
        if ((err as { code?: string }).code === 'EADDRINUSE')
          throw new PortInUseError(
            `cannot listen on ${config.host}:${config.port}: the port is in use; set PORT (or HOST) to another`,
          );
        throw err;
      });
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
      const urlProblem =
        callbackUrl === undefined ? null : callbackUrlProblem(callbackUrl, config.allowPrivateCallbackUrls);
      if (urlProblem) throw new UsageError(`--callback-url: ${urlProblem}`);
      const vpa = flags.vpa as string | undefined;
      const problem = vpaProblem(vpa ?? null, Boolean(flags.live));
      if (problem) throw new UsageError(`--vpa: ${problem}`);
      const created = await withDatabase(config, async (d) => {
        const made = await buildServices(config, d).merchants.create({
          name,
          callbackUrl,
          vpa: flags.vpa as string | undefined,
          live: Boolean(flags.live),
        });
        await audit(d, 'merchant_create', made.merchant_id, `created ${made.mode} merchant ${name}`);
        return made;
      });
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
        merchants.length
          ? table(
              ['MERCHANT_ID', 'MODE', 'STATUS', 'NAME'],
              merchants.map((m) => [m.merchant_id, m.mode, m.status, m.name]),
            )
          : 'no merchants',
      );
      return 0;
    }
    case 'merchant disable':
    case 'merchant enable': {
      const status = command === 'merchant disable' ? 'disabled' : 'active';
      const m = await withDatabase(config, async (d) => {
        const changed = await buildServices(config, d).merchants.setStatus(
          required(flags, 'merchant'),
          status,
        );
        await audit(
          d,
          command === 'merchant disable' ? 'disable' : 'enable',
          changed.merchant_id,
          `${status === 'active' ? 'enabled' : 'disabled'} the merchant`,
        );
        return changed;
      });
      out({ ...m }, `${m.merchant_id} is ${m.status}`);
      return 0;
    }
    case 'merchant rotate-secret': {
      const r = await withDatabase(config, async (d) => {
        const rotated = await buildServices(config, d).merchants.rotateSecret(required(flags, 'merchant'));
        await audit(d, 'rotate_secret', rotated.merchant_id, 'rotated the webhook secret');
        return rotated;
      });
      out(
        { ...r },
        `webhook_secret: ${r.webhook_secret}\n(shown once; callbacks are signed with it from now on)`,
      );
      return 0;
    }
    case 'key rotate': {
      const r = await withDatabase(config, async (d) => {
        const rotated = await buildServices(config, d).merchants.rotateKey(required(flags, 'merchant'));
        await audit(d, 'rotate_key', rotated.merchant_id, 'rotated the API key');
        return rotated;
      });
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
        const balance = await s.wallets.topUp(merchantId, cur, amount);
        await audit(d, 'credit', merchantId, `credited ${formatAmount(amount)} ${cur}`);
        return balance;
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
        deliveries.length
          ? table(
              ['DELIVERY_ID', 'PAYMENT_ID', 'STATUS', 'ATTEMPTS', 'URL'],
              deliveries.map((c) => [
                c.delivery_id,
                c.payment_id,
                c.status,
                `${c.attempts}/${c.max_attempts}`,
                c.url,
              ]),
            ) +
              // Each delivery's attempt log: time, HTTP status or error kind, latency.
              deliveries
                .filter((c) => c.attempt_log.length > 0)
                .map(
                  (c) =>
                    `\n\n${c.delivery_id}\n` +
                    table(
                      ['  #', 'STARTED_AT', 'RESULT', 'LATENCY'],
                      c.attempt_log.map((a) => [
                        `  ${a.attempt}`,
                        a.started_at,
                        String(a.http_status ?? a.error ?? ''),
                        `${a.latency_ms} ms`,
                      ]),
                    ),
                )
                .join('')
          : 'no callback deliveries',
      );
      return 0;
    }
    case 'callbacks resend': {
      const paymentId = positionals[0];
      if (!paymentId) throw new UsageError('callbacks resend needs a PAYMENT_ID');
      const r = await withDatabase(config, async (d) => {
        const queued = await buildServices(config, d).callbacks.resend(paymentId);
        const txn = await d.db
          .selectFrom('transactions')
          .select('merchant_id')
          .where('payment_id', '=', paymentId)
          .executeTakeFirst();
        await audit(d, 'resend', txn?.merchant_id ?? null, `resent the callback of ${paymentId}`);
        return queued;
      });
      out({ ...r }, `queued ${r.delivery_id} for ${r.payment_id}`);
      return 0;
    }
    case 'channels check': {
      const { setu, cashfree } = liveChannels(config);
      const channels = [setu, cashfree].filter((c) => c !== null);
      if (channels.length === 0) {
        out({ channels: [] }, 'no live channel is configured (see README, Going live)');
        return 1;
      }
      const results = await Promise.all(
        channels.map(async (c) => {
          try {
            return { channel: c.name, ok: true, detail: await c.check() };
          } catch (err) {
            return { channel: c.name, ok: false, detail: (err as Error).message };
          }
        }),
      );
      for (const c of channels) await c.http.close();
      out(
        { channels: results },
        table(
          ['CHANNEL', 'RESULT', 'DETAIL'],
          results.map((r) => [r.channel, r.ok ? 'ok' : 'FAILED', r.detail]),
        ),
      );
      return results.every((r) => r.ok) ? 0 : 1;
    }
    case 'channels exceptions': {
      const exceptions = await withDatabase(config, (d) => listExceptions(d.db, 100));
      out(
        {
          exceptions: exceptions.map((e) => ({
            id: e.id,
            kind: e.kind,
            channel: e.provider,
            payment_id: e.payment_id,
            reference: e.reference,
            amount: e.amount === null ? null : toRupees(e.amount),
            detail: e.detail,
            created_at: new Date(e.created_at).toISOString(),
          })),
        },
        exceptions.length
          ? table(
              ['CREATED_AT', 'KIND', 'CHANNEL', 'PAYMENT_ID', 'AMOUNT', 'DETAIL'],
              exceptions.map((e) => [
                new Date(e.created_at).toISOString(),
                e.kind,
                e.provider,
                e.payment_id ?? '-',
                e.amount === null ? '-' : formatAmount(e.amount),
                e.detail,
              ]),
            )
          : 'no channel exceptions',
      );
      return 0;
    }
    case 'user create': {
      const email = required(flags, 'email');
      const merchantId = flags.merchant as string | undefined;
      if ((merchantId === undefined) === !flags.operator)
        throw new UsageError('user create needs exactly one of --merchant ID and --operator');
      const password = flags['password-stdin'] ? await readPassword() : null;
      const created = await withDatabase(config, (d) =>
        new AccountService(d.db).createUser({
          email,
          role: flags.operator ? 'operator' : 'merchant',
          merchantId: merchantId ?? null,
          password,
        }),
      );
      out(
        { ...created },
        `user_id:  ${created.user_id}\nemail:    ${created.email}\nrole:     ${created.role}${created.merchant_id ? `\nmerchant: ${created.merchant_id}` : ''}${created.password ? `\npassword: ${created.password}\n(shown once; sign in at /dashboard)` : ''}`,
      );
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"; see paygate --help`);
  }
}

/** The password piped to `user create --password-stdin`, without its final line break. */
async function readPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
  if (text.length < PASSWORD_MIN || text.length > PASSWORD_MAX)
    throw new UsageError(
      `the password on standard input must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`,
    );
  return text;
}

/** The `code` of a `--json` error. */
function errorCode(err: unknown): string {
  if (err instanceof UsageError) return 'USAGE_ERROR';
  if (err instanceof PortInUseError) return 'PORT_IN_USE';
  if (err instanceof ConfigError) return 'CONFIG_INVALID';
  if (err instanceof MerchantNotFoundError) return 'MERCHANT_NOT_FOUND';
  if (err instanceof AccountError) return err.code;
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
    // A serve that failed half-way may hold connections or timers open: end once the line is out.
    setTimeout(() => process.exit(), 200).unref();
  },
);
