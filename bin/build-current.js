// Whether the compiled build (dist/, made by `npm run build`) is current: every source file has its
// compiled file, and none is newer than it.
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

export function buildIsCurrent(dir = '') {
  for (const entry of readdirSync(src + dir, { withFileTypes: true })) {
    const name = dir + entry.name;
    if (entry.isDirectory()) {
      if (!buildIsCurrent(`${name}/`)) return false;
      continue;
    }
    if (!name.endsWith('.ts')) continue;
    const compiled = statSync(dist + name.replace(/\.ts$/, '.js'), { throwIfNoEntry: false });
    if (!compiled || compiled.mtimeMs < statSync(src + name).mtimeMs) return false;
  }
  return true;
}
