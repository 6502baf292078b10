// Step three of loading: the document against the configuration's JSON Schema. Each failure is worded
// from the schema itself: the known keys of the object that failed, the allowed values, and for a
// pattern or a choice of forms the node's own `errorMessage` (what is wrong, and the fix).

import Ajv, { type ErrorObject } from 'ajv';
import { closest } from './errors';
import type { Problem } from './problem';
import { configSchema } from './schema';

// verbose: errors carry the schema object that failed, which names the known keys and the words.
const validate = new Ajv({ allErrors: true, strict: false, verbose: true }).compile(configSchema);

/** Every way `value` breaks the schema; none when it conforms. */
export function schemaProblems(value: unknown): Problem[] {
  return validate(value) ? [] : schemaIssues(validate.errors ?? []);
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping of keys',
  'array,object': 'a list of rules, or a mapping { file | rules, default }',
  'string,object': 'a URL, or a mapping { url, publicUrl, … }',
  'boolean,object': 'true, false or a mapping of its options',
};

function pointerPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** The keys the failing schema object allows, for "known keys". */
function knownKeys(parent: unknown): string[] {
  const properties = (parent as { properties?: Record<string, unknown> } | undefined)?.properties;
  return properties === undefined ? [] : Object.keys(properties).filter((key) => key !== '$schema');
}

/** What a pattern or a choice of forms fails with when its node carries no `errorMessage`. */
const FORMLESS = { message: 'does not match any allowed form', fix: 'see schema/toolgate.schema.json' };

/** The failing node's own words: its `errorMessage`. */
function wordsOf(parent: unknown): { message: string; fix: string } | undefined {
  return (parent as { errorMessage?: { message: string; fix: string } } | undefined)?.errorMessage;
}

function schemaIssues(errors: readonly ErrorObject[]): Problem[] {
  // A failed oneOf also reports each branch's failure; the oneOf's own message says it better.
  const oneOfs = errors.filter((error) => error.keyword === 'oneOf');
  const inOneOf = (error: ErrorObject) =>
    error.keyword !== 'oneOf' &&
    error.schemaPath.includes('/oneOf/') &&
    oneOfs.some(
      (one) =>
        error.instancePath === one.instancePath || error.instancePath.startsWith(`${one.instancePath}/`),
    );
  const seen = new Set<string>();
  const problems: Problem[] = [];
  for (const error of errors) {
    if (inOneOf(error)) continue;
    const problem = schemaProblem(error);
    const id = `${problem.path.join('\u0000')}|${problem.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    problems.push(problem);
  }
  return problems;
}

function schemaProblem(error: ErrorObject): Problem {
  const path = pointerPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent: unknown = error.parentSchema;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params['additionalProperty']);
      const known = knownKeys(parent);
      const guess = closest(key, known);
      return {
        path: [...path, key],
        key: true,
        message: `unknown key '${key}'`,
        fix:
          guess !== undefined
            ? `did you mean '${guess}'? Known keys here: ${known.join(', ')}`
            : known.length > 0
              ? `remove it; known keys here: ${known.join(', ')}`
              : 'remove it',
      };
    }
    case 'required':
      return {
        path,
        message: `'${String(params['missingProperty'])}' is missing`,
        fix: `add '${String(params['missingProperty'])}'`,
      };
    case 'type':
      return {
        path,
        message: `must be ${TYPE_WORDS[String(params['type'])] ?? String(params['type'])}`,
        fix: 'change its type',
      };
    case 'enum':
      return {
        path,
        message: `must be one of: ${(params['allowedValues'] as unknown[]).map((v) => `'${String(v)}'`).join(', ')}`,
        fix: 'use one of those values',
      };
    case 'propertyNames':
      return {
        path: [...path, String(params['propertyName'])],
        key: true,
        message: `the name '${String(params['propertyName'])}' is not allowed`,
        fix: "use letters, digits, '_' and '-' (at most 64)",
      };
    case 'pattern':
    case 'oneOf':
      return { path, ...(wordsOf(parent) ?? FORMLESS) };
    default:
      return {
        path,
        message: (error.message ?? 'is not valid').replace(/^must NOT/, 'must not'),
        fix: 'see schema/toolgate.schema.json',
      };
  }
}
