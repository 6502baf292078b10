// What a command reads and writes, so tests can run commands in-process, and how its command line is read.

import { parseArgs as nodeParseArgs } from 'node:util';
import { closest } from '../config/errors';

export interface CommandIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Not built yet: waits on another package. Exit code 2, a sentence saying what is missing. */
export class NotSupportedError extends Error {
  override readonly name = 'NotSupportedError';
}

export interface ParsedArgs {
  readonly positional: readonly string[];
  readonly flags: ReadonlyMap<string, string | true>;
}

type FlagKind = 'string' | 'boolean';

/** Each command's flags; anything else on its command line is refused (exit 2) with a did-you-mean. */
export const COMMAND_FLAGS: Readonly<Record<string, Readonly<Record<string, FlagKind>>>> = {
  gateway: { port: 'string', host: 'string', stdio: 'boolean' },
  check: {},
  policy: {},
  pins: { changed: 'boolean', upstream: 'string', by: 'string' },
  audit: { 'public-key': 'string', out: 'string', checkpoint: 'string', head: 'string' },
  credentials: { tenant: 'string', principal: 'string', 'from-env': 'string', 'from-file': 'string' },
  help: {},
};

/** Subcommands (and how many more words each takes) of the commands that have them. */
export const SUBCOMMANDS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  policy: { test: 1 },
  pins: { list: 0, accept: 1 },
  audit: { verify: 0, export: 0 },
  credentials: { list: 1, set: 1, delete: 1 },
};

const COMMON: Readonly<Record<string, FlagKind>> = { config: 'string', help: 'boolean' };
const SHORT: Readonly<Record<string, string>> = { config: 'c', port: 'p', help: 'h' };

/**
 * The command line, read strictly with `node:util`'s parseArgs: the command, then only the flags
 * that command knows. An unknown command, subcommand or flag, a missing value or a stray word is a
 * `UsageError` naming it (no value is quoted), with the closest known name.
 */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  const command = commandOf(argv);
  if (command !== undefined && !Object.hasOwn(COMMAND_FLAGS, command))
    throw new UsageError(`unknown command '${command}'${didYouMean(command, Object.keys(COMMAND_FLAGS))}`);
  const known = { ...COMMON, ...(command === undefined ? {} : COMMAND_FLAGS[command]) };
  const options: Record<string, { type: FlagKind; short?: string }> = {};
  for (const [name, type] of Object.entries(known))
    options[name] = { type, ...(SHORT[name] !== undefined ? { short: SHORT[name] } : {}) };
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = nodeParseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: true,
    }) as typeof parsed;
  } catch (error) {
    throw usageOf(error, Object.keys(known));
  }
  const flags = new Map<string, string | true>();
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === undefined || value === false) continue;
    flags.set(name, value);
  }
  const positional = parsed.positionals;
  const [, sub, ...rest] = positional;
  const subs = command === undefined ? undefined : SUBCOMMANDS[command];
  if (subs !== undefined && sub !== undefined) {
    if (!Object.hasOwn(subs, sub))
      throw new UsageError(`unknown subcommand '${command} ${sub}'${didYouMean(sub, Object.keys(subs))}`);
    if (rest.length > subs[sub]!)
      throw new UsageError(
        `'${command} ${sub}' takes ${subs[sub]} argument(s), and was given ${rest.length}`,
      );
  } else if (subs === undefined && positional.length > 1) {
    throw new UsageError(`'${command}' takes no arguments, and was given ${positional.length - 1}`);
  }
  return { positional, flags };
}

/** The first word that is not a flag or a flag's value, read leniently over every command's flags. */
function commandOf(argv: readonly string[]): string | undefined {
  const options: Record<string, { type: FlagKind; short?: string }> = {};
  for (const flags of [COMMON, ...Object.values(COMMAND_FLAGS)])
    for (const [name, type] of Object.entries(flags))
      options[name] = { type, ...(SHORT[name] !== undefined ? { short: SHORT[name] } : {}) };
  try {
    return nodeParseArgs({ args: [...argv], options, strict: false, allowPositionals: true }).positionals[0];
  } catch {
    return argv.find((arg) => !arg.startsWith('-'));
  }
}

function didYouMean(word: string, known: readonly string[], prefix = ''): string {
  const guess = closest(word, known);
  return guess === undefined ? '' : `; did you mean '${prefix}${guess}'?`;
}

/** parseArgs' own error, as a usage error that names the flag (never its value) and a guess. */
function usageOf(error: unknown, known: readonly string[]): UsageError {
  const code = (error as { code?: string }).code;
  const message = (error as Error).message;
  // "Option '-c, --config <value>' argument missing": the long name when there is one.
  const flag = (/'(?:-\w, )?(--?[\w-]+)/.exec(message) ?? [])[1];
  const name = flag?.replace(/^-+/, '');
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(
        `unknown flag '${flag ?? '?'}' for this command${name === undefined ? '' : didYouMean(name, known, '--')}`,
      );
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return new UsageError(
        message.includes('argument missing')
          ? `${flag ?? 'a flag'} needs a value`
          : `${flag ?? 'a flag'} takes no value`,
      );
    default:
      return new UsageError('the command line cannot be read');
  }
}
