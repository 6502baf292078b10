// The Tool contract and its definition-time checks. A declaration the library cannot honor
// fails here, naming the tool and the fix, never at the first call.

import type { Static, TSchema } from 'typebox';
import type { CheckInComponent } from './check-in';
import type { ToolMiddlewareContext } from './middleware-context';
import type { CredentialNeed } from './ports';

/** A JSON Schema object as the model sees it. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** What the model sees of a tool. Never carries `needs` or anything secret. */
export interface ToolSchema {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

/**
 * What a tool says about its own behaviour, as MCP's `ToolAnnotations` do: hints, never guarantees.
 * Policy reads them as `tool.annotations`; an MCP client copies them from the server.
 */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
  readonly [hint: string]: unknown;
}

export interface ResultCeiling {
  readonly maxChars: number;
  /** Decoded bytes of binary content blocks (images, audio, blobs) an MCP result may carry. */
  readonly maxBytes?: number;
  /** Argument names the model can use to ask for less. */
  readonly narrowBy?: readonly string[];
}

// Method syntax keeps these bivariant, so a `Tool<{ id: string }>` is still a `Tool`.
type CheckInPredicate<TArgs> = {
  bivariant(args: Readonly<TArgs>, ctx: ToolMiddlewareContext): boolean | Promise<boolean>;
}['bivariant'];

export type ToolArgs = Record<string, unknown>;

/** One executable tool. A plain, spreadable object. */
export interface Tool<TArgs = ToolArgs, TResult = unknown> {
  readonly schema: ToolSchema;
  execute(args: TArgs, ctx: ToolMiddlewareContext<TArgs>): TResult | Promise<TResult>;
  /** What the tool touches, declared by its author: snake_case, open set. */
  readonly capabilities?: readonly string[];
  readonly checkIn?: 'always' | CheckInPredicate<TArgs>;
  readonly checkInComponent?: CheckInComponent;
  readonly needs?: CredentialNeed;
  readonly resultCeiling?: ResultCeiling;
  /** Behaviour hints (`readOnlyHint`, `destructiveHint`, …), declared by the author or copied from MCP. */
  readonly annotations?: ToolAnnotations;
  /** The MCP server the tool came from; absent for our own tools. Set only by MCP clients. */
  readonly source?: string;
  /** `{ argName: artifactKind }`: the model passes an `art_…` ref, the wants gate swaps in the data. */
  readonly wants?: Readonly<Record<string, string>>;
  /** Arguments that carry a URL or host the tool will reach (`'url'`, `'hooks.*'`): the egress guard judges them. */
  readonly egress?: readonly string[];
  /** `{ argPath: [root, …] }`: arguments that are file paths, and the absolute roots they must stay under. */
  readonly paths?: Readonly<Record<string, readonly string[]>>;
}

/** The args type a schema describes: `Static` for TypeBox, a plain record for JSON Schema. */
export type ArgsOf<S> = S extends TSchema ? Static<S> & ToolArgs : ToolArgs;

export interface ToolDefinition<S, TResult> {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: S;
  execute(args: ArgsOf<S>, ctx: ToolMiddlewareContext<ArgsOf<S>>): TResult | Promise<TResult>;
  readonly capabilities?: readonly string[];
  readonly checkIn?: 'always' | CheckInPredicate<ArgsOf<S>>;
  readonly checkInComponent?: CheckInComponent;
  readonly needs?: CredentialNeed;
  readonly resultCeiling?: ResultCeiling;
  readonly annotations?: ToolAnnotations;
  readonly wants?: Readonly<Record<string, string>>;
  readonly egress?: readonly string[];
  readonly paths?: Readonly<Record<string, readonly string[]>>;
  /** Refused: only MCP clients stamp a source. */
  readonly source?: never;
}

/** Thrown when a tool declaration cannot be honored. `code` is stable for programs. */
export class ToolDefinitionError extends Error {
  override readonly name = 'ToolDefinitionError';
  readonly code = 'ERR_TOOL_DEFINITION';
  constructor(
    readonly toolName: string,
    message: string,
  ) {
    super(message);
  }
}

