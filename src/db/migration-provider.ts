/**
 * Every migration, for SQLite and PostgreSQL. Names sort lexically, which is the order kysely
 * applies them in; each larger migration lives in a file of its own and is listed here.
 */
import type { MigrationProvider } from 'kysely';
import type { DatabaseKind } from './kind.ts';
import { livePayins } from './live-payins.migration.ts';
import { coreMigrations } from './migrations.ts';
import { livePayouts } from './live-payouts.migration.ts';
import { refunds } from './refunds.migration.ts';
import { webhookSecrets } from './webhook-secrets.migration.ts';
import { reconciliation } from './reconciliation.migration.ts';
import { consoleUsers } from './console-users.migration.ts';
import { exceptions } from './exceptions.migration.ts';
import { liveRefunds } from './live-refunds.migration.ts';
import { refundIndex } from './refund-index.migration.ts';
import { channelClaims } from './channel-claims.migration.ts';
import { reconcileOpen } from './reconcile-open.migration.ts';
import { refundIds } from './refund-ids.migration.ts';
import { afterFinal } from './after-final.migration.ts';
import { intake } from './intake.migration.ts';
import { accountTransfers } from './account-transfers.migration.ts';
import { disputes } from './disputes.migration.ts';
import { sharedLimits } from './shared-limits.migration.ts';
import { consoleAttention } from './console-attention.migration.ts';

export function migrationProvider(kind: DatabaseKind): MigrationProvider {
  return {
    async getMigrations() {
      return {
        ...coreMigrations(kind),
        '0006_live_payouts': livePayouts(),
        '0007_live_payins': livePayins(),
        '0008_refunds': refunds(kind),
        '0009_webhook_secrets': webhookSecrets(),
        '0011_console_users': consoleUsers(),
        '0012_reconciliation': reconciliation(kind),
        '0013_live_refunds': liveRefunds(),
        '0014_exceptions': exceptions(),
        '0015_refund_index': refundIndex(),
        '0016_channel_claims': channelClaims(),
        '0017_reconcile_open': reconcileOpen(),
        '0018_refund_ids': refundIds(),
        '0019_after_final': afterFinal(),
        '0020_intake': intake(kind),
        '0021_account_transfers': accountTransfers(),
        '0022_disputes': disputes(),
        '0023_shared_limits': sharedLimits(),
        '0024_console_attention': consoleAttention(),
      };
    },
  };
}
