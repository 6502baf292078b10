// acceptPinnedDefinition: what `toolgate pins accept TOOL` does, as a function, against a pin store
// (`stores.state`): find the changed definition, record the acceptance in the audit log first when
// one is configured, then accept it; every gateway on the store runs the served definition at the
// tool's next call. The definition diff is one function, for the command line and the inbox.

import type { PinRecord, PinStore } from '@toolgate/core';
import { definitionDiff as diffDefinitions } from '@toolgate/inbox';
import { acceptPin, SERVER_IDENTITY, TOOL_SET } from '@toolgate/mcp';
import { openAudit } from './audit';
import type { LoadedConfig } from './config/load';

/** The store or the tool is not what an acceptance needs: a sentence naming the fix. */
export class PinError extends Error {
  override readonly name = 'PinError';
}

export interface AcceptPinnedDefinitionOptions {
  /** Who accepts: recorded in the audit log. */
  readonly approver: string;
  /** Only this upstream's tool of that name. */
  readonly upstream?: string;
}

export interface PinAcceptance {
  /**
   * `accepted`: done. `unchanged`: the definition has not changed since it was pinned, nothing to do.
   * `changed-again`: it changed again while this ran; nothing was accepted.
   */
  readonly outcome: 'accepted' | 'unchanged' | 'changed-again';
  /** The name the model sees (`server:U` / `tools:U` for an upstream's identity or tool set). */
  readonly name: string;
  readonly record: PinRecord;
  /** The pinned and served definitions' diff, when the definition changed. */
  readonly diff?: string;
}

/**
 * Accepts the served definition of `tool` (the name the model sees, or `server:U` / `tools:U`).
 * Throws PinError when nothing pinned has that name or it is ambiguous; an audit log that cannot
 * record the acceptance throws too, and then nothing is accepted.
 */
export async function acceptPinnedDefinition(
  loaded: LoadedConfig,
  pins: PinStore,
  tool: string,
  options: AcceptPinnedDefinitionOptions,
): Promise<PinAcceptance> {
  const record = await findPinned(loaded, pins, tool, options.upstream);
  const name = localPinName(loaded, record);
  if (record.changed === undefined) return { outcome: 'unchanged', name, record };
  const diff = definitionDiff(record.definition, record.changed.definition);
  if (loaded.resolved.audit !== undefined) {
    const audit = openAudit(loaded.config, loaded.baseDir);
    try {
      // Recorded before it takes effect: an acceptance the log cannot hold does not happen.
      await audit.record({
        kind: 'pin.accepted',
        tool: name,
        source: record.source,
        approver: options.approver,
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
  return { outcome: accepted ? 'accepted' : 'changed-again', name, record, diff };
}

/** The name the model sees: the upstream's prefix and the server's own name. */
export function localPinName(loaded: LoadedConfig, record: PinRecord): string {
  if (record.kind === 'server') return `${record.name === TOOL_SET ? 'tools' : 'server'}:${record.source}`;
  const prefix = loaded.config.upstreams[record.source]?.prefix ?? '';
  return `${prefix}${record.name}`;
}

async function findPinned(
  loaded: LoadedConfig,
  pins: PinStore,
  tool: string,
  only: string | undefined,
): Promise<PinRecord> {
  // `server:UPSTREAM` names an upstream's identity (endpoint, TLS key, command); `tools:UPSTREAM` its tool set.
  const server = /^(server|tools):(.+)$/.exec(tool);
  if (server !== null) {
    const [, what, source] = server;
    const record = await pins.get(source!, 'server', what === 'tools' ? TOOL_SET : SERVER_IDENTITY);
    if (record === undefined)
      throw new PinError(`no pinned ${what === 'tools' ? 'tool set' : 'identity'} for upstream '${source}'`);
    return record;
  }
  const candidates: PinRecord[] = [];
  for (const [source, upstream] of Object.entries(loaded.config.upstreams)) {
    if (only !== undefined && source !== only) continue;
    const prefix = upstream.prefix ?? '';
    if (!tool.startsWith(prefix)) continue;
    const record = await pins.get(source, 'tool', tool.slice(prefix.length));
    if (record !== undefined) candidates.push(record);
  }
  if (candidates.length === 0)
    throw new PinError(
      `no pinned tool '${tool}'${only !== undefined ? ` from '${only}'` : ''}; \`toolgate pins list\` shows the pinned ones`,
    );
  const changed = candidates.filter((record) => record.changed !== undefined);
  if (candidates.length > 1 && changed.length !== 1)
    throw new PinError(
      `'${tool}' names a pinned tool of several upstreams (${candidates.map((r) => r.source).join(', ')}); add --upstream NAME`,
    );
  return changed[0] ?? candidates[0]!;
}

/** A line diff of two definitions as indented JSON with sorted keys: `-` pinned, `+` served. */
export function definitionDiff(pinned: unknown, served: unknown): string {
  const lines = diffDefinitions(pinned, served).map((line) => `${line.op} ${line.text}`);
  return ['--- pinned', '+++ served', ...lines].join('\n');
}
