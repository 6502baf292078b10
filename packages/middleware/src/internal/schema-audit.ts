// Checks both validators run on a schema before compiling it, for what neither may honour: references
// that point at something other than a subschema (a pattern hidden under `title` or in an `enum` value
// would escape every check made on subschemas), and the keywords whose meaning one validator lacks.

import type { JsonSchema } from '@toolgate/core';
import { isNode, pointsAtSchema, walkSchema } from './schema-words';

// $dynamicRef/$recursiveRef resolve at run time by the path taken, which the eval-free interpreter does
// not model; $async would turn a validation into a promise; $vocabulary only matters in a meta-schema.
const UNSUPPORTED: Readonly<Record<string, string>> = {
  $dynamicRef: 'dynamic references',
  $dynamicAnchor: 'dynamic references',
  $recursiveRef: 'recursive references',
  $recursiveAnchor: 'recursive references',
  $async: 'asynchronous schemas',
  $vocabulary: 'vocabularies',
};

/** Throws, naming the place, on a schema neither validator may run. */
export function auditSchema(schema: JsonSchema): void {
  walkSchema(schema, (node, pointer) => {
    if (!isNode(node)) return;
    for (const key of Object.keys(node)) {
      const what = UNSUPPORTED[key];
      if (what !== undefined)
        throw new Error(`"${key}" at "${pointer}": ${what} are not supported in a tool's input schema`);
    }
    const ref = node['$ref'];
    if (typeof ref !== 'string') return;
    const hash = ref.indexOf('#');
    if (hash === -1) return;
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(hash + 1));
    } catch {
      throw new Error(`"$ref" at "${pointer}" is not a valid reference`);
    }
    // A plain-name fragment is an anchor, which no accepted keyword defines: left for resolution to refuse.
    if ((fragment === '' || fragment.startsWith('/')) && !pointsAtSchema(fragment)) {
      throw new Error(`"$ref" at "${pointer}" points at ${JSON.stringify(ref)}, which is not a subschema`);
    }
  });
}
