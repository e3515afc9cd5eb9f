/**
 * A `paygate` command line run in this process through the CLI's `main` (what `bin/paygate.js`
 * runs, with the same output streams), with `env` set around it: a run costs no process start, so
 * a table of commands stays quick. One at a time: the settings are the process's environment.
 * `user` is who runs it, as `bin/paygate.js` names the operating-system user.
 */
import { main } from '../../src/cli/main.ts';

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** stdout as JSON, or undefined when it is not. */
  json: any;
}

let running = false;

export async function paygateInProcess(
  args: string[],
  env: Record<string, string>,
  user?: string,
): Promise<CliRun> {
  if (running) throw new Error('paygateInProcess runs one command at a time');
  running = true;
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let stdout = '';
  let stderr = '';
  try {
    const { status } = await main(
      args,
      {
        stdout: (line) => (stdout += `${line}\n`),
        stderr: (line) => (stderr += `${line}\n`),
      },
      user,
    );
    let json: unknown;
    try {
      json = JSON.parse(stdout);
    } catch {
      json = undefined;
    }
    return { status, stdout, stderr, json };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    running = false;
  }
}