export const TOOL_NAME_PATTERN: RegExp = /^[A-Za-z0-9_-]{1,64}$/;
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** The built-in capability names; the set is open. */
export const CAPABILITIES: readonly string[] = [
  'memory_read',
  'memory_write',
  'external_net',
  'user_data',
  'filesystem',
  'payments',
  'code_exec',
];

function describeShape(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Every definition-time check, on any tool: defined, hand-built or imported over MCP.
 * `allowSource` is for tools that arrive already stamped by an MCP client.
 */
export function assertTool(tool: unknown, options: { allowSource?: boolean } = {}): asserts tool is Tool {
  if (!isRecord(tool))
    throw new ToolDefinitionError('?', `assertTool: a tool must be an object; got ${describeShape(tool)}.`);
  const schema = tool['schema'];
  const rawName = isRecord(schema) ? schema['name'] : undefined;
  const label = typeof rawName === 'string' ? rawName.slice(0, 64) : '?';
  const fail = (problem: string): never => {
    throw new ToolDefinitionError(label, `tool '${label}': ${problem}`);
  };
  if (!isRecord(schema))
    fail(`'schema' must be an object with name, description and inputSchema; got ${describeShape(schema)}.`);
  checkName(rawName, fail);
  const fields = schema as Record<string, unknown>;
  if (typeof fields['description'] !== 'string')
    fail(`'description' must be a string; got ${describeShape(fields['description'])}.`);
  const inputSchema = fields['inputSchema'];
  if (!isRecord(inputSchema))
    fail(`'inputSchema' must be a JSON Schema object; got ${describeShape(inputSchema)}.`);
  if (typeof tool['execute'] !== 'function')
    fail(`'execute' must be a function; got ${describeShape(tool['execute'])}.`);
  checkCapabilities(tool['capabilities'], fail);
  checkCheckIn(tool['checkIn'], tool['checkInComponent'], fail);
  checkNeeds(tool['needs'], fail);
  checkCeiling(tool['resultCeiling'], fail);
  checkAnnotations(tool['annotations'], fail);
  checkWants(tool['wants'], inputSchema as Record<string, unknown>, fail);
  checkEgress(tool['egress'], inputSchema as Record<string, unknown>, fail);
  checkPaths(tool['paths'], inputSchema as Record<string, unknown>, fail);
  if ('source' in tool && tool['source'] !== undefined) {
    if (!options.allowSource) {
      fail(
        `'source' is set by MCP clients only; remove it. Tools you define are your own and carry no source.`,
      );
    }
    if (typeof tool['source'] !== 'string' || tool['source'] === '')
      fail(`'source' must be a non-empty string.`);
  }
}

function checkName(name: unknown, fail: (problem: string) => never): void {
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    fail(
      `the name must match ${TOOL_NAME_PATTERN.source} (1-64 letters, digits, '_' or '-'); got ${typeof name === 'string' ? `${name.length} characters` : describeShape(name)}. Rename the tool.`,
    );
  }
}

function checkCapabilities(capabilities: unknown, fail: (problem: string) => never): void {
  if (capabilities === undefined) return;
  if (!Array.isArray(capabilities))
    fail(`'capabilities' must be an array of snake_case names; got ${describeShape(capabilities)}.`);
  const seen = new Set<string>();
  for (const capability of capabilities as unknown[]) {
    if (typeof capability !== 'string' || !SNAKE_CASE.test(capability)) {
      fail(
        `capability ${typeof capability === 'string' ? `'${capability}'` : describeShape(capability)} is not snake_case. Use names like 'external_net'.`,
      );
    }
    if (seen.has(capability as string))
      fail(`capability '${String(capability)}' is listed twice. List each capability once.`);
    seen.add(capability as string);
  }
}

