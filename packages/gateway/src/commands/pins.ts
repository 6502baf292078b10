// `toolgate pins list` and `toolgate pins accept TOOL`, against the pins in `stores.state` (SQLite or
// PostgreSQL: a `memory:` store lives only inside the running gateway). An acceptance shows the
// definition diff, is recorded in the audit log first when one is configured, and takes effect in
// every gateway on the store at the tool's next call.

import type { PinRecord, PinStore } from '@toolgate/core';
import { acceptPin, SERVER_IDENTITY, TOOL_SET } from '@toolgate/mcp';
import { openAudit } from '../audit';
import type { LoadedConfig } from '../config/load';
import { openStateStore, type StateStore } from '../stores';
import { UsageError, type CommandIo, type ParsedArgs } from './io';

/** Exit 1 with a sentence: the store or the tool is not what the command needs. */
export class PinsCommandError extends Error {
  override readonly name = 'PinsCommandError';
}

export async function pinsCommand(
  loaded: LoadedConfig,
  sub: 'list' | 'accept',
  tool: string | undefined,
  args: ParsedArgs,
  io: CommandIo,
): Promise<number> {
  const state = openPins(loaded);
  try {
    if (sub === 'list') return await list(loaded, state.pins, args, io);
    return await accept(loaded, state.pins, tool!, args, io);
  } catch (error) {
    if (!(error instanceof PinsCommandError)) throw error;
    io.err(`toolgate pins: ${error.message}`);
    return 1;
  } finally {
    await state.close().catch(() => undefined);
  }
}

function openPins(loaded: LoadedConfig): StateStore {
  const url = loaded.config.stores?.state;
  if (url === undefined || url === 'memory:')
    throw new UsageError(
      "stores.state is memory:, so the pins live only inside the running gateway; set stores.state to 'sqlite:PATH' or a 'postgres://' URL to manage them from the command line",
    );
  return openStateStore(url, loaded.baseDir);
}

/** The name the model sees: the upstream's prefix and the server's own name. */
function localName(loaded: LoadedConfig, record: PinRecord): string {
  if (record.kind === 'server') return `${record.name === TOOL_SET ? 'tools' : 'server'}:${record.source}`;
  const prefix = loaded.config.upstreams[record.source]?.prefix ?? '';
  return `${prefix}${record.name}`;
}

async function list(loaded: LoadedConfig, pins: PinStore, args: ParsedArgs, io: CommandIo): Promise<number> {
  const only = args.flags.get('upstream');
  const records = (await pins.list(typeof only === 'string' ? { source: only } : {})).filter(
    (record) => args.flags.get('changed') !== true || record.changed !== undefined,
  );
  if (records.length === 0) {
    io.out('no pinned definitions (a gateway pins each tool the first time it connects to its server)');
    return 0;
  }
  const rows = records.map((record) => {
    const name = localName(loaded, record);
    const where = record.kind === 'server' ? '' : `${record.source}/${record.name}`;
    const state =
      record.changed === undefined
        ? `pinned ${short(record.digest)} ${record.pinnedAt}`
        : `CHANGED: pinned ${short(record.digest)}, served ${short(record.changed.digest)} since ${record.changed.seenAt}`;
    return [name, where, state] as const;
  });
  const width = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) io.out(`${row[0].padEnd(width[0]!)}  ${row[1].padEnd(width[1]!)}  ${row[2]}`);
  const changed = records.filter((record) => record.changed !== undefined);
  if (changed.length > 0)
    io.out(
      `\n${changed.length} changed definition(s) refused until accepted: toolgate pins accept ${localName(loaded, changed[0]!)}`,
    );
  return 0;
}

