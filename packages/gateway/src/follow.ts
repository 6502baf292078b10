// What the gateway hears from its upstreams while a generation serves: a changed tool list (a
// list_changed, a reconnect, an accepted pin) rebuilds the tenants; resource and prompt list
// changes are passed on to every connected client.

import type { Runtime } from './runtime';

export interface UpstreamListeners {
  /** Some upstream's governed tools changed. */
  tools(): void;
  /** Some upstream's resources or prompts changed. */
  list(list: 'resources' | 'prompts'): void;
}

/** Listens to every upstream of `runtime`; answers a function that stops listening. */
export function followUpstreams(runtime: Runtime, on: UpstreamListeners): () => void {
  const stops: (() => void)[] = [];
  for (const upstream of runtime.upstreams.values()) {
    stops.push(upstream.onToolsChanged(() => on.tools()));
    stops.push(
      upstream.client.subscribe((event) => {
        if (event.type === 'mcp.list.changed' && event.list !== 'tools') on.list(event.list);
      }),
    );
  }
  return () => {
    for (const stop of stops) stop();
  };
}
