/**
 * Runs real `paygate` processes for tests that need several of them, a restart or a kill -9:
 * `spawnServer` starts `bin/paygate.js serve` on a free port and waits until /readyz answers.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/paygate.js');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  baseUrl: string;
  /** Everything the process wrote, for assertions and for failure messages. */
  output(): string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

/** Runs a CLI command to completion (migrate, merchant create, wallet credit, …). Parses stdout with --json. */
export function cli(
  args: string[],
  env: Record<string, string>,
): { status: number | null; stdout: string; stderr: string; json: any } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: jsonOf(r.stdout) };
}

/** `cli` without blocking this process: for commands that call servers the test itself runs (the fake providers). */
export function cliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string; json: any }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    child.once('exit', (status) => resolve({ status, stdout, stderr, json: jsonOf(stdout) }));
  });
}

/** A command's stdout as JSON, or undefined when it is not JSON. */
function jsonOf(stdout: string): unknown {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

export async function spawnServer(
  env: Record<string, string>,
  opts: { timeoutMs?: number } = {},
): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnOnce(env, opts);
    } catch (err) {
      // A port picked by freePort() can be taken by another process before the server binds it.
      if (env.PORT || attempt >= 3 || !/EADDRINUSE/.test(String((err as Error).message))) throw err;
    }
  }
}

async function spawnOnce(env: Record<string, string>, opts: { timeoutMs?: number }): Promise<ServerProcess> {
  const port = Number(env.PORT) || (await freePort());
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  // Wait for this process's own "listening" line, so a stranger on the same port is never mistaken for it.
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`paygate exited early (${child.exitCode}):\n${out}`);
    if (out.includes(`Paygate listening on http://127.0.0.1:${port}`)) {
      try {
        const res = await fetch(`${baseUrl}/readyz`);
        if (res.ok) break;
      } catch {
        // not answering yet
      }
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`paygate did not become ready:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    port,
    baseUrl,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
