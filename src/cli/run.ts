/**
 * Reads a `paygate` command line: finds the command in the table, answers help, refuses what the
 * command does not take in one line, reads the settings and runs the command.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { AppError } from '../errors.ts';
import { UsageError, type CommandSpec, type Flags, type OptionSpec, type Out } from './command.ts';
import { COMMANDS } from './commands.ts';

const GLOBAL_OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function optionUsage(name: string, o: OptionSpec): string {
  return o.type === 'string' ? `--${name} ${o.value ?? 'VALUE'}` : `--${name}`;
}

function commandLine(name: string, spec: CommandSpec): string {
  const opts = Object.entries(spec.options).map(([n, o]) =>
    o.required ? optionUsage(n, o) : `[${optionUsage(n, o)}]`,
  );
  return ['paygate', name, spec.args, ...opts].filter(Boolean).join(' ');
}

/**
 * Lines of two columns, the second at `width`. A first column too long for it gets a line of its
 * own, with the second below it at `width` (as argparse does), so the two never run together.
 */
function columns(rows: [string, string][], width: number): string[] {
  return rows.map(([left, right]) =>
    left.length + 2 <= width
      ? `  ${left.padEnd(width)}${right}`
      : `  ${left}\n  ${' '.repeat(width)}${right}`,
  );
}

const USAGE = `Usage: paygate <command> [options] [--json]

${columns(
  Object.entries(COMMANDS).map(([name, spec]) => [
    `${name}${spec.args ? ` ${spec.args}` : ''}`,
    spec.summary,
  ]),
  26,
).join('\n')}

Every command but serve takes --json (one JSON object on stdout); each takes --help. Settings
come from the environment (DATABASE_URL, PORT, …); see README.md.`;

function commandHelp(name: string): string {
  const spec = COMMANDS[name]!;
  const options = columns(
    [
      ...Object.entries(spec.options).map(([n, o]): [string, string] => [optionUsage(n, o), o.help]),
      ...(spec.noJson ? [] : [['--json', 'print one JSON object on stdout'] as [string, string]]),
    ],
    24,
  );
  const usage = `Usage: ${commandLine(name, spec)}${spec.noJson ? '' : ' [--json]'}\n\n${spec.summary}`;
  return options.length ? `${usage}\n\nOptions:\n${options.join('\n')}` : usage;
}

/** Help for the command `words` name, or the list of all commands when they name none. */
function helpFor(words: string[]): string {
  if (words.length === 0) return USAGE;
  try {
    return commandHelp(findCommand(words).name);
  } catch {
    return USAGE;
  }
}

/** The command named by the leading words of `words`, or a usage error that says what exists. */
function findCommand(words: string[]): { name: string; rest: string[] } {
  const [first, second] = words;
  if (
    first &&
    Object.hasOwn(COMMANDS, first) &&
    !Object.keys(COMMANDS).some((n) => n.startsWith(`${first} `))
  )
    return { name: first, rest: words.slice(1) };
  const subs = Object.keys(COMMANDS)
    .filter((n) => n.startsWith(`${first} `))
    .map((n) => n.slice(first!.length + 1));
  if (subs.length === 0) throw new UsageError(`unknown command "${first}"; see paygate --help`);
  if (second === undefined) throw new UsageError(`${first} needs a subcommand: ${subs.join(', ')}`);
  if (!subs.includes(second))
    throw new UsageError(`unknown command "${first} ${second}"; ${first} has: ${subs.join(', ')}`);
  return { name: `${first} ${second}`, rest: words.slice(2) };
}

/** parseArgs's own errors, as one line that names the command. */
function usageFromParse(err: Error & { code?: string }, command: string, argv: string[]): UsageError {
  const option = /'(-[^' ]+)/.exec(err.message)?.[1];
  const see = `see paygate ${command} --help`;
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`${command}: unknown option ${option ?? ''}; ${see}`);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      if (!/ambiguous/.test(err.message))
        return new UsageError(
          `${command}: ${option ?? 'an option'} ${/argument missing/.test(err.message) ? 'needs a value' : 'takes no value'}; ${see}`,
        );
      // A negative number is no value any option takes: suggesting `--amount=-5` would only lead to another refusal.
      const next = option ? argv[argv.indexOf(option) + 1] : undefined;
      return next !== undefined && /^-\d/.test(next)
        ? new UsageError(`${command}: ${option} must not be negative (${next}); ${see}`)
        : new UsageError(
            `${command}: ${option} needs a value; to give one starting with "-", write ${option}=VALUE`,
          );
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new UsageError(
        `${command}: unexpected argument ${/'([^']*)'/.exec(err.message)?.[1] ?? ''}; ${see}`,
      );
    default:
      return new UsageError(`${command}: ${err.message}`);
  }
}

/**
 * Runs the command `argv` names for the operating-system user `user`; resolves to its exit status,
 * or -1 for one that keeps running.
 */
export async function run(argv: string[], out: Out, user: string): Promise<number> {
  // A first, lenient pass finds the command; the second knows its options and refuses others.
  const words = parseArgs({ args: argv, allowPositionals: true, strict: false }).positionals;
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  // Help always answers (exit 0): a command's own, or the list of all for a partial or unknown one.
  const helpWords = words[0] === 'help' ? words.slice(1) : wantsHelp ? words : null;
  if (helpWords) {
    const text = helpFor(helpWords);
    out({ usage: text }, text);
    return 0;
  }
  if (words.length === 0) throw new UsageError(`a command is needed; see paygate --help`);
  const { name: command } = findCommand(words);
  const spec = COMMANDS[command]!;
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      tokens: true,
      options: {
        ...(spec.noJson ? { help: GLOBAL_OPTIONS.help } : GLOBAL_OPTIONS),
        ...Object.fromEntries(Object.entries(spec.options).map(([n, o]) => [n, { type: o.type }])),
      },
    });
  } catch (err) {
    throw usageFromParse(err as Error, command, argv);
  }
  // parseArgs lets a repeated option's last value win; two values for one option are a usage error (CONTRACT §1).
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name))
      throw new UsageError(
        `${command}: --${token.name} was given more than once; see paygate ${command} --help`,
      );
    seen.add(token.name);
  }
  const flags = parsed.values as Flags;
  const positionals = parsed.positionals.slice(command.split(' ').length);
  if (positionals.length > (spec.positionals ?? 0))
    throw new UsageError(
      `${command}: unexpected argument ${positionals[spec.positionals ?? 0]}; see paygate ${command} --help`,
    );
  const config = loadConfig();
  // A currency the gateway does not take is refused as the API refuses it (exit 1, its code).
  const currency = () => {
    const c = (flags.currency as string | undefined) ?? 'INR';
    if (!config.supportedCurrencies.includes(c))
      throw new AppError(
        'VALIDATION_INVALID_CURRENCY',
        `currency ${c} is not in SUPPORTED_CURRENCIES (${config.supportedCurrencies.join(', ')})`,
      );
    return c;
  };
  return spec.run({ command, flags, positionals, config, out, currency, actor: `cli:${user}` });
}
