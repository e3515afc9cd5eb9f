/**
 * The table of `paygate` commands, in the order `paygate --help` lists them. A command group lives in
 * its own `*.commands.ts` file; a new group is one import and one spread here.
 */
import type { CommandSpec } from './command.ts';
import { SERVICE_COMMANDS } from './service.commands.ts';
import { MERCHANT_COMMANDS } from './merchant.commands.ts';
import { WALLET_COMMANDS } from './wallet.commands.ts';
import { CALLBACK_COMMANDS } from './callbacks.commands.ts';
import { REFUND_COMMANDS } from './refund.commands.ts';
import { CHANNEL_COMMANDS } from './channels.commands.ts';
import { EXCEPTION_COMMANDS } from './exceptions.commands.ts';
import { USER_COMMANDS } from './user.commands.ts';
import { RECONCILE_COMMANDS } from './reconcile.commands.ts';
import { REHEARSE_COMMANDS } from './rehearse.commands.ts';
import { BACKUP_COMMANDS } from './backup.commands.ts';

export const COMMANDS: Readonly<Record<string, CommandSpec>> = {
  ...SERVICE_COMMANDS,
  ...MERCHANT_COMMANDS,
  ...WALLET_COMMANDS,
  ...CALLBACK_COMMANDS,
  ...REFUND_COMMANDS,
  ...CHANNEL_COMMANDS,
  ...REHEARSE_COMMANDS,
  ...EXCEPTION_COMMANDS,
  ...USER_COMMANDS,
  ...RECONCILE_COMMANDS,
  ...BACKUP_COMMANDS,
};
