/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --profile DIR`): where the gateway's busy
 * time goes, by package or source file and by function, as shares of non-idle samples.
 *
 * `node --import tsx bench/profile.ts FILE.cpuprofile [--top N]`
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The package (node_modules/NAME), project file (src/…) or runtime bucket a frame belongs to. */
export function bucketOf(url: string, functionName: string): string {
  if (!url) {
    if (functionName === '(idle)') return '(idle)';
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(program)') return '(program: native, not attributed)';
    return `(native: ${functionName || 'anonymous'})`;
  }
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const src = /\/(src|bench)\/(.+)$/.exec(url);
  if (src) return `${src[1]}/${src[2]}`;
  return path.basename(url);
}

export function summarise(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const buckets = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const bucket = bucketOf(n.callFrame.url, n.callFrame.functionName);
    if (bucket === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + us);
    const fn = `${n.callFrame.functionName || '(anonymous)'} (${bucket}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''})`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  // Inclusive time: each sample counts once for every distinct function on its stack.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  for (const [id, us] of self) {
    if (bucketOf(byId.get(id)?.callFrame.url ?? '', byId.get(id)?.callFrame.functionName ?? '') === '(idle)')
      continue;
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      if (f.functionName === '(root)') continue;
      const bucket = bucketOf(f.url, f.functionName);
      const key = `${f.functionName || '(anonymous)'} (${bucket}${f.url ? `:${f.lineNumber + 1}` : ''})`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `  ${pct(us)}  ${k}`);
  return [
    `busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s (${((busy / (busy + idle)) * 100).toFixed(0)} % busy); shares of busy time:`,
    'by package / file:',
    ...list(buckets),
    'by function (self time):',
    ...list(functions),
    'by function, including what it calls:',
    ...list(inclusive),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' } } });
  if (positionals.length === 0) {
    console.error('usage: node --import tsx bench/profile.ts FILE.cpuprofile [--top N]');
    process.exit(2);
  }
  for (const file of positionals) {
    console.log(
      `${file}\n${summarise(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(values.top ?? 25))}\n`,
    );
  }
}
