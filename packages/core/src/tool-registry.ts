// What a dispatcher checks and keeps at build: its tools, each checked and frozen, and which chains
// have been checked against them. Config that lies fails here, naming the tool.

import type { Chain } from './chain';
import { argsStandIn } from './context';
import { assertTool, type Tool, type ToolSchema } from './tool';

/** Configuration the dispatcher cannot honor. Names the tool and the fix. */
export class DispatcherConfigError extends Error {
  override readonly name = 'DispatcherConfigError';
  readonly code = 'ERR_DISPATCHER_CONFIG';
}

export interface ToolRegistry {
  readonly tools: ReadonlyMap<string, Tool>;
  readonly knownNames: readonly string[];
  readonly schemas: readonly ToolSchema[];
}

// Tools some dispatcher already checked and froze: their declarations cannot have changed since, so a
// dispatcher built per request over the same tools does not check them again.
const checkedTools = new WeakSet<object>();

// Per checked tool, a stand-in for its args that keeps their hidden class alive (see argsStandIn).
const argsStandIns = new WeakMap<object, object>();

/** Checks every tool (assertTool, unique names) and freezes its declarations. */
export function registerTools(list: readonly unknown[]): ToolRegistry {
  const tools = new Map<string, Tool>();
  for (const candidate of list) {
    const tool = checkedTool(candidate);
    const existing = tools.get(tool.schema.name);
    if (existing !== undefined) {
      const from = (t: Tool) => (t.source === undefined ? 'our own tools' : `MCP server '${t.source}'`);
      throw new DispatcherConfigError(
        `createDispatcher: two tools are named '${tool.schema.name}' (from ${from(existing)} and ${from(tool)}). Rename one, or give the MCP client a prefix${tool.source === undefined ? '' : `, e.g. mcpClient({ name: '${tool.source}', prefix: '${tool.source}_' })`}.`,
      );
    }
    tools.set(tool.schema.name, tool);
  }
  const schemas: ToolSchema[] = [...tools.values()].map((t) => ({
    name: t.schema.name,
    description: t.schema.description,
    inputSchema: t.schema.inputSchema,
  }));
  return { tools, knownNames: [...tools.keys()], schemas };
}

/** Declarations only a middleware can enforce, and what to add when none in the chain does. */
const ENFORCED_DECLARATIONS = [
  ['egress', 'the egress guard'],
  ['paths', 'the path guard'],
] as const;

function unenforced(chain: Chain, tool: Tool): string | undefined {
  for (const [declaration, guard] of ENFORCED_DECLARATIONS) {
    const declared = tool[declaration];
    const some = Array.isArray(declared)
      ? declared.length > 0
      : declared !== undefined && Object.keys(declared).length > 0;
    if (some && !chain.middleware.some((m) => Array.isArray(m.honors) && m.honors.includes(declaration)))
      return `tool '${tool.schema.name}' declares '${declaration}', but no middleware in the chain enforces it; add ${guard} (canonicalChain({ guards: {} }) in @toolgate/middleware)`;
  }
  return undefined;
}

/** The first reason `chain` cannot serve one of `tools`, or undefined. */
export function chainProblem(chain: Chain, tools: Iterable<Tool>): string | undefined {
  for (const tool of tools) {
    const missing = unenforced(chain, tool);
    if (missing !== undefined) return missing;
    for (const middleware of chain.middleware) {
      let problem: string | undefined;
      try {
        problem = middleware.checkTool?.(tool, chain);
      } catch (error) {
        problem = `its checkTool threw ${error instanceof Error ? error.name : typeof error}`;
      }
      if (problem !== undefined)
        return `tool '${tool.schema.name}' cannot be served by gate '${middleware.name}': ${problem}`;
    }
  }
  return undefined;
}

function checkedTool(candidate: unknown): Tool {
  if (typeof candidate === 'object' && candidate !== null && checkedTools.has(candidate))
    return candidate as Tool;
  assertTool(candidate, { allowSource: true });
  const tool = frozenDeclarations(candidate);
  checkedTools.add(tool);
  let standIn: object | undefined;
  try {
    standIn = argsStandIn(tool.schema.inputSchema);
  } catch {
    // Only a speed-up: a schema whose properties cannot be read gets no stand-in.
  }
  if (standIn !== undefined) argsStandIns.set(tool, standIn);
  return tool;
}

/**
 * `ctx.tool` is read-only: the declarations the gates read (checkIn, needs, wants, …) cannot be changed by a
 * middleware or a tool mid-call, which would otherwise outlive the call. Frozen in place, so the tool keeps
 * its identity (and its plans); its inputSchema stays the caller's object.
 */
function frozenDeclarations(tool: Tool): Tool {
  const { schema, capabilities, needs, resultCeiling, wants, checkInComponent, annotations, egress, paths } =
    tool;
  for (const part of [
    schema,
    annotations,
    capabilities,
    needs,
    needs?.scopes,
    resultCeiling,
    resultCeiling?.narrowBy,
    wants,
    checkInComponent,
    checkInComponent?.props,
    egress,
    paths,
    ...Object.values(paths ?? {}),
  ]) {
    if (typeof part === 'object' && part !== null) Object.freeze(part);
  }
  return Object.freeze(tool);
}
