/**
 * What every command file shares: the shape of a command, the errors that set the exit status, and
 * the helpers that open the database, write the audit log and lay out tables.
 */
import type { Config } from '../config.ts';
import { DatabaseSetupError, migrate, openDatabase, type Database } from '../db/database.ts';
import { isUnavailableError } from '../db/errors.ts';
import { insertAuditAction } from '../audit/audit.repository.ts';
import { istIso, istTime } from '../ist.ts';

/** A refusal of the command line itself: exit status 2, `USAGE_ERROR`. */
export class UsageError extends Error {}
export class PortInUseError extends Error {}
/** A well-formed command that is refused without an API error code of its own: exit status 1 with `code`. */
export class CommandRefusal extends Error {
  constructor(
    readonly code: 'NOT_FOUND' | 'CONFLICT' | 'INVALID_STATE',
    message: string,
  ) {
    super(message);
  }
}

export type OptionSpec = { type: 'string' | 'boolean'; value?: string; help: string; required?: true };
export type Flags = Record<string, string | boolean | undefined>;
export type Out = (json: Record<string, unknown>, human: string) => void;

/** What a command's `run` is given once its command line has been parsed and the settings read. */
export interface CommandContext {
  /** The command's words, such as `merchant disable`. */
  command: string;
  flags: Flags;
  /** The positional arguments after the command's words. */
  positionals: string[];
  config: Config;
  out: Out;
  /** `--currency`, or INR; refused unless it is one of SUPPORTED_CURRENCIES. */
  currency(): string;
  /** Who runs the command, as the audit log names them: `cli:` and the operating-system user. */
  actor: string;
}

/** One command: how it is called, what it does, the options it takes (besides --json and --help), and its work. */
export interface CommandSpec {
  args?: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** How many positional arguments follow the command's words. */
  positionals?: number;
  /** A command whose output is a process's log, not one object: it takes no `--json` (`serve`). */
  noJson?: true;
  /** Returns the exit status, or -1 for a command that keeps the process running. */
  run(ctx: CommandContext): Promise<number>;
}

export const MERCHANT: Record<string, OptionSpec> = {
  merchant: { type: 'string', value: 'ID', help: 'the merchant', required: true },
};
export const CURRENCY: OptionSpec = {
  type: 'string',
  value: 'CODE',
  help: 'a currency of SUPPORTED_CURRENCIES (default INR)',
};

export function required(flags: Flags, name: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export async function openMigrated<T>(
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
    throw isUnavailableError(err) && !(err instanceof DatabaseSetupError)
      ? new DatabaseSetupError(database, err)
      : err;
  } finally {
    await database.close().catch(() => {});
  }
}

export function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  return openMigrated(config, (db) => fn(db));
}

/** Writes an operator's action to the audit log the dashboard lists, naming who ran it (CONTRACT §11). */
export function audit(
  d: Database,
  actor: string,
  action: string,
  merchantId: string | null,
  detail: string,
): Promise<void> {
  return insertAuditAction(d.db, { at: Date.now(), actor, action, merchant_id: merchantId, detail });
}

/** An instant (ms, or ISO 8601 text) as the CLI prints it to people: IST, as the console shows it. */
export function istText(at: string | number | null): string {
  if (at === null) return '-';
  return `${istTime(typeof at === 'string' ? Date.parse(at) : at)} IST`;
}

/** An instant in a `--json` answer: RFC 3339 in IST, to the millisecond (`…T14:03:12.345+05:30`). */
export function istJson(at: string | number | null): string | null {
  if (at === null) return null;
  return istIso(typeof at === 'string' ? Date.parse(at) : at);
}

/** `row` with the instants named by `keys` written in IST for `--json`. */
export function withIstDates<T extends object, K extends keyof T & string>(
  row: T,
  keys: readonly K[],
): { [P in keyof T]: P extends K ? string | null : T[P] } {
  const out = { ...row } as Record<string, unknown>;
  for (const k of keys) out[k] = istJson(out[k] as string | number | null);
  return out as { [P in keyof T]: P extends K ? string | null : T[P] };
}

/** Rows under a header, each column as wide as its widest cell. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
