#!/usr/bin/env node
// Runs the compiled build (dist/, made by `npm run build`, which `npm ci` runs through `prepare`)
// when it is current: every source file has its compiled file, and none is newer than it.
// Otherwise it runs the TypeScript sources directly through tsx, so an edited tree needs no build
// step. The compiled build starts with about half the memory (no compiler in the process).
import { readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const dist = fileURLToPath(new URL('../dist/', import.meta.url));

function buildIsCurrent(dir = '') {
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

if (buildIsCurrent()) {
  await import(new URL('../dist/cli.js', import.meta.url).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