function checkCheckIn(checkIn: unknown, component: unknown, fail: (problem: string) => never): void {
  if (checkIn !== undefined && checkIn !== 'always' && typeof checkIn !== 'function') {
    fail(`'checkIn' must be 'always' or a function (args, ctx) => boolean; got ${describeShape(checkIn)}.`);
  }
  if (component === undefined) return;
  if (checkIn === undefined)
    fail(`'checkInComponent' is declared without 'checkIn'. Declare 'checkIn' too, or remove the component.`);
  if (!isRecord(component) || typeof component['id'] !== 'string' || component['id'] === '') {
    fail(`'checkInComponent' must be { id, props?, propsRef? } with a non-empty 'id'.`);
  }
  const fields = component as Record<string, unknown>;
  if (fields['props'] !== undefined && !isRecord(fields['props']))
    fail(`'checkInComponent.props' must be an object.`);
  if (fields['propsRef'] !== undefined && typeof fields['propsRef'] !== 'string')
    fail(`'checkInComponent.propsRef' must be an artifact ref string.`);
}

function checkNeeds(needs: unknown, fail: (problem: string) => never): void {
  if (needs === undefined) return;
  if (!isRecord(needs)) fail(`'needs' must be { kind, service, scopes? }; got ${describeShape(needs)}.`);
  const fields = needs as Record<string, unknown>;
  for (const field of ['kind', 'service'] as const) {
    const value = fields[field];
    if (typeof value !== 'string' || value.trim() === '')
      fail(`'needs.${field}' must be a non-empty string, e.g. kind 'api_key', service 'billing'.`);
  }
  const scopes = fields['scopes'];
  if (scopes !== undefined && (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string'))) {
    fail(`'needs.scopes' must be an array of strings.`);
  }
}

function checkCeiling(ceiling: unknown, fail: (problem: string) => never): void {
  if (ceiling === undefined) return;
  if (!isRecord(ceiling))
    fail(`'resultCeiling' must be { maxChars, maxBytes?, narrowBy? }; got ${describeShape(ceiling)}.`);
  const { maxChars, maxBytes, narrowBy } = ceiling as Record<string, unknown>;
  if (typeof maxChars !== 'number' || !Number.isInteger(maxChars) || maxChars <= 0) {
    fail(
      `'resultCeiling.maxChars' must be a positive integer; got ${typeof maxChars === 'number' ? String(maxChars) : describeShape(maxChars)}.`,
    );
  }
  if (
    maxBytes !== undefined &&
    (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes <= 0)
  ) {
    fail(
      `'resultCeiling.maxBytes' must be a positive integer; got ${typeof maxBytes === 'number' ? String(maxBytes) : describeShape(maxBytes)}.`,
    );
  }
  if (narrowBy === undefined) return;
  if (!Array.isArray(narrowBy) || narrowBy.length === 0) {
    fail(
      `'resultCeiling.narrowBy' must list at least one argument name; omit it if the model cannot narrow the result.`,
    );
  }
  for (const arg of narrowBy as unknown[]) {
    if (typeof arg !== 'string' || arg.trim() === '')
      fail(`'resultCeiling.narrowBy' has a blank entry; name the arguments that narrow the result.`);
  }
}

const BOOLEAN_HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

function checkAnnotations(annotations: unknown, fail: (problem: string) => never): void {
  if (annotations === undefined) return;
  if (!isRecord(annotations))
    fail(
      `'annotations' must be an object of hints like { readOnlyHint: true }; got ${describeShape(annotations)}.`,
    );
  const fields = annotations as Record<string, unknown>;
  for (const hint of BOOLEAN_HINTS) {
    if (fields[hint] !== undefined && typeof fields[hint] !== 'boolean')
      fail(`'annotations.${hint}' must be true or false; got ${describeShape(fields[hint])}.`);
  }
  if (fields['title'] !== undefined && typeof fields['title'] !== 'string')
    fail(`'annotations.title' must be a string; got ${describeShape(fields['title'])}.`);
}

function checkWants(
  wants: unknown,
  inputSchema: Record<string, unknown>,
  fail: (problem: string) => never,
): void {
  if (wants === undefined) return;
  if (!isRecord(wants))
    fail(`'wants' must map argument names to artifact kinds; got ${describeShape(wants)}.`);
  const properties = isRecord(inputSchema['properties']) ? inputSchema['properties'] : {};
  for (const [arg, kind] of Object.entries(wants as Record<string, unknown>)) {
    if (typeof kind !== 'string' || kind.trim() === '')
      fail(`'wants.${arg}' must name an artifact kind, e.g. 'dataset/rows'.`);
    const property = properties[arg];
    if (!isRecord(property))
      fail(
        `'wants.${arg}' names an argument absent from the input schema. Add '${arg}' as a string property.`,
      );
    if ((property as Record<string, unknown>)['type'] !== 'string') {
      fail(`'wants.${arg}' needs '${arg}' to be declared type: 'string' (the model passes an art_… ref).`);
    }
  }
}

/** An argument path: names joined by '.', '*' for every item of an array or value of an object. */
const ARG_PATH = /^[^.*]+(\.([^.*]+|\*))*$/;

function checkArgPath(
  field: string,
  path: unknown,
  inputSchema: Record<string, unknown>,
  fail: (problem: string) => never,
): void {
  if (typeof path !== 'string' || !ARG_PATH.test(path))
    fail(
      `'${field}' entries must be argument paths like 'url' or 'targets.*.url'; got ${typeof path === 'string' ? JSON.stringify(path.slice(0, 64)) : describeShape(path)}.`,
    );
  const properties = isRecord(inputSchema['properties']) ? inputSchema['properties'] : {};
  const top = (path as string).split('.')[0]!;
  if (!isRecord(properties[top]))
    fail(`'${field}' names '${top}', which is absent from the input schema. Add '${top}' as a property.`);
}

function checkEgress(
  egress: unknown,
  inputSchema: Record<string, unknown>,
  fail: (problem: string) => never,
): void {
  if (egress === undefined) return;
  if (!Array.isArray(egress))
    fail(
      `'egress' must list the arguments that carry a URL or host, e.g. ['url']; got ${describeShape(egress)}.`,
    );
  for (const path of egress as unknown[]) checkArgPath('egress', path, inputSchema, fail);
}

/** An absolute root: POSIX '/…' or a Windows drive 'C:\…', with no '..' segment and no NUL. */
const ABSOLUTE_ROOT = /^(?:\/|[A-Za-z]:[\\/])/;

function checkPaths(
  paths: unknown,
  inputSchema: Record<string, unknown>,
  fail: (problem: string) => never,
): void {
  if (paths === undefined) return;
  if (!isRecord(paths))
    fail(
      `'paths' must map argument paths to the roots they must stay under, e.g. { path: ['/srv/data'] }; got ${describeShape(paths)}.`,
    );
  for (const [path, roots] of Object.entries(paths as Record<string, unknown>)) {
    checkArgPath('paths', path, inputSchema, fail);
    if (!Array.isArray(roots) || roots.length === 0)
      fail(`'paths.${path}' must list at least one root directory, e.g. ['/srv/data'].`);
    for (const root of roots as unknown[]) {
      if (
        typeof root !== 'string' ||
        !ABSOLUTE_ROOT.test(root) ||
        root.includes('\0') ||
        root.split(/[\\/]/).includes('..')
      )
        fail(`'paths.${path}' roots must be absolute directories without '..', like '/srv/data'.`);
    }
  }
}

/**
 * Builds a Tool from a flat definition. Takes a TypeBox schema (args typed by `Static`) or plain JSON Schema.
 *
 * @example
 * const search = defineTool({
 *   name: 'search',
 *   description: 'Search the docs',
 *   inputSchema: Type.Object({ query: Type.String() }),
 *   execute: async ({ query }) => index.find(query),
 * });
 */
export function defineTool<const S extends object, TResult = unknown>(
  definition: ToolDefinition<S, TResult>,
): Tool<ArgsOf<S>, TResult> {
  if (!isRecord(definition)) {
    throw new ToolDefinitionError(
      '?',
      `defineTool: expected { name, description, inputSchema, execute }; got ${describeShape(definition)}.`,
    );
  }
  const { name, description, inputSchema, execute, ...declarations } = definition as ToolDefinition<
    S,
    TResult
  > &
    Record<string, unknown>;
  const tool = { schema: { name, description, inputSchema }, execute, ...declarations } as unknown as Tool<
    ArgsOf<S>,
    TResult
  >;
  assertTool(tool);
  return tool;
}
