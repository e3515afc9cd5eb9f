/**
 * `deploy/paygate.env.example` is the complete live settings file the guide points to: every setting
 * the config reads is in it (read by watching `loadConfig` read the environment, and by the names its
 * source quotes), each under a comment that says what it is; nothing in it is a setting Paygate does
 * not read; and the file as shipped, read by bash as the guide says, is a configuration Paygate accepts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { ROOT } from '../support/process.ts';

const FILE = path.join(ROOT, 'deploy/paygate.env.example');
const TEXT = fs.readFileSync(FILE, 'utf8');
const ASSIGNMENT = /^#?([A-Z][A-Z0-9_]*)=/;

/** The settings named in the file, commented-out ones included. */
function named(): string[] {
  return TEXT.split('\n').flatMap((line) => ASSIGNMENT.exec(line)?.[1] ?? []);
}

/** The environment bash makes of the file (`set -a; . FILE`), without the caller's own. */
function sourced(): Record<string, string> {
  const out = execFileSync(
    'bash',
    ['-c', `set -a; . "${FILE}"; set +a; node -e 'console.log(JSON.stringify(process.env))'`],
    {
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
    },
  );
  const env = JSON.parse(out) as Record<string, string>;
  return Object.fromEntries(
    named()
      .filter((n) => n in env)
      .map((n) => [n, env[n]!]),
  );
}

/** Every setting `loadConfig` reads, watched while it reads the file's settings (so every branch runs). */
function readByConfig(env: Record<string, string>): Set<string> {
  const seen = new Set<string>();
  const watched = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') seen.add(key);
      return target[key as string];
    },
  });
  loadConfig(watched);
  // And the names config.ts quotes, for a setting read only on a path these values do not take.
  const source = fs.readFileSync(path.join(ROOT, 'src/config.ts'), 'utf8');
  for (const [, fromEnv, quoted] of source.matchAll(/env\.([A-Z][A-Z0-9_]+)|'([A-Z][A-Z0-9]*_[A-Z0-9_]+)'/g))
    seen.add((fromEnv ?? quoted)!);
  return seen;
}

describe('deploy/paygate.env.example', () => {
  it('names every setting the config reads, and only those', () => {
    const inFile = new Set(named());
    const read = readByConfig(sourced());
    assert.deepEqual([...read].filter((n) => !inFile.has(n)).sort(), [], 'settings missing from the example');
    assert.deepEqual([...inFile].filter((n) => !read.has(n)).sort(), [], 'settings Paygate does not read');
    assert.equal(inFile.size, named().length, 'each setting once');
  });

  it('says what each setting is: every group of settings follows a comment', () => {
    const lines = TEXT.split('\n');
    lines.forEach((line, i) => {
      if (!ASSIGNMENT.exec(line)) return;
      let j = i - 1;
      while (j >= 0 && ASSIGNMENT.exec(lines[j]!)) j--;
      assert.ok(
        j >= 0 && /^# \S/.test(lines[j]!),
        `line ${i + 1} (${line.split('=')[0]}) has no comment above it`,
      );
    });
  });

  it('read by bash as the guide says, is a configuration Paygate accepts, both live channels on', () => {
    const config = loadConfig(sourced());
    assert.ok(config.setu, 'Setu is configured');
    assert.ok(config.cashfree, 'Cashfree is configured');
    assert.match(config.publicUrl, /^https:/);
    assert.match(config.databaseUrl, /^postgres:/);
  });
});
