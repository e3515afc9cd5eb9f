/**
 * The README's table of CLI commands says what each command takes: every command of the CLI is in
 * it, and each row's options are exactly those its `--help` lists, both ways (an option that
 * `--help` shows and the table does not, or the reverse, fails). `--json`, which every command but
 * `serve` takes, is said once above the table.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { COMMANDS } from '../../src/cli/commands.ts';
import { main } from '../../src/cli/main.ts';
import { ROOT } from '../support/process.ts';

/** The commands of the README's "Operator CLI" table with the options each row names. */
function readmeCommands(): Map<string, Set<string>> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Operator CLI'));
  const rows = section
    .slice(0, section.indexOf('\n## ', 3))
    .split('\n')
    .filter((l) => l.startsWith('| `paygate'));
  assert.ok(rows.length > 10, 'the table is found');
  const commands = new Map<string, Set<string>>();
  for (const row of rows) {
    const first = row.split(/(?<!\\)\|/)[1]!;
    let previous: string[] = [];
    let previousOptions = new Set<string>();
    for (const [, span] of first.matchAll(/`([^`]+)`/g)) {
      const text = span!.replace(/\\\|/g, '|');
      const words = text.split(/\s+/);
      const options = new Set(text.match(/--[a-z][a-z-]*/g) ?? []);
      // `paygate user disable --email EMAIL` / `enable`: a sibling takes the same options.
      const name =
        words[0] === 'paygate' ? commandIn(words.slice(1)) : [...previous.slice(0, -1), ...words].join(' ');
      if (words[0] !== 'paygate') for (const o of previousOptions) options.add(o);
      assert.ok(Object.hasOwn(COMMANDS, name), `README names "${name}", which is no command (${text})`);
      commands.set(name, new Set([...(commands.get(name) ?? []), ...options]));
      previous = name.split(' ');
      previousOptions = options;
    }
  }
  return commands;
}

/** The longest run of leading words that names a command. */
function commandIn(words: string[]): string {
  for (let n = Math.min(words.length, 2); n > 0; n--) {
    const name = words.slice(0, n).join(' ');
    if (Object.hasOwn(COMMANDS, name)) return name;
  }
  return words.slice(0, 2).join(' ');
}

/** The options a command's `--help` lists, but --json. */
async function helpOptions(command: string): Promise<Set<string>> {
  let stdout = '';
  const { status } = await main([...command.split(' '), '--help'], {
    stdout: (line) => (stdout += `${line}\n`),
    stderr: () => {},
  });
  assert.equal(status, 0);
  assert.ok(stdout.startsWith(`Usage: paygate ${command}`), stdout);
  const at = stdout.indexOf('\nOptions:\n');
  const options = at < 0 ? '' : stdout.slice(at);
  return new Set(
    [...options.matchAll(/^ {2}(--[a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((o) => o !== '--json'),
  );
}

describe("the README's CLI table", () => {
  it('names every command, and each row the options its --help lists, no more and no fewer', async () => {
    const readme = readmeCommands();
    assert.deepEqual([...readme.keys()].sort(), Object.keys(COMMANDS).sort(), 'the same commands');
    for (const [command, documented] of readme) {
      const helped = await helpOptions(command);
      assert.deepEqual(
        [...documented].sort(),
        [...helped].sort(),
        `paygate ${command}: the README's options against --help`,
      );
    }
  });
});
