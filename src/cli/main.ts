/**
 * A `paygate` command line from start to exit status: runs the command, and turns a refusal or a
 * failure into one line (`paygate: CODE: …` on stderr, or `{"error":{"code","message"}}` on stdout
 * under `--json`). The process itself (`src/cli.ts`) only passes in its streams and
 * the operating-system user who runs it.
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

/**
 * A console user's refusal as the CLI names it (CONTRACT §1): `NOT_FOUND`, `CONFLICT` or
 * `INVALID_STATE`; a value that is no email or password is the command line's own error.
 */
const ACCOUNT_CODES: Record<AccountError['code'], string> = {
  USER_NOT_FOUND: 'NOT_FOUND',
  USER_EXISTS: 'CONFLICT',
  USER_DISABLED: 'INVALID_STATE',
  INVALID_USER: 'USAGE_ERROR',
  WRONG_PASSWORD: 'USAGE_ERROR',
};

/** Failures of the process or its surroundings rather than refusals of the request: their line names no code. */
const FAILURES = new Set([
  'PORT_IN_USE',
  'CONFIG_INVALID',
  'DATABASE_UNAVAILABLE',
  'DATABASE_UNUSABLE',
  'INTERNAL_ERROR',
]);

/** The `code` of an error: `USAGE_ERROR` (exit 2), a refusal's code or a failure's (exit 1). */
function errorCode(err: unknown): string {
  if (err instanceof UsageError) return 'USAGE_ERROR';
  if (err instanceof PortInUseError) return 'PORT_IN_USE';
  if (err instanceof CommandRefusal) return err.code;
  if (err instanceof ConfigError) return 'CONFIG_INVALID';
  if (err instanceof MerchantNotFoundError) return 'NOT_FOUND';
  if (err instanceof AccountError) return ACCOUNT_CODES[err.code];
  if (err instanceof DatabaseSetupError)
    return err.unavailable ? 'DATABASE_UNAVAILABLE' : 'DATABASE_UNUSABLE';
  if (err instanceof AppError) return err.errorCode;
  return 'INTERNAL_ERROR';
}

/**
 * Runs a command line. `user` is the operating-system user who runs it, whom the audit log names
 * (the process finds it: `src/cli.ts`).
 */
export async function main(argv: string[], io: CliOutput, user = 'unknown'): Promise<CliOutcome> {
  // `serve` takes no --json: its refusal of one is a line in words, as its own output is.
  const json = argv.includes('--json') && argv[0] !== 'serve';
  const out: Out = (obj, human) => io.stdout(json ? JSON.stringify(obj) : human);
  try {
    const code = await run(argv, out, user);
    return { status: code >= 0 ? code : null, failed: false };
  } catch (err) {
    const code = errorCode(err);
    const message =
      code === 'INTERNAL_ERROR'
        ? `unexpected error: ${(err as Error)?.message ?? String(err)}`
        : (err as Error).message;
    if (json) io.stdout(JSON.stringify({ error: { code, message } }));
    // A refusal's line starts with its code, as --json names it, so that a script can tell them apart.
    else if (code === 'USAGE_ERROR' || FAILURES.has(code)) io.stderr(`paygate: ${message}`);
    else io.stderr(`paygate: ${code}: ${message}`);
    return { status: code === 'USAGE_ERROR' ? 2 : 1, failed: true };
  }
}
