// The validate-args gate: judges the args that will run against the tool's input schema.

import { canonicalJson, refusalReason, type Middleware, type Tool } from '@toolgate/core';
import { ajvValidator, type CompiledSchema, type SchemaValidator, type ValidationProblem } from './validator';

export interface ValidateArgsGateOptions {
  /** Default: ajv, compiled once per schema. */
  readonly validator?: SchemaValidator;
  /** How many problems the refusal lists; default 5. */
  readonly maxProblems?: number;
}

// Paths can hold names the model made up (an unexpected property); a long one is cut, not repeated whole.
const MAX_PATH_CHARS = 80;

function describeProblems(problems: readonly ValidationProblem[], max: number): string {
  const clip = (path: string) =>
    path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS - 1)}…` : path;
  const shown = problems
    .slice(0, max)
    .map((p) => (p.path === '' ? `the arguments ${p.expected}` : `'${clip(p.path)}' ${p.expected}`));
  const more = problems.length > max ? `; and ${problems.length - max} more` : '';
  return shown.join('; ') + more;
}

/**
 * Validates args against the tool's `inputSchema`. Schemas compile once, at dispatcher build
 * (an invalid schema or unknown keyword fails there), and are cached per schema object (the default
 * ajv validator: once per process, for every chain).
 */
export function validateArgsGate(options: ValidateArgsGateOptions = {}): Middleware {
  const validator = options.validator ?? ajvValidator();
  if (typeof validator?.compile !== 'function')
    throw new TypeError('validateArgsGate: validator must have a compile(schema) method.');
  const maxProblems = options.maxProblems ?? 5;
  // The default validator keeps its own process-wide cache; a custom one is cached here, per gate.
  const compiled = options.validator === undefined ? undefined : new WeakMap<object, CompiledSchema>();
  const compiledFor = (tool: Tool): CompiledSchema => {
    const schema = tool.schema.inputSchema;
    if (compiled === undefined) return validator.compile(schema);
    let validate = compiled.get(schema);
    if (validate === undefined) {
      validate = validator.compile(schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
  return {
    name: 'validate-args',
    fingerprint: options.validator === undefined ? 'ajv' : 'custom validator',
    checkTool(tool) {
      try {
        compiledFor(tool);
        return undefined;
      } catch (error) {
        // ajv compiles with `new Function`; a runtime that forbids it (workerd) is no fault of the schema.
        if (error instanceof EvalError) {
          return 'this runtime forbids code generation, which the ajv validator needs; pass canonicalChain({ validator: evalFreeValidator() })';
        }
        const message = error instanceof Error ? error.message.split('\n')[0] : 'it did not compile';
        return `its inputSchema is not a valid JSON Schema (${message}); fix the schema`;
      }
    },
    // Nothing here awaits, so the gate costs no async frame.
    run: function validateArgs(ctx, next) {
      const verdict = compiledFor(ctx.tool)(ctx.args);
      if (!verdict.valid) {
        return ctx.deny(
          refusalReason(
            `the arguments for '${ctx.toolName}' do not match its schema: ${describeProblems(verdict.problems, maxProblems)}`,
            'Fix these and call it again',
          ),
          { code: 'INVALID_ARGS', detail: `${verdict.problems.length} schema problem(s)` },
        );
      }
      if (verdict.value !== undefined && canonicalJson(verdict.value) !== canonicalJson(ctx.args)) {
        ctx.setArgs(verdict.value, 'applied schema defaults');
      }
      return next();
    },
  };
}
