// A SchemaValidator for runtimes that forbid code generation (Cloudflare workerd, some edge hosts),
// where ajv cannot compile. It checks a schema as ajv would (meta-schema, strict mode, the same audit),
// resolves its references once, and interprets it with toolgate's own interpreter, which reports ajv's
// errors in ajv's order: a model reads the same refusal whichever validator runs.

import type { JsonSchema } from '@toolgate/core';
import { interpret, type Program } from './internal/interpret';
import { checkSchema } from './internal/schema-audit';
import { isNode, walkSchema, type SchemaNode } from './internal/schema-words';
import { problemsOf, type SchemaValidator } from './validator';

export interface EvalFreeValidatorOptions {
  /** Apply `default` values from the schema to the args the tool receives; default true. */
  readonly useDefaults?: boolean;
}

/** A private JSON copy: what is compiled cannot change under the validator, nor carry non-JSON values. */
function copyOf(schema: JsonSchema): SchemaNode {
  let text: string | undefined;
  try {
    text = JSON.stringify(schema);
  } catch {
    text = undefined;
  }
  if (text === undefined) throw new Error('schema is invalid: it has no JSON form');
  return JSON.parse(text) as SchemaNode;
}

const hasDefaults = (schema: SchemaNode): boolean => {
  let found = false;
  walkSchema(schema, (node) => {
    found ||= isNode(node) && 'default' in node;
  });
  return found;
};

/**
 * An eval-free SchemaValidator (drafts 7 and 2020-12): no `new Function`, so it runs where code
 * generation is forbidden. It refuses at compile what ajv refuses, and judges args as ajv does, in
 * ajv's words; patterns and formats run in linear time, `uniqueItems` by hashing.
 */
export function evalFreeValidator(options: EvalFreeValidatorOptions = {}): SchemaValidator {
  const useDefaults = options.useDefaults ?? true;
  return {
    compile(schema) {
      const root = copyOf(schema);
      const { draft, patterns, refs } = checkSchema(root, useDefaults);
      const program: Program = { root, draft, refs, patterns, useDefaults };
      const cloneFirst = useDefaults && hasDefaults(root);
      return (args) => {
        const data = cloneFirst ? structuredClone(args) : args;
        const errors = interpret(program, data);
        if (errors.length === 0)
          return cloneFirst ? { valid: true, value: data as Record<string, unknown> } : { valid: true };
        return { valid: false, problems: problemsOf(errors) };
      };
    },
  };
}
