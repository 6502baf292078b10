// How one tool a server lists becomes one toolgate Tool's declarations: what is kept for tools/list,
// what is refused (invisible characters), how its schema is closed, and which declarations the
// operator adds by name (`declare`) or by the tool's own hints (`fromAnnotations`).

import { createHash } from 'node:crypto';
import type { Tool as McpTool } from '@modelcontextprotocol/server';
import type { CredentialNeed, JsonSchema, ResultCeiling, Tool, ToolAnnotations } from '@toolgate/core';
import { screenDescriptions } from '@toolgate/middleware';

/** What the operator declares for an imported tool: the declarations a tool of our own would carry. */
export interface ImportDeclaration {
  readonly checkIn?: Tool['checkIn'];
  readonly capabilities?: readonly string[];
  readonly resultCeiling?: ResultCeiling;
  readonly needs?: CredentialNeed;
}

/** The hints MCP defines; a hint the server leaves out takes the specification's default. */
export type AnnotationHint = 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint';

// MCP's defaults: a tool that says nothing may write, destroy, repeat differently and reach the world.
const HINT_DEFAULTS: Record<AnnotationHint, boolean> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

/** Whether `hint` holds for a tool, as MCP reads its annotations (destructive only when not read-only). */
export function hintHolds(annotations: ToolAnnotations | undefined, hint: AnnotationHint): boolean {
  const value = annotations?.[hint];
  if (typeof value === 'boolean') return hint === 'destructiveHint' ? value && !readOnly(annotations) : value;
  if (hint === 'destructiveHint' && readOnly(annotations)) return false;
  return HINT_DEFAULTS[hint];
}

const readOnly = (annotations: ToolAnnotations | undefined) => annotations?.readOnlyHint === true;

/** Merges declarations: capabilities add up, 'always' wins over a predicate, a later ceiling or need wins. */
export function mergeDeclarations(list: readonly (ImportDeclaration | undefined)[]): ImportDeclaration {
  let capabilities: string[] | undefined;
  let merged: { -readonly [K in keyof ImportDeclaration]?: ImportDeclaration[K] } = {};
  for (const declaration of list) {
    if (declaration === undefined) continue;
    if (declaration.capabilities !== undefined)
      capabilities = [...new Set([...(capabilities ?? []), ...declaration.capabilities])];
    if (declaration.checkIn !== undefined && merged.checkIn !== 'always')
      merged.checkIn = declaration.checkIn;
    if (declaration.resultCeiling !== undefined) merged.resultCeiling = declaration.resultCeiling;
    if (declaration.needs !== undefined) merged.needs = declaration.needs;
  }
  if (capabilities !== undefined) merged = { ...merged, capabilities };
  return merged;
}

// Zero-width and invisible formatting characters, bidirectional controls, and Unicode tag characters:
// text a person reviewing a tool cannot see, and a model still reads.
// Code points, not UTF-16 units (the `u` flag), so a tag character matches whole.
const INVISIBLE = new RegExp(
  // Combining marks stand outside the class: inside it they would read as joined to their neighbour.
  '\\u034F|\\u17B4|\\u17B5|[\\u00AD\\u061C\\u115F\\u1160\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u3164\\uFEFF\\uFFA0\\uFFF0-\\uFFF8\\u{E0000}-\\u{E007F}]',
  'gu',
);

/** The invisible characters in `text`, escaped, e.g. `\u{202E}` (bounded, for a reason). */
export function invisibleIn(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(INVISIBLE)) {
    found.add(escapeChar(match[0]));
    if (found.size >= 5) break;
  }
  return [...found];
}

const escapeChar = (char: string) =>
  `\\u{${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}}`;

/** `text` with each invisible character written out as its escape, so a person sees it. */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, escapeChar);
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Keywords whose meaning depends on keys `additionalProperties: false` cannot see, so closing such an
// object would refuse arguments the server accepts.
const COMPOSED = ['allOf', 'anyOf', 'oneOf', '$ref', 'unevaluatedProperties', 'if', 'dependentSchemas'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'prefixItems'];
const SCHEMAS = ['items', 'additionalItems', 'contains', 'not', 'then', 'else', 'propertyNames'];

