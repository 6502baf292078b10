// CEL for policy rules: the environment every rule is checked in, the CEL type of a tool's args
// (from its JSON Schema), what an expression reads, and the values a call hands to an expression.

import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import type { Identity, JsonSchema, Tool, ToolArgs } from '@toolgate/core';
import { LINEAR_MATCHES_SIGNATURE, linearMatches, useLinearMatches } from './linear-matches';

// An object schema, as cel-js takes it: a field is a CEL type name or a nested object schema.
interface ObjectSchema {
  [field: string]: string | ObjectSchema;
}

const TOOL_SCHEMA: ObjectSchema = {
  name: 'string',
  source: 'string',
  capabilities: 'list<string>',
  annotations: {
    title: 'string',
    readOnlyHint: 'bool',
    destructiveHint: 'bool',
    idempotentHint: 'bool',
    openWorldHint: 'bool',
  },
};

const IDENTITY_SCHEMA: ObjectSchema = {
  tenant: 'string',
  principal: 'string',
  conversation: 'string',
  roles: 'list<string>',
};

/** The variables a rule may read. */
export const VARIABLES = ['tool', 'args', 'identity', 'now'] as const;
export type Variable = (typeof VARIABLES)[number];

function baseEnvironment(): Environment {
  return new Environment({ unlistedVariablesAreDyn: false })
    .registerVariable('tool', { schema: TOOL_SCHEMA })
    .registerVariable('identity', { schema: IDENTITY_SCHEMA })
    .registerVariable('now', 'google.protobuf.Timestamp');
}

// Built on first use, never while the module loads (workerd forbids work at global scope).
let base: Environment | undefined;
let untyped: Environment | undefined;

let evaluation: Environment | undefined;

/** Where a rule is first parsed and checked: args of any shape (`map<string, dyn>`). */
export function untypedEnvironment(): Environment {
  base ??= baseEnvironment();
  return (untyped ??= base.clone().registerVariable('args', 'map<string, dyn>'));
}

/**
 * Where a rule is compiled for evaluation, once: every variable a plain map. The types were checked per
 * tool at build, and validate-args (with ints handed over as BigInt) makes the values match them, so the
 * evaluator need not wrap each call's objects in typed messages, which costs several times the decision.
 */
export function evaluationEnvironment(): Environment {
  return (evaluation ??= new Environment({ unlistedVariablesAreDyn: false })
    .registerVariable('tool', 'map<string, dyn>')
    .registerVariable('identity', 'map<string, dyn>')
    .registerVariable('args', 'map<string, dyn>')
    .registerVariable('now', 'google.protobuf.Timestamp')
    .registerFunction(LINEAR_MATCHES_SIGNATURE, linearMatches));
}

/** Compiles an expression for evaluation, its `matches()` calls on RE2. */
export function compileForEvaluation(text: string): (vars: Record<string, unknown>) => unknown {
  const parsed = evaluationEnvironment().parse(text);
  useLinearMatches(parsed.ast);
  return parsed;
}

/** The environment for one tool's rules: args typed by the tool's input schema. */
export function toolEnvironment(args: ArgsType): Environment {
  base ??= baseEnvironment();
  const env = base.clone();
  return typeof args.cel === 'string'
    ? env.registerVariable('args', args.cel)
    : env.registerVariable({ name: 'args', schema: args.cel });
}

/** A tool's args as CEL sees them. */
export interface ArgsType {
  /** The CEL type of `args`: an object schema, or a type name when the input schema declares no fields. */
  readonly cel: ObjectSchema | string;
  /** Top-level fields and their JSON Schema type words, for messages. */
  readonly fields: ReadonlyMap<string, string>;
  /** Turns JSON integers into CEL ints (BigInt) where the schema says integer; undefined when none does. */
  readonly convert: ((args: Readonly<ToolArgs>) => unknown) | undefined;
}

const MAX_DEPTH = 8;
type Convert = (value: unknown) => unknown;

const toInt: Convert = (value) =>
  typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The CEL type of a JSON Schema, and how to convert a value of it, when it holds integers. */
function celTypeOf(schema: unknown, depth: number): { type: string | ObjectSchema; convert?: Convert } {
  if (!isRecord(schema) || depth > MAX_DEPTH) return { type: 'dyn' };
  switch (schema['type']) {
    case 'string':
      return { type: 'string' };
    case 'integer':
      return { type: 'int', convert: toInt };
    case 'number':
      return { type: 'double' };
    case 'boolean':
      return { type: 'bool' };
    case 'array': {
      const item = celTypeOf(schema['items'], depth + 1);
      if (typeof item.type !== 'string') return { type: 'list<dyn>' };
      const each = item.convert;
      return {
        type: `list<${item.type}>`,
        ...(each !== undefined ? { convert: (v: unknown) => (Array.isArray(v) ? v.map(each) : v) } : {}),
      };
    }
    case 'object': {
      const props = schema['properties'];
      if (!isRecord(props) || Object.keys(props).length === 0) return { type: 'map<string, dyn>' };
      return objectType(props, depth);
    }
    default:
      return { type: 'dyn' };
  }
}

