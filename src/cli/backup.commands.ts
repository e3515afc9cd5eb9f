/**
 * `backup --to FILE` and `backup --verify FILE` (CONTRACT §1): a consistent copy of the SQLite
 * database while it serves, and the check of a copy (integrity and ledger) without changing it.
 * PostgreSQL has its own tools for this (`pg_dump`, point-in-time recovery: docs/going-live.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { BackupExistsError, backupSqlite, integrityOf, openCopy } from '../db/backup.ts';
import { sqlitePath } from '../db/database.ts';
import type { LedgerReport } from '../wallet/wallet.service.ts';
import { buildServices } from '../services.ts';
import type { Config } from '../config.ts';
import { CommandRefusal, UsageError, type CommandSpec } from './command.ts';

const MAX_TIMEOUT_S = 86_400;

function timeoutS(value: string | boolean | undefined): number {
  if (value === undefined) return 300;
  const s = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || s < 1 || s > MAX_TIMEOUT_S)
    throw new UsageError(`backup: --timeout-s must be a whole number of seconds from 1 to ${MAX_TIMEOUT_S}`);
  return s;
}

/** The ledger check of a copy opened read-only; a copy the check cannot read says why. */
async function ledgerOf(
  config: Config,
  file: string,
): Promise<LedgerReport & { pending_migrations: string[] }> {
  const { database, pending } = await openCopy(file);
  try {
    // No live channel is needed to read a ledger, and none is opened.
    const services = buildServices({ ...config, setu: null, cashfree: null }, database);
    return { ...(await services.wallets.verify()), pending_migrations: pending };
  } catch (err) {
    return {
      ok: false,
      journals: 0,
      wallets: 0,
      problems: [`the ledger could not be read: ${(err as Error).message}`],
      pending_migrations: pending,
    };
  } finally {
    await database.close();
  }
}

export const BACKUP_COMMANDS: Record<string, CommandSpec> = {
  backup: {
    summary: 'copy the SQLite database while it serves (--to), or check a copy (--verify)',
    options: {
      to: { type: 'string', value: 'FILE', help: 'where to write the copy (it must not exist)' },
      verify: {
        type: 'string',
        value: 'FILE',
        help: 'check a copy read-only: integrity and ledger (it is never migrated)',
      },
      'timeout-s': {
        type: 'string',
        value: 'S',
        help: 'how long to wait for the database while another connection holds it (default 300)',
      },
    },
    async run({ config, flags, out }) {
      const to = flags.to as string | undefined;
      const verify = flags.verify as string | undefined;
      if ((to === undefined) === (verify === undefined))
        throw new UsageError('backup: give either --to FILE or --verify FILE; see paygate backup --help');
      if (to === '' || verify === '') throw new UsageError('backup: FILE must not be empty');
      const timeout = timeoutS(flags['timeout-s']);
      if (verify !== undefined) {
        if (!fs.existsSync(verify)) throw new CommandRefusal('NOT_FOUND', `there is no file at ${verify}`);
        const integrity = (() => {
          try {
            return integrityOf(verify);
          } catch (err) {
            return `not a readable SQLite database: ${(err as Error).message}`;
          }
        })();
        const ledger =
          integrity === 'ok'
            ? await ledgerOf(config, verify)
            : { ok: false, problems: ['not checked: the copy failed its integrity check'] };
        out(
          { file: verify, integrity, ledger },
          [
            `${verify}: integrity ${integrity}`,
            ledger.ok ? 'ledger ok' : `ledger has problems:\n${ledger.problems.join('\n')}`,
          ].join('\n'),
        );
        return integrity === 'ok' && ledger.ok ? 0 : 1;
      }
      const source = sqlitePath(config.databaseUrl);
      if (source === null)
        throw new UsageError(
          'backup --to copies a SQLite database; DATABASE_URL is PostgreSQL: use pg_dump (and point-in-time recovery), see docs/going-live.md',
        );
      // A copy into a folder that is not there is refused by name, not as the driver's failure.
      const folder = path.dirname(path.resolve(to!));
      if (!fs.existsSync(folder))
        throw new CommandRefusal('NOT_FOUND', `there is no folder ${folder} to write the copy in`);
      let result;
      try {
        result = backupSqlite(source, to!, timeout * 1000);
      } catch (err) {
        if (err instanceof BackupExistsError) throw new CommandRefusal('CONFLICT', err.message);
        throw err;
      }
      out(
        { ...result },
        `backup written to ${result.file}: ${result.bytes} bytes, ${result.pages} pages, in ${result.took_ms} ms`,
      );
      return 0;
    },
  },
};
