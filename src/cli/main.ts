/**
 * A `paygate` command line from start to exit status: runs the command, and turns a refusal or a
 * failure into one line (`paygate: …` on stderr, or `{"error":{"code","message"}}` on stdout under
 * `--json`). The process itself (`src/cli.ts`) only passes in its streams.
 */
import { ConfigError } from '../config.ts';
import { DatabaseSetupError } from '../db/database.ts';
import { MerchantNotFoundError } from '../merchants/merchants.service.ts';
import { AppError } from '../errors.ts';
import { AccountError } from '../dashboard/accounts.service.ts';
import { CommandRefusal, PortInUseError, UsageError, type Out } from './command.ts';
import { run } from './run.ts';

/** Where a command's lines go: each call is one line, without its line break. */
export interface CliOutput {
  stdout(line: string): void;
  stderr(line: string): void;
}

/** How a command line ended: its exit status (null while the command keeps running), and whether it failed. */
export interface CliOutcome {
  status: number | null;
  failed: boolean;
}

/** The `code` of a `--json` error. */
function errorCode(err: unknown): string {
  if (err instanceof UsageError) return 'USAGE_ERROR';
  if (err instanceof PortInUseError) return 'PORT_IN_USE';
  if (err instanceof CommandRefusal) return err.code;
  if (err instanceof ConfigError) return 'CONFIG_INVALID';
  if (err instanceof MerchantNotFoundError) return 'MERCHANT_NOT_FOUND';
  if (err instanceof AccountError) return err.code;
  if (err instanceof DatabaseSetupError)
    return err.unavailable ? 'DATABASE_UNAVAILABLE' : 'DATABASE_UNUSABLE';
  if (err instanceof AppError) return err.errorCode;
  return 'INTERNAL_ERROR';
}

export async function main(argv: string[], io: CliOutput): Promise<CliOutcome> {
  const json = argv.includes('--json');
  const out: Out = (obj, human) => io.stdout(json ? JSON.stringify(obj) : human);
  try {
    const code = await run(argv, out);
    return { status: code >= 0 ? code : null, failed: false };
  } catch (err) {
    const code = errorCode(err);
    const message =
      code === 'INTERNAL_ERROR'
        ? `unexpected error: ${(err as Error)?.message ?? String(err)}`
        : (err as Error).message;
    if (json) io.stdout(JSON.stringify({ error: { code, message } }));
    else io.stderr(`paygate: ${message}`);
    return { status: err instanceof UsageError ? 2 : 1, failed: true };
  }
}
