// A 2026-07-28 client watches resources with subscriptions/listen, which the SDK's HTTP entry answers
// from the served event bus with no hook of its own. Before a listen reaches it, each resource the
// listen names is governed as reading it, and the upstream serving it watches it while the stream is
// open; the upstream's updates go on the bus, and the SDK delivers each to the streams naming its URI.

import { ProtocolError, type AuthInfo, type ServerEventBus } from '@modelcontextprotocol/server';
import type { McpUpstream } from './client';
import { govern, owner, type ProxySetup, type ResourceWatch, type Watcher } from './proxied';
import type { McpRequestExtra } from './serve';

/** A listen refused before it is answered: a JSON-RPC error the client reads. */
export interface ListenRefusal {
  readonly code: number;
  readonly message: string;
}

/**
 * Governs one request before the SDK answers it: nothing to do (not a listen naming resources), a
 * refusal, or the release to call when its stream closes.
 */
export type ListenGate = (
  message: unknown,
  authInfo: AuthInfo | undefined,
) => Promise<ListenRefusal | (() => void) | undefined>;

// More URIs than this in one listen is not a client watching what it shows.
const MAX_LISTENED_RESOURCES = 100;

/** The listen gate over `setup`'s upstreams and chain, watching through `watch` for `bus`. */
export function listenGate(
  setup: ProxySetup & { readonly watch: ResourceWatch },
  bus: ServerEventBus,
): ListenGate {
  const { watch } = setup;
  // Streams open per watched resource: the upstream watches it while one is.
  const open = new Map<McpUpstream, Map<string, number>>();
  const onBus: Watcher = {
    sendResourceUpdated: async ({ uri }) => bus.publish({ kind: 'resource_updated', uri }),
  };
  const hold = async (upstream: McpUpstream, uri: string): Promise<void> => {
    await watch.add(onBus, upstream, uri);
    const counts = open.get(upstream) ?? new Map<string, number>();
    counts.set(uri, (counts.get(uri) ?? 0) + 1);
    open.set(upstream, counts);
  };
  const letGo = (upstream: McpUpstream, uri: string): void => {
    const counts = open.get(upstream);
    const left = (counts?.get(uri) ?? 1) - 1;
    if (left > 0) {
      counts!.set(uri, left);
      return;
    }
    counts?.delete(uri);
    watch.remove(onBus, upstream, uri);
  };
  return async (message, authInfo) => {
    const uris = resourceSubscriptionsOf(message);
    if (uris === undefined) return undefined;
    if (uris.length > MAX_LISTENED_RESOURCES)
      return { code: -32602, message: `A listen may name at most ${MAX_LISTENED_RESOURCES} resources` };
    // A listen has no request context before the SDK takes it: the caller is who its credentials say.
    const extra = {
      ...(authInfo !== undefined ? { http: { authInfo } } : {}),
      mcpReq: { signal: new AbortController().signal },
    } as unknown as McpRequestExtra;
    const held: (readonly [McpUpstream, string])[] = [];
    const release = () => {
      for (const [upstream, uri] of held.splice(0)) letGo(upstream, uri);
    };
    try {
      const upstreams =
        typeof setup.upstreams === 'function' ? await setup.upstreams(extra) : setup.upstreams;
      for (const uri of new Set(uris)) {
        const upstream = owner(upstreams, uri, 'resource');
        await govern(setup, extra, 'resource_read', uri, upstream, `watching '${uri.slice(0, 200)}'`);
        await hold(upstream, uri);
        held.push([upstream, uri]);
      }
    } catch (error) {
      release();
      return error instanceof ProtocolError
        ? { code: error.code, message: error.message }
        : { code: -32603, message: 'The resources could not be watched' };
    }
    return release;
  };
}

/** The resource URIs a `subscriptions/listen` request asks to watch; undefined for anything else. */
function resourceSubscriptionsOf(message: unknown): readonly string[] | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (method !== 'subscriptions/listen') return undefined;
  const uris = (params as { notifications?: { resourceSubscriptions?: unknown } } | undefined)?.notifications
    ?.resourceSubscriptions;
  // A malformed filter is the SDK's to refuse.
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((uri) => typeof uri === 'string'))
    return undefined;
  return uris as string[];
}
