/**
 * The `paygate` command. Every command takes `--json` and then prints exactly one
 * JSON object on stdout; without it, lines for people. Commands that touch the database run the
 * migrations first. The commands themselves live in `cli/`, one file per group (`cli/commands.ts`).
 */
import { main } from './cli/main.ts';

const { status, failed } = await main(process.argv.slice(2), {
  stdout: (line) => console.log(line),
  stderr: (line) => console.error(line),
});
if (status !== null) process.exitCode = status;
// A serve that failed half-way may hold connections or timers open: end once the line is out.
if (failed) setTimeout(() => process.exit(), 200).unref();
