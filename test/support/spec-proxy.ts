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
import { after } from 'node:test';
import { freePort, ROOT } from './process.ts';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.ts';

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
  /** Prism's lines that report a violation or an error, since the proxy was handed out. */
  violations(): string[];
  /** Everything Prism wrote since the proxy was handed out. */
  output(): string;
  stop(): Promise<void>;
}

export async function startSpecProxy(spec: string, upstream: string): Promise<SpecProxy> {
  const prism = await launchPrism(spec, upstream);
  return prism.view(prism.stop);
}

interface Prism {
  /** The proxy as seen from now on: the violations and output Prism writes after this call. */
  view(stop: () => Promise<void>): SpecProxy;
  stop(): Promise<void>;
  /** Lets the test process end while Prism runs, and ends Prism when it does. */
  unref(): void;
}

async function launchPrism(spec: string, upstream: string): Promise<Prism> {
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
  return {
    view(stop) {
      const from = out.length;
      return {
        url: `http://127.0.0.1:${port}`,
        violations: () =>
          out
            .slice(from)
            .split('\n')
            .filter((l) => /violation|✖|error|warning/i.test(l)),
        output: () => out.slice(from),
        stop,
      };
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
    unref() {
      child.unref();
      (child.stdout as unknown as { unref(): void }).unref();
      (child.stderr as unknown as { unref(): void }).unref();
      process.once('exit', () => child.kill('SIGTERM'));
    },
  };
}

/**
 * One Prism for `spec` for a whole test file whose blocks each bring fakes of their own (one per
 * database): Prism takes seconds of CPU to start, a fake a millisecond. Call it at the file's top
 * level, where it registers the hook that stops Prism after the file. `route(upstream)`, in a
 * block's `before`, starts Prism on the first call, points it at `upstream` through a TCP relay,
 * and answers the proxy as that block sees it: the violations and output from then on (its `stop`
 * leaves Prism to the file).
 */
export function useSpecProxy(spec: string): { route(upstream: string): Promise<SpecProxy> } {
  // The hook below stops Prism; Prism and its relay are unreferenced besides, so that a file whose
  // root hook does not run (seen with node 20 after a failed test) still ends, and ends Prism.
  let shared: Promise<{ prism: Prism; relay: TcpProxy }> | null = null;
  after(async () => {
    if (!shared) return;
    const { prism, relay } = await shared;
    await prism.stop();
    await relay.close();
  });
  return {
    async route(upstream) {
      const to = new URL(upstream);
      shared ??= (async () => {
        const relay = await startTcpProxy(to.hostname, Number(to.port));
        relay.unref();
        const prism = await launchPrism(spec, `http://127.0.0.1:${relay.port}`);
        prism.unref();
        return { prism, relay };
      })();
      const { prism, relay } = await shared;
      relay.retarget(to.hostname, Number(to.port));
      return prism.view(async () => {});
    },
  };
}
