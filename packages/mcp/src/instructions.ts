// The instructions a served MCP server gives each caller: its own, then those of each upstream this
// caller is served, under the upstream's name and prefix. An upstream's text was screened when its
// client connected (mcpClient drops instructions that address the model).

import type {
  DiscoverResult,
  InitializeRequest,
  InitializeResult,
  Server,
} from '@modelcontextprotocol/server';
import type { McpUpstream } from './client';
import type { McpRequestExtra } from './serve';

/** `own`, then each upstream's instructions, in the order the upstreams are served. */
export function joinedInstructions(
  own: string | undefined,
  upstreams: readonly McpUpstream[],
): string | undefined {
  const parts = own !== undefined && own.trim() !== '' ? [own] : [];
  for (const upstream of upstreams) {
    const text = upstream.instructions?.()?.trim();
    if (text === undefined || text === '') continue;
    const prefixed =
      upstream.prefix === '' ? '' : ` (its tools, resources and prompts are prefixed '${upstream.prefix}')`;
    parts.push(`From MCP server '${upstream.name}'${prefixed}:\n${text}`);
  }
  return parts.length === 0 ? undefined : parts.join('\n\n');
}

// The SDK's server fixes its instructions when it is built; a server whose callers see different
// upstreams answers initialize and server/discover itself, with the SDK's own answer and this
// caller's instructions.
interface AnsweringServer {
  _oninitialize(request: InitializeRequest): Promise<InitializeResult>;
  _ondiscover(): DiscoverResult;
  readonly _requestHandlers: ReadonlyMap<string, unknown>;
  setRequestHandler(method: string, ...rest: unknown[]): void;
}
type Handler = (request: unknown, extra: McpRequestExtra) => unknown;

/** Answers initialize and server/discover on `server` with the instructions for each request's caller. */
export function instructionsPerCaller(
  server: Server,
  instructionsFor: (extra: McpRequestExtra) => Promise<string | undefined>,
): void {
  const inner = server as unknown as AnsweringServer;
  const withInstructions = async <T extends { instructions?: string | undefined }>(
    answer: T,
    extra: McpRequestExtra,
  ): Promise<T> => {
    const { instructions: _sdk, ...rest } = answer;
    const text = await instructionsFor(extra).catch(() => undefined);
    return (text === undefined ? rest : { ...rest, instructions: text }) as T;
  };
  const install = inner.setRequestHandler.bind(server);
  // The HTTP entry installs server/discover itself, on each server it serves 2026-07-28 with. Every
  // other registration passes through as made (with its schemas, for methods the SDK has none of).
  inner.setRequestHandler = (method, ...rest) => {
    const handler = rest[0] as Handler;
    if (method !== 'server/discover' || rest.length !== 1) return install(method, ...rest);
    return install(method, async (request: unknown, extra: McpRequestExtra) =>
      withInstructions((await handler(request, extra)) as DiscoverResult, extra),
    );
  };
  inner.setRequestHandler('initialize', async (request: unknown, extra: McpRequestExtra) =>
    withInstructions(await inner._oninitialize(request as InitializeRequest), extra),
  );
  // A server built serving 2026-07-28 installed it already, unwrapped.
  if (inner._requestHandlers.has('server/discover'))
    inner.setRequestHandler('server/discover', async () => inner._ondiscover());
}
