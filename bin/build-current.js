// Whether the build (dist/, made by `npm run build`) is current: every source file has its compiled
// file, none is newer than it, and the bundle bin/paygate.js runs (dist/cli.bundle.js) is newer
// than every source file.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

export function buildIsCurrent() {
  const bundle = statSync(`${dist}cli.bundle.js`, { throwIfNoEntry: false });
  return bundle !== undefined && compiledSince('', bundle.mtimeMs);
}

/** Whether every source file under `dir` has its compiled file, no older than it, and none is newer than `since`. */
function compiledSince(dir, since) {
  for (const entry of readdirSync(src + dir, { withFileTypes: true })) {
    const name = dir + entry.name;
    if (entry.isDirectory()) {
      if (!compiledSince(`${name}/`, since)) return false;
      continue;
    }
    if (!name.endsWith('.ts')) continue;
    const source = statSync(src + name).mtimeMs;
    const compiled = statSync(dist + name.replace(/\.ts$/, '.js'), { throwIfNoEntry: false });
    if (!compiled || compiled.mtimeMs < source || since < source) return false;
  }
  return true;
}
