// Resources and prompts of upstream servers, served under their clients' prefixes and governed: before
// a resource is read or a prompt is got, the chain's permission checker is asked, with capability
// 'resource_read' or 'prompt_get' and the prefixed URI or name as target.

import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import {
  DeadlineError,
  DEFAULT_DEADLINE_MS,
  isChain,
  refusalReason,
  withDeadline,
  type ChainSource,
  type Identity,
} from '@toolgate/core';
import { permissionCheckerOf } from '@toolgate/middleware';
import type { McpUpstream } from './client';
import { declaredCapabilities, relayedInputRequired, upstreamRetryOf } from './input-relay';
import { UpstreamAskedError, type UpstreamRelay } from './relay';
import type { McpRequestExtra } from './serve';
import type { UpstreamStates } from './upstream-state';

/** Refused: the client reads the refusal sentence as the error message. */
const REFUSED = -32003;

export interface ProxySetup {
  /** The upstreams served, or per request (a gateway serves each tenant its own). */
  readonly upstreams:
    | readonly McpUpstream[]
    | ((extra: McpRequestExtra) => readonly McpUpstream[] | Promise<readonly McpUpstream[]>);
  readonly chain: ChainSource;
  identify(extra: McpRequestExtra): Promise<Identity | undefined>;
  /** Who watches which upstream resources; with it, resources/subscribe and unsubscribe are served. */
  readonly watch?: ResourceWatch;
  /** Seals an upstream's input-required answer for a 2026-07-28 client; without it, none is relayed. */
  readonly states?: UpstreamStates;
}

/**
 * Runs a request to an upstream for a 2026-07-28 client so that the upstream's questions reach the
 * client: it hears the client's declared capabilities, gets its own state and the client's answers
 * back on the retry, and its input-required answer is relayed under our sealed state.
 */
async function relayed<T>(
  setup: ProxySetup,
  extra: McpRequestExtra,
  request: { readonly method: string; readonly target: string; readonly args: unknown },
  upstream: McpUpstream,
  run: (relay?: UpstreamRelay) => Promise<T>,
): Promise<T> {
  const declared = declaredCapabilities(extra);
  if (declared === undefined || setup.states === undefined) return run();
  const binding = { identity: await setup.identify(extra), ...request, upstream: upstream.name };
  const retry = upstreamRetryOf(setup.states, extra, binding);
  try {
    return await run({ clientCapabilities: declared, ...(retry !== undefined ? { retry } : {}) });
  } catch (error) {
    if (!(error instanceof UpstreamAskedError)) throw error;
    // The SDK serves an input-required result from any multi-round-trip handler.
    return relayedInputRequired(setup.states, binding, error.asked, declared) as T;
  }
}

/**
 * Resource subscriptions across the servers of one `mcpServe`: an upstream is asked to watch a URI
 * while at least one downstream connection subscribes to it, and its updates reach only those.
 */
export interface ResourceWatch {
  add(server: Watcher, upstream: McpUpstream, uri: string, signal?: AbortSignal): Promise<void>;
  remove(server: Watcher, upstream: McpUpstream, uri: string): void;
  /** Forgets a closed connection's subscriptions. */
  drop(server: Watcher): void;
  close(): void;
}

/** Who hears a watched resource's updates: a 2025-11-25 connection's server, or the listen streams' bus. */
export type Watcher = Pick<Server, 'sendResourceUpdated'>;