async function accept(
  loaded: LoadedConfig,
  pins: PinStore,
  tool: string,
  args: ParsedArgs,
  io: CommandIo,
): Promise<number> {
  const record = await find(loaded, pins, tool, args);
  const name = localName(loaded, record);
  if (record.changed === undefined) {
    io.err(
      `toolgate pins: the definition of '${name}' has not changed since it was pinned; nothing to accept`,
    );
    return 1;
  }
  io.out(`${name} (upstream ${record.source}, tool ${record.name}): the definition changed`);
  io.out(`  pinned ${record.digest} at ${record.pinnedAt}`);
  io.out(`  served ${record.changed.digest} since ${record.changed.seenAt}`);
  io.out(definitionDiff(record.definition, record.changed.definition));
  const by = args.flags.get('by');
  const approver =
    typeof by === 'string' ? by : (io.env['USER'] ?? io.env['USERNAME'] ?? 'toolgate pins accept');
  if (loaded.config.audit !== undefined) {
    const audit = openAudit(loaded.config, loaded.baseDir);
    try {
      // Recorded before it takes effect: an acceptance the log cannot hold does not happen.
      await audit.record({
        kind: 'pin.accepted',
        tool: name,
        source: record.source,
        approver,
        args: record.changed.definition,
      });
    } finally {
      await audit.close().catch(() => undefined);
    }
  }
  const accepted = await acceptPin(pins, {
    source: record.source,
    name: record.name,
    digest: record.changed.digest,
    kind: record.kind === 'server' ? 'server' : 'tool',
  });
  if (!accepted) {
    io.err(
      `toolgate pins: '${name}' changed again while this ran; nothing was accepted. Run the command again to review the newest definition`,
    );
    return 1;
  }
  io.out(
    `accepted: '${name}' runs again with the served definition (every gateway on this store, at its next call)`,
  );
  return 0;
}

async function find(
  loaded: LoadedConfig,
  pins: PinStore,
  tool: string,
  args: ParsedArgs,
): Promise<PinRecord> {
  const only = args.flags.get('upstream');
  // `server:UPSTREAM` names an upstream's identity (endpoint, TLS key, command); `tools:UPSTREAM` its tool set.
  const server = /^(server|tools):(.+)$/.exec(tool);
  if (server !== null) {
    const [, what, source] = server;
    const record = await pins.get(source!, 'server', what === 'tools' ? TOOL_SET : SERVER_IDENTITY);
    if (record === undefined)
      throw new PinsCommandError(
        `no pinned ${what === 'tools' ? 'tool set' : 'identity'} for upstream '${source}'`,
      );
    return record;
  }
  const candidates: PinRecord[] = [];
  for (const [source, upstream] of Object.entries(loaded.config.upstreams)) {
    if (typeof only === 'string' && source !== only) continue;
    const prefix = upstream.prefix ?? '';
    if (!tool.startsWith(prefix)) continue;
    const record = await pins.get(source, 'tool', tool.slice(prefix.length));
    if (record !== undefined) candidates.push(record);
  }
  if (candidates.length === 0)
    throw new PinsCommandError(
      `no pinned tool '${tool}'${typeof only === 'string' ? ` from '${only}'` : ''}; \`toolgate pins list\` shows the pinned ones`,
    );
  const changed = candidates.filter((record) => record.changed !== undefined);
  if (candidates.length > 1 && changed.length !== 1)
    throw new PinsCommandError(
      `'${tool}' names a pinned tool of several upstreams (${candidates.map((r) => r.source).join(', ')}); add --upstream NAME`,
    );
  return changed[0] ?? candidates[0]!;
}

const short = (digest: string) => digest.slice(0, 12);

/** A line diff of two definitions as indented JSON with sorted keys: `-` pinned, `+` served. */
export function definitionDiff(pinned: unknown, served: unknown): string {
  const a = canonicalLines(pinned);
  const b = canonicalLines(served);
  // Longest common subsequence: definitions are small.
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      table[i]![j] =
        a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
  const out = ['--- pinned', '+++ served'];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < b.length && (i === a.length || table[i]![j + 1]! >= table[i + 1]![j]!)) {
      out.push(`+ ${b[j]}`);
      j++;
    } else {
      out.push(`- ${a[i]}`);
      i++;
    }
  }
  return out.join('\n');
}

function canonicalLines(value: unknown): string[] {
  return JSON.stringify(sorted(value), null, 2).split('\n');
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}
