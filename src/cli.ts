/**
 * The `paygate` command. Every command takes `--json` and then prints exactly one
 * JSON object on stdout; without it, lines for people. Commands that touch the database run the
 * migrations first. The commands themselves live in `cli/`, one file per group (`cli/commands.ts`).
 */
import { ConfigError } from './config.ts';
import { DatabaseSetupError } from './db/database.ts';
import { MerchantNotFoundError } from './merchants/merchants.service.ts';
import { AppError } from './errors.ts';
import { AccountError } from './dashboard/accounts.service.ts';
import { PortInUseError, UsageError, type Out } from './cli/command.ts';
import { run } from './cli/run.ts';

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