export function resourceWatch(): ResourceWatch {
  const watched = new Map<McpUpstream, { stop: () => void; uris: Map<string, Set<Watcher>> }>();
  const remove = (server: Watcher, upstream: McpUpstream, uri: string): void => {
    const entry = watched.get(upstream);
    const servers = entry?.uris.get(uri);
    if (entry === undefined || servers === undefined || !servers.delete(server) || servers.size > 0) return;
    entry.uris.delete(uri);
    upstream.unsubscribeResource?.(uri).catch(() => undefined);
  };
  return {
    async add(server, upstream, uri, signal) {
      if (upstream.subscribeResource === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Resource subscriptions are not supported by the upstream serving '${uri.slice(0, 200)}'`,
        );
      let entry = watched.get(upstream);
      if (entry === undefined) {
        const uris = new Map<string, Set<Watcher>>();
        const stop = upstream.subscribe((event) => {
          if (event.type !== 'mcp.resource.updated') return;
          for (const subscriber of uris.get(event.uri) ?? [])
            subscriber.sendResourceUpdated({ uri: event.uri }).catch(() => undefined);
        });
        entry = { stop, uris };
        watched.set(upstream, entry);
      }
      const servers = entry.uris.get(uri);
      if (servers !== undefined) {
        servers.add(server);
        return;
      }
      await upstream.subscribeResource(uri, signal);
      const now = entry.uris.get(uri);
      if (now !== undefined) now.add(server);
      else entry.uris.set(uri, new Set([server]));
    },
    remove,
    drop(server) {
      for (const [upstream, entry] of watched)
        for (const [uri, servers] of [...entry.uris]) if (servers.has(server)) remove(server, upstream, uri);
    },
    close() {
      for (const entry of watched.values()) entry.stop();
      watched.clear();
    },
  };
}

/** Throws when two upstreams share a prefix: a URI or prompt name could not tell which one it names. */
export function assertDistinctPrefixes(server: string, upstreams: readonly McpUpstream[]): void {
  const seen = new Map<string, string>();
  for (const upstream of upstreams) {
    const other = seen.get(upstream.prefix);
    if (other !== undefined)
      throw new TypeError(
        `mcpServe '${server}': upstreams '${other}' and '${upstream.name}' share the prefix '${upstream.prefix}', so their resources and prompts would collide. Give one MCP client another prefix, e.g. mcpClient({ name: '${upstream.name}', prefix: '${upstream.name}_' }).`,
      );
    seen.set(upstream.prefix, upstream.name);
  }
}

/** One page of a listing across upstreams: the cursor names the upstream and its own cursor. */
async function listAcross<T>(
  upstreams: readonly McpUpstream[],
  cursor: string | undefined,
  page: (
    upstream: McpUpstream,
    cursor: string | undefined,
  ) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<{ items: T[]; nextCursor?: string }> {
  let index = 0;
  let inner: string | undefined;
  if (cursor !== undefined) {
    try {
      const parsed = JSON.parse(atob(cursor)) as unknown;
      if (!Array.isArray(parsed) || !Number.isInteger(parsed[0])) throw new Error('bad cursor');
      index = parsed[0] as number;
      inner = typeof parsed[1] === 'string' ? parsed[1] : undefined;
    } catch {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor');
    }
  }
  for (; index < upstreams.length; index++, inner = undefined) {
    let result;
    try {
      result = await page(upstreams[index]!, inner);
    } catch {
      // One upstream down must not hide the others' lists.
      continue;
    }
    const next =
      result.nextCursor !== undefined
        ? btoa(JSON.stringify([index, result.nextCursor]))
        : index + 1 < upstreams.length
          ? btoa(JSON.stringify([index + 1]))
          : undefined;
    if (result.items.length > 0 || next === undefined)
      return next === undefined ? { items: result.items } : { items: result.items, nextCursor: next };
  }
  return { items: [] };
}

/** The upstream a prefixed URI or name belongs to: the longest prefix that matches. */
export function owner(upstreams: readonly McpUpstream[], local: string, what: string): McpUpstream {
  let best: McpUpstream | undefined;
  for (const upstream of upstreams) {
    if (
      local.startsWith(upstream.prefix) &&
      (best === undefined || upstream.prefix.length > best.prefix.length)
    )
      best = upstream;
  }
  if (best === undefined)
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown ${what}: no upstream serves it`);
  return best;
}

/** Throws a refusal the client reads unless the chain's permission checker allows `capability` on `target`. */
export async function govern(
  setup: ProxySetup,
  extra: McpRequestExtra,
  capability: 'resource_read' | 'prompt_get',
  target: string,
  upstream: McpUpstream,
  what = capability === 'resource_read' ? `reading '${target}'` : `the prompt '${target}'`,
): Promise<void> {
  let identity: Identity | undefined;
  let consulted: { checker: unknown; deadlineMs: number } | undefined;
  try {
    identity = await setup.identify(extra);
    const chain = isChain(setup.chain) ? setup.chain : setup.chain(identity);
    consulted = permissionCheckerOf(chain);
  } catch {
    throw new ProtocolError(
      REFUSED,
      `[permission refused: ${refusalReason(`${what} could not be authorized: the caller could not be identified`, 'Retrying will not help', 'Reconnect with valid credentials')}]`,
    );
  }
  const checker = consulted?.checker as import('@toolgate/core').PermissionChecker | undefined;
  if (checker === undefined) return;
  let decision: unknown;
  try {
    decision = await withDeadline(
      (signal) =>
        checker.check({
          capability,
          target,
          toolSource: upstream.name,
          ...(identity !== undefined ? { identity } : {}),
          args: {},
          signal,
        }),
      consulted?.deadlineMs ?? DEFAULT_DEADLINE_MS,
      extra.mcpReq.signal,
    );
  } catch (error) {
    throw new ProtocolError(
      REFUSED,
      `[permission refused: ${refusalReason(
        `${what} could not be authorized because the permission check ${error instanceof DeadlineError ? 'timed out' : 'failed'}`,
        'Retrying later may help',
      )}]`,
    );
  }
  const answer = decision as { allow?: unknown; reason?: unknown } | null;
  if (answer?.allow === true) return;
  const reason =
    answer?.allow === false && typeof answer.reason === 'string' && answer.reason.trim() !== ''
      ? answer.reason.trim().slice(0, 300)
      : 'the permission check answered nonsense';
  throw new ProtocolError(
    REFUSED,
    `[permission refused: ${refusalReason(`${what} is not permitted: ${reason}`, 'This will not change during this run; do not ask again')}]`,
  );
}

/** Registers resources/*, prompts/* and completion/complete handlers on `server`. */
export function serveProxied(server: Server, setup: ProxySetup): void {
  const upstreamsOf = (extra: McpRequestExtra) =>
    typeof setup.upstreams === 'function' ? setup.upstreams(extra) : setup.upstreams;
  server.setRequestHandler('resources/list', async (request, extra) => {
    const { items, nextCursor } = await listAcross(
      await upstreamsOf(extra),
      request.params?.cursor,
      async (upstream, cursor) => {
        const result = await upstream.listResources(cursor);
        return { items: result.resources, nextCursor: result.nextCursor };
      },
    );
    return nextCursor === undefined ? { resources: items } : { resources: items, nextCursor };
  });
  server.setRequestHandler('resources/templates/list', async (request, extra) => {
    const { items, nextCursor } = await listAcross(
      await upstreamsOf(extra),
      request.params?.cursor,
      async (upstream, cursor) => {
        const result = await upstream.listResourceTemplates(cursor);
        return { items: result.resourceTemplates, nextCursor: result.nextCursor };
      },
    );
    return nextCursor === undefined ? { resourceTemplates: items } : { resourceTemplates: items, nextCursor };
  });
  server.setRequestHandler('resources/read', async (request, extra) => {
    const { uri } = request.params;
    const upstream = owner(await upstreamsOf(extra), uri, 'resource');
    await govern(setup, extra, 'resource_read', uri, upstream);
    return relayed(setup, extra, { method: 'resources/read', target: uri, args: {} }, upstream, (relay) =>
      upstream.readResource(uri, extra.mcpReq.signal, relay),
    );
  });
  server.setRequestHandler('prompts/list', async (request, extra) => {
    const { items, nextCursor } = await listAcross(
      await upstreamsOf(extra),
      request.params?.cursor,
      async (upstream, cursor) => {
        const result = await upstream.listPrompts(cursor);
        return { items: result.prompts, nextCursor: result.nextCursor };
      },
    );
    return nextCursor === undefined ? { prompts: items } : { prompts: items, nextCursor };
  });
  server.setRequestHandler('prompts/get', async (request, extra) => {
    const { name, arguments: args } = request.params;
    const upstream = owner(await upstreamsOf(extra), name, 'prompt');
    await govern(setup, extra, 'prompt_get', name, upstream);
    return relayed(
      setup,
      extra,
      { method: 'prompts/get', target: name, args: args ?? {} },
      upstream,
      (relay) => upstream.getPrompt(name, args, extra.mcpReq.signal, relay),
    );
  });
  // Completing an argument tells what values exist, so it is governed as reading the prompt or resource.
  server.setRequestHandler('completion/complete', async (request, extra) => {
    const { ref } = request.params;
    const prompt = ref.type === 'ref/prompt';
    const target = prompt ? ref.name : ref.uri;
    const upstream = owner(await upstreamsOf(extra), target, prompt ? 'prompt' : 'resource');
    await govern(
      setup,
      extra,
      prompt ? 'prompt_get' : 'resource_read',
      target,
      upstream,
      `completing an argument of '${target}'`,
    );
    if (upstream.complete === undefined) return { completion: { values: [] } };
    return upstream.complete(request.params, extra.mcpReq.signal);
  });
  const { watch } = setup;
  if (watch === undefined) return;
  server.setRequestHandler('resources/subscribe', async (request, extra) => {
    const { uri } = request.params;
    const upstream = owner(await upstreamsOf(extra), uri, 'resource');
    await govern(setup, extra, 'resource_read', uri, upstream, `watching '${uri}'`);
    await watch.add(server, upstream, uri, extra.mcpReq.signal);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request, extra) => {
    const { uri } = request.params;
    watch.remove(server, owner(await upstreamsOf(extra), uri, 'resource'), uri);
    return {};
  });
}
