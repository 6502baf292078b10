// What a command reads and writes, so tests can run commands in-process.

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

const VALUE_FLAGS = new Set([
  'config',
  'port',
  'host',
  'out',
  'by',
  'upstream',
  'public-key',
  'checkpoint',
  'head',
]);
const ALIASES: Readonly<Record<string, string>> = { c: 'config', p: 'port' };

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--') {
      positional.push(...argv.slice(index + 1));
      break;
    }
    const match = /^--?([A-Za-z][\w-]*)(?:=(.*))?$/.exec(arg);
    if (match === null) {
      positional.push(arg);
      continue;
    }
    const name = ALIASES[match[1]!] ?? match[1]!;
    if (match[2] !== undefined) flags.set(name, match[2]);
    else if (VALUE_FLAGS.has(name)) {
      const value = argv[index + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
      index += 1;
    } else flags.set(name, true);
  }
  return { positional, flags };
}
