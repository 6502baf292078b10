// The demo's command line, as a pure function of argv and whether a person is at a terminal, so the
// rule "nobody answered means declined" can be tested without a terminal.

import type { DemoOptions } from './demo';
import { isStoreKind, STORE_KINDS } from './stores';

export const USAGE = `usage: pnpm demo [--yes | --no | --inbox [--inbox-port <n>]] [--json] [--verbose]
                 [--store ${STORE_KINDS.join('|')}] [--db <file>] [--no-color]
  --yes / --no     approve or decline the refund check-in by flag
                   (in a terminal you are asked; without one and
                   without a flag, the refund is declined)
  --inbox          the refund waits in the approval inbox, at a local URL
                   printed at the start, until you approve, approve with
                   changes or decline it there
  --inbox-port <n> the inbox's port (default: a free one)
  --json           print every event as one JSON line instead of the trace
  --verbose        show what the model reads in full
  --store <kind>   where check-ins and artifacts live (${STORE_KINDS.join(', ')}; default memory)
  --db <file>      the SQLite file for --store sqlite
                   (--store postgres reads its server from TOOLGATE_POSTGRES_URL)`;

export type ParsedArgs =
  | { readonly ok: true; readonly options: Omit<DemoOptions, 'write' | 'ask'> }
  | { readonly ok: false; readonly error: string };

const KNOWN = new Set([
  '--yes',
  '--no',
  '--inbox',
  '--inbox-port',
  '--json',
  '--verbose',
  '--store',
  '--db',
  '--no-color',
  '--help',
  '-h',
]);

/**
 * Reads the flags. Without `--yes` or `--no`, a person at a terminal decides; without a terminal
 * nobody can, and the refund is declined: a governance tool never approves by default.
 */
export function parseDemoArgs(
  given: readonly string[],
  env: { readonly interactive: boolean; readonly color: boolean },
): ParsedArgs {
  // `pnpm demo -- --yes` (the npm habit) passes the `--` through: it separates nothing here.
  const argv = given.filter((arg) => arg !== '--');
  const valueOf = (name: string): string | undefined => {
    const at = argv.indexOf(name);
    return at === -1 ? undefined : argv[at + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!KNOWN.has(arg)) return { ok: false, error: `unknown argument '${arg}'` };
    if (arg === '--store' || arg === '--db' || arg === '--inbox-port') i++;
  }
  const yes = argv.includes('--yes');
  const no = argv.includes('--no');
  const inbox = argv.includes('--inbox');
  if ([yes, no, inbox].filter(Boolean).length > 1)
    return { ok: false, error: '--yes, --no and --inbox contradict each other; pass one of them' };
  const portText = valueOf('--inbox-port');
  const inboxPort = portText === undefined ? undefined : Number(portText);
  if (
    argv.includes('--inbox-port') &&
    !(inbox && Number.isInteger(inboxPort) && inboxPort! >= 0 && inboxPort! < 65536)
  )
    return { ok: false, error: '--inbox-port needs --inbox and a port number (0 to 65535)' };
  const store = argv.includes('--store') ? (valueOf('--store') ?? '') : 'memory';
  if (!isStoreKind(store))
    return { ok: false, error: `--store must be one of ${STORE_KINDS.join(', ')}; got '${store}'` };
  const dbPath = valueOf('--db');
  if (argv.includes('--db') && (dbPath === undefined || dbPath.startsWith('--')))
    return { ok: false, error: '--db needs a file name' };
  return {
    ok: true,
    options: {
      decide: yes ? 'approve' : no ? 'decline' : inbox ? 'inbox' : env.interactive ? 'ask' : 'unanswered',
      ...(inboxPort !== undefined ? { inboxPort } : {}),
      json: argv.includes('--json'),
      verbose: argv.includes('--verbose'),
      color: env.color && !argv.includes('--no-color'),
      store,
      ...(dbPath !== undefined ? { dbPath } : {}),
    },
  };
}
