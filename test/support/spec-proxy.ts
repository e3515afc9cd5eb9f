/**
 * The providers' published OpenAPI documents between Paygate and the fakes: `startSpecProxy` runs
 * `spec-proxy` (Stoplight Prism as a validating proxy) in front of a fake, and collects every line
 * where Prism reports a request or an answer that breaks the document.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { freePort, ROOT } from './process.ts';

/** Where the documents and the proxy script are: CHANNEL_SPECS_DIR, else ../shared beside the checkout. */
export const SPECS_DIR = process.env.CHANNEL_SPECS_DIR ?? path.resolve(ROOT, '../shared/specs');
const PROXY = path.resolve(SPECS_DIR, '../tools/spec-proxy');

export const SETU_SPEC = path.join(SPECS_DIR, 'setu-umap.openapi.json');
export const CASHFREE_SPEC = path.join(SPECS_DIR, 'cashfree-payouts-2024-01-01.openapi.json');

/** The skip option: the documents are needed, and under CI their absence fails. */
export function specSkip(): string | false {
  if (existsSync(SETU_SPEC) && existsSync(CASHFREE_SPEC) && existsSync(PROXY)) return false;
  if (process.env.CI === 'true')
    throw new Error(`CI=true but the providers' documents are not at ${SPECS_DIR}`);
  return `the providers' OpenAPI documents are not at ${SPECS_DIR}`;
}

export interface SpecProxy {
  url: string;
  /** Prism's lines that report a violation or an error, after it started. */
  violations(): string[];
  output(): string;
  stop(): Promise<void>;
}

export async function startSpecProxy(spec: string, upstream: string): Promise<SpecProxy> {
  const port = await freePort();
  const child: ChildProcess = spawn(PROXY, [spec, upstream, String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 180_000;
  while (!out.includes('Prism is listening')) {
    if (child.exitCode !== null) throw new Error(`spec-proxy exited: ${out.slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`spec-proxy did not start: ${out.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const started = out.length;
  return {
    url: `http://127.0.0.1:${port}`,
    violations: () =>
      out
        .slice(started)
        .split('\n')
        .filter((l) => /violation|✖|error|warning/i.test(l)),
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
