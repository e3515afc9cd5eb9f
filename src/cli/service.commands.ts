/** `serve` and `migrate`: the service's process and its schema. */
import { disableAllocationSitePretenuring } from '../gc-tuning.ts';
import { openMigrated, PortInUseError, type CommandSpec } from './command.ts';

export const SERVICE_COMMANDS: Record<string, CommandSpec> = {
  serve: {
    summary: 'start the HTTP service and its workers',
    options: {},
    noJson: true,
    async run({ config, out }) {
      disableAllocationSitePretenuring();
      // Loaded here only: the web stack costs a second of start-up that other commands do not need.
      const { startServer, firstRunBanner } = await import('../server.ts');
      let firstRun: { merchant_id: string; api_key: string; webhook_secret: string } | null = null;
      const onFirstRun = (created: NonNullable<typeof firstRun>) => {
        firstRun = created;
      };
      const server = await startServer(config, { firstRun: true, onFirstRun }).catch((err: unknown) => {
        if ((err as { code?: string }).code === 'EADDRINUSE')
          throw new PortInUseError(
            `cannot listen on ${config.host}:${config.port}: the port is in use; set PORT (or HOST) to another`,
          );
        throw err;
      });
      const banner = firstRun ? `${firstRunBanner(config, firstRun)}\n` : '';
      out(
        { listening: server.address, first_run: firstRun },
        `${banner}Paygate listening on ${server.address}`,
      );
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
    },
  },
  migrate: {
    summary: 'bring the database schema up to date',
    options: {},
    async run({ config, out }) {
      const applied = await openMigrated(config, async (_db, done) => done);
      out({ applied }, applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      return 0;
    },
  },
};
