/**
 * The providers' published OpenAPI documents between Paygate and the fakes: `startSpecProxy` runs
 * Stoplight Prism (a devDependency) as a validating proxy in front of a fake, and collects every line
 * where Prism reports a request or an answer that breaks the document. The documents are the
 * repository's own copies in `specs/`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort, ROOT } from './process.ts';

const SPECS_DIR = path.join(ROOT, 'specs');
export const SETU_SPEC = path.join(SPECS_DIR, 'setu-umap.openapi.json');
export const CASHFREE_SPEC = path.join(SPECS_DIR, 'cashfree-payouts-2024-01-01.openapi.json');

/** Prism's command-line script, from its package's `bin`; a missing package fails the test that needs it. */
function prismScript(): string {
  const manifest = createRequire(path.join(ROOT, 'package.json')).resolve(
    '@stoplight/prism-cli/package.json',
  );
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { prism: string } };
  return path.resolve(path.dirname(manifest), bin.prism);
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
  const args = ['proxy', '--errors', '-h', '127.0.0.1', '-p', String(port), spec, upstream];
  const child: ChildProcess = spawn(process.execPath, [prismScript(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 180_000;
  while (!out.includes('Prism is listening')) {
    if (child.exitCode !== null) throw new Error(`Prism exited: ${out.slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`Prism did not start: ${out.slice(-2000)}`);
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
