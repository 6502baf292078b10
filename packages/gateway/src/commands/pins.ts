// `toolgate pins list` and `toolgate pins accept TOOL`, against the pins in `stores.state` (SQLite or
// PostgreSQL: a `memory:` store lives only inside the running gateway). An acceptance shows the
// definition diff, is recorded in the audit log first when one is configured, and takes effect in
// every gateway on the store at the tool's next call.

import type { PinStore } from '@toolgate/core';
import type { LoadedConfig } from '../config/load';
import { acceptPinnedDefinition, localPinName, PinError } from '../pins';
import { openStateStore, type StateStore } from '../stores';
import { UsageError, type CommandIo, type ParsedArgs } from './io';

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
    if (!(error instanceof PinError)) throw error;
    io.err(`toolgate pins: ${error.message}`);
    return 1;
  } finally {
    await state.close().catch(() => undefined);
  }
}

function openPins(loaded: LoadedConfig): StateStore {
  const location = loaded.resolved.stores?.state;
  if (location === undefined || location.kind === 'memory')
    throw new UsageError(
      "stores.state is memory:, so the pins live only inside the running gateway; set stores.state to 'sqlite:PATH' or a 'postgres://' URL to manage them from the command line",
    );
  return openStateStore(location);
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
    const name = localPinName(loaded, record);
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
      `\n${changed.length} changed definition(s) refused until accepted: toolgate pins accept ${localPinName(loaded, changed[0]!)}`,
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
  const by = args.flags.get('by');
  const only = args.flags.get('upstream');
  const acceptance = await acceptPinnedDefinition(loaded, pins, tool, {
    approver: typeof by === 'string' ? by : (io.env['USER'] ?? io.env['USERNAME'] ?? 'toolgate pins accept'),
    ...(typeof only === 'string' ? { upstream: only } : {}),
  });
  const { name, record } = acceptance;
  if (acceptance.outcome === 'unchanged' || record.changed === undefined) {
    io.err(
      `toolgate pins: the definition of '${name}' has not changed since it was pinned; nothing to accept`,
    );
    return 1;
  }
  io.out(`${name} (upstream ${record.source}, tool ${record.name}): the definition changed`);
  io.out(`  pinned ${record.digest} at ${record.pinnedAt}`);
  io.out(`  served ${record.changed.digest} since ${record.changed.seenAt}`);
  io.out(acceptance.diff ?? '');
  if (acceptance.outcome === 'changed-again') {
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

const short = (digest: string) => digest.slice(0, 12);