/**
 * A copy of `schema` where every object schema with `properties` and no `additionalProperties` gets
 * `additionalProperties: false`, so an argument the server never declared cannot reach it. Objects
 * built by composition are left open, and so are the branches of an `allOf`.
 */
export function closedSchema(schema: JsonSchema): JsonSchema {
  return close(schema, true) as JsonSchema;
}

function close(node: unknown, closable: boolean): unknown {
  if (!isRecord(node)) return node;
  const copy: Record<string, unknown> = { ...node };
  for (const key of SCHEMA_MAPS) {
    const map = node[key];
    if (isRecord(map))
      copy[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, close(sub, true)]));
  }
  for (const key of SCHEMA_LISTS) {
    if (Array.isArray(node[key])) copy[key] = (node[key] as unknown[]).map((sub) => close(sub, true));
  }
  if (Array.isArray(node['allOf']))
    copy['allOf'] = (node['allOf'] as unknown[]).map((sub) => close(sub, false));
  for (const key of SCHEMAS) {
    if (key in node)
      copy[key] = Array.isArray(node[key])
        ? (node[key] as unknown[]).map((s) => close(s, true))
        : close(node[key], true);
  }
  if (isRecord(node['additionalProperties']))
    copy['additionalProperties'] = close(node['additionalProperties'], true);
  if (
    closable &&
    isRecord(node['properties']) &&
    !('additionalProperties' in node) &&
    !COMPOSED.some((keyword) => keyword in node)
  )
    copy['additionalProperties'] = false;
  return copy;
}

// `_meta` keys that may carry something secret are not passed on to downstream clients.
const SECRET_KEY = /token|secret|passw|credential|auth|key|cookie|session/i;

/** What tools/list shows of an imported tool beyond name, description and input schema. */
export interface ListedExtras {
  readonly title?: string;
  readonly outputSchema?: McpTool['outputSchema'];
  readonly annotations?: McpTool['annotations'];
  readonly execution?: unknown;
  readonly icons?: readonly unknown[];
  readonly _meta?: Record<string, unknown>;
}

/** The extras of `remote` worth listing downstream: everything but secret-looking `_meta` keys. */
export function listedExtras(remote: McpTool, shown: (text: string) => string): ListedExtras {
  const extras: { -readonly [K in keyof ListedExtras]?: ListedExtras[K] } = {};
  if (typeof remote.title === 'string') extras.title = shown(remote.title);
  if (isRecord(remote.outputSchema)) extras.outputSchema = remote.outputSchema;
  if (isRecord(remote.annotations)) {
    const { title } = remote.annotations;
    extras.annotations =
      typeof title === 'string' ? { ...remote.annotations, title: shown(title) } : remote.annotations;
  }
  const execution = (remote as Record<string, unknown>)['execution'];
  if (isRecord(execution)) extras.execution = execution;
  const icons = (remote as Record<string, unknown>)['icons'];
  if (Array.isArray(icons)) extras.icons = icons.filter(isRecord);
  if (isRecord(remote._meta)) {
    const kept = Object.entries(remote._meta).filter(([key]) => !SECRET_KEY.test(key));
    if (kept.length > 0) extras._meta = Object.fromEntries(kept);
  }
  return extras;
}

/**
 * What a tool's pin covers: the whole definition a client sees, so nothing that tells the model, a
 * person or a host what the tool does (a UI template in `_meta`, how it runs in `execution`, its
 * icons) can change without review.
 */
