/**
 * The command blocks of `docs/going-live.md` and how a test runs them: each ```sh block carries a
 * marker as the last line before it, `<!-- run -->` (a test runs it as written) or
 * `<!-- not run: why -->`; a block is run by bash with `npx paygate` pointed at this checkout's
 * `bin/paygate.js` and the guide's paths replaced by the test's own.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './process.ts';

export const GUIDE = path.join(ROOT, 'docs/going-live.md');

export interface GuideBlock {
  /** The section it is in (its `## ` title). */
  section: string;
  /** `run`, or the reason it is not run. */
  marker: string | null;
  run: boolean;
  script: string;
}

export function guideBlocks(text = fs.readFileSync(GUIDE, 'utf8')): GuideBlock[] {
  const blocks: GuideBlock[] = [];
  let section = '';
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('## ')) section = line.slice(3);
    if (line !== '```sh') continue;
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === '') j--;
    const marker = /^<!-- (run|not run: .+) -->$/.exec(lines[j] ?? '')?.[1] ?? null;
    const end = lines.indexOf('```', i + 1);
    blocks.push({
      section,
      marker,
      run: marker === 'run',
      script: lines.slice(i + 1, end).join('\n'),
    });
    i = end;
  }
  return blocks;
}

/** The guide's paths in a block, replaced by a test's own (`[guide's text, the test's]`). */
export function localised(script: string, replacements: [string, string][]): string {
  let out = script;
  for (const [from, to] of replacements) out = out.split(from).join(to);
  return out;
}

const BIN = path.join(ROOT, 'bin/paygate.js');

/** Runs a block in bash (-e, pipefail) with `npx paygate` as this checkout's command. */
export async function runBlock(
  script: string,
  env: Record<string, string>,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const prelude = `npx() { if [ "$1" = paygate ]; then shift; node "${BIN}" "$@"; else command npx "$@"; fi; }\n`;
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'bash',
      ['-e', '-o', 'pipefail', '-c', prelude + script],
      {
        env: { ...process.env, LOG_LEVEL: 'warn', ...env },
        encoding: 'utf8',
        timeout: 300_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return { status: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return {
      status: typeof e.code === 'number' ? e.code : 1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? '',
    };
  }
}
