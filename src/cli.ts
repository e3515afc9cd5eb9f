/**
 * The `paygate` command. Every command takes `--json` and then prints exactly one
 * JSON object on stdout; without it, lines for people. Commands that touch the database run the
 * migrations first. The commands themselves live in `cli/`, one file per group (`cli/commands.ts`).
 */
import os from 'node:os';
import { main } from './cli/main.ts';

/**
 * Who runs the command, for the audit log: the operating-system user, or `$USER` for a uid the
 * system has no name for (a container's, say).
 */
function operatingSystemUser(): string {
  try {
    const name = os.userInfo().username;
    if (name) return name;
  } catch {
    // No passwd entry for this uid: $USER below.
  }
  return process.env.USER || 'unknown';
}

const { status, failed } = await main(
  process.argv.slice(2),
  {
    stdout: (line) => console.log(line),
    stderr: (line) => console.error(line),
  },
  operatingSystemUser(),
);
if (status !== null) process.exitCode = status;
// A serve that failed half-way may hold connections or timers open: end once the line is out.
if (failed) setTimeout(() => process.exit(), 200).unref();