export function pinnedDefinition(remote: McpTool): Record<string, unknown> {
  const whole = remote as Record<string, unknown>;
  const also = (key: string) => (whole[key] !== undefined ? { [key]: whole[key] } : {});
  // A `_meta` value under a secret-sounding key is pinned by its digest: a change is still seen,
  // and the pin store never holds the value.
  const meta = isRecord(remote._meta)
    ? {
        _meta: Object.fromEntries(
          Object.entries(remote._meta).map(([key, value]) => [
            key,
            SECRET_KEY.test(key)
              ? `sha256:${createHash('sha256')
                  .update(JSON.stringify(value) ?? '')
                  .digest('hex')}`
              : value,
          ]),
        ),
      }
    : also('_meta');
  return {
    name: remote.name,
    ...(remote.title !== undefined ? { title: remote.title } : {}),
    description: remote.description ?? '',
    inputSchema: remote.inputSchema,
    ...(remote.outputSchema !== undefined ? { outputSchema: remote.outputSchema } : {}),
    ...(remote.annotations !== undefined ? { annotations: remote.annotations } : {}),
    ...meta,
    ...also('execution'),
    ...also('icons'),
  };
}

/**
 * The tools of one listing whose descriptions address the model (alone, or read together with the
 * server's other tools), by remote name, with why: they are not listed.
 */
export function poisonedDescriptions(remotes: readonly McpTool[]): Map<string, string> {
  return screenDescriptions(
    remotes.map((remote) => ({
      name: remote.name,
      text: [remote.title, remote.annotations?.title, remote.description]
        .filter((part): part is string => typeof part === 'string')
        .join('\n'),
    })),
  );
}

// SEP-2243: `x-mcp-header` names the Mcp-Param-* header an argument is mirrored into. The header
// name is an RFC 9110 token, on a string, integer or boolean property reached through `properties`
// only, unique whatever its case. A tool that breaks a rule is left out, and only that tool.
const MCP_HEADER = 'x-mcp-header';
const HEADER_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
// Where a subschema is not an argument the header could be read from.
const NOT_AN_ARGUMENT = [
  ...['items', 'prefixItems', 'additionalProperties', 'patternProperties', 'unevaluatedProperties'],
  ...['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', '$defs', 'definitions', 'dependentSchemas'],
  ...['contains', 'propertyNames', 'additionalItems', 'unevaluatedItems'],
];

const SUBSCHEMA_MAPS = new Set(['patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** Why a tool's `x-mcp-header` declarations are malformed, or undefined when they are fine (or absent). */
export function mcpHeaderProblem(inputSchema: unknown): string | undefined {
  const seen = new Map<string, string>();
  const visit = (node: unknown, path: readonly string[], argument: boolean): string | undefined => {
    if (!isRecord(node)) return undefined;
    const at = path.length === 0 ? 'the input schema' : `'${path.join('.').slice(0, 100)}'`;
    if (MCP_HEADER in node) {
      const header = node[MCP_HEADER];
      if (!argument || path.length === 0)
        return `${MCP_HEADER} at ${at} is not on a property reached through 'properties' only`;
      if (typeof header !== 'string' || header === '')
        return `${MCP_HEADER} at ${at} is not a non-empty string`;
      if (!HEADER_TOKEN.test(header))
        return `${MCP_HEADER} at ${at} is not an HTTP token (no spaces, controls, delimiters or non-ASCII)`;
      if (typeof node['type'] !== 'string' || !HEADER_TYPES.has(node['type']))
        return `${MCP_HEADER} at ${at} is on a property that is not a string, integer or boolean`;
      const other = seen.get(header.toLowerCase());
      if (other !== undefined) return `${MCP_HEADER} '${header}' is declared twice (as '${other}' too)`;
      seen.set(header.toLowerCase(), header);
    }
    if (isRecord(node['properties']))
      for (const [key, child] of Object.entries(node['properties'])) {
        const problem = visit(child, [...path, key], argument);
        if (problem !== undefined) return problem;
      }
    for (const keyword of NOT_AN_ARGUMENT) {
      const sub = node[keyword];
      const branches = Array.isArray(sub)
        ? sub
        : SUBSCHEMA_MAPS.has(keyword) && isRecord(sub)
          ? Object.values(sub)
          : [sub];
      for (const branch of branches) {
        const problem = visit(branch, [...path, keyword], false);
        if (problem !== undefined) return problem;
      }
    }
    return undefined;
  };
  return visit(inputSchema, [], true);
}