function objectType(
  props: Record<string, unknown>,
  depth: number,
): { type: ObjectSchema; convert?: Convert } {
  const type: ObjectSchema = {};
  const converts: [string, Convert][] = [];
  for (const [field, schema] of Object.entries(props)) {
    const inner = celTypeOf(schema, depth + 1);
    type[field] = inner.type;
    if (inner.convert !== undefined) converts.push([field, inner.convert]);
  }
  if (converts.length === 0) return { type };
  const convert: Convert = (value) => {
    if (!isRecord(value)) return value;
    const copy: Record<string, unknown> = { ...value };
    for (const [field, each] of converts) if (field in copy) copy[field] = each(copy[field]);
    return copy;
  };
  return { type, convert };
}

/** The CEL type of `tool`'s args, from its input schema. */
export function argsTypeOf(tool: Tool): ArgsType {
  const schema: JsonSchema = tool.schema.inputSchema;
  const props = isRecord(schema) ? schema['properties'] : undefined;
  if (!isRecord(props) || Object.keys(props).length === 0) {
    return { cel: 'map<string, dyn>', fields: new Map(), convert: undefined };
  }
  const { type, convert } = objectType(props, 0);
  const fields = new Map<string, string>();
  for (const [field, inner] of Object.entries(props)) {
    const word = isRecord(inner) && typeof inner['type'] === 'string' ? inner['type'] : 'any';
    fields.set(field, word);
  }
  return { cel: type, fields, convert: convert as ArgsType['convert'] };
}

/** What an expression reads: which variables, and which top-level args fields by name. */
export interface Reads {
  readonly variables: ReadonlySet<Variable>;
  /** Fields read as `args.f`, `args['f']` or `has(args.f)`, with where each first appears. */
  readonly argsFields: ReadonlyMap<string, { readonly start: number; readonly end: number }>;
  /** `args` is read other than by a named field (`args[key]`, `size(args)`): the fields are unknown. */
  readonly argsWhole: boolean;
}

const isNode = (value: unknown): value is ASTNode =>
  typeof value === 'object' && value !== null && 'op' in value && 'args' in value;

/** Walks an expression's AST once. */
export function readsOf(ast: ASTNode): Reads {
  const variables = new Set<Variable>();
  const argsFields = new Map<string, { start: number; end: number }>();
  let argsWhole = false;
  const visit = (node: ASTNode): void => {
    if (node.op === 'id') {
      if ((VARIABLES as readonly string[]).includes(node.args)) variables.add(node.args as Variable);
      if (node.args === 'args') argsWhole = true;
      return;
    }
    if (node.op === '.' || node.op === '.?' || node.op === '[]' || node.op === '[?]') {
      const [target, key] = node.args;
      const field =
        typeof key === 'string'
          ? key
          : isNode(key) && key.op === 'value' && typeof key.args === 'string'
            ? key.args
            : undefined;
      if (target.op === 'id' && target.args === 'args' && field !== undefined) {
        variables.add('args');
        if (!argsFields.has(field)) argsFields.set(field, { start: node.range.start, end: node.range.end });
        return;
      }
    }
    const children: unknown = node.args;
    if (Array.isArray(children)) walkAll(children, visit);
    else if (isNode(children)) visit(children);
  };
  visit(ast);
  return { variables, argsFields, argsWhole };
}

function walkAll(items: readonly unknown[], visit: (node: ASTNode) => void): void {
  for (const item of items) {
    if (isNode(item)) visit(item);
    else if (Array.isArray(item)) walkAll(item, visit);
  }
}

/** The value of `tool` for a tool: absent declarations read as MCP's defaults, so rules never trip on absence. */
export function toolValueOf(tool: Tool): Readonly<Record<string, unknown>> {
  const a = tool.annotations;
  return Object.freeze({
    name: tool.schema.name,
    source: tool.source ?? '',
    capabilities: Object.freeze([...(tool.capabilities ?? [])]),
    annotations: Object.freeze({
      title: a?.title ?? '',
      readOnlyHint: a?.readOnlyHint ?? false,
      destructiveHint: a?.destructiveHint ?? true,
      idempotentHint: a?.idempotentHint ?? false,
      openWorldHint: a?.openWorldHint ?? true,
    }),
  });
}

const NO_ROLES: readonly string[] = Object.freeze([]);
const NOBODY = Object.freeze({ roles: NO_ROLES });

/** The value of `identity`: absent fields stay absent (reading one fails the rule closed); no roles is `[]`. */
export function identityValueOf(identity: Identity | undefined): Identity {
  if (identity === undefined) return NOBODY;
  // The core hands over a frozen copy: used as it is, unless it lacks roles.
  return Array.isArray(identity.roles) ? identity : { ...identity, roles: NO_ROLES };
}
