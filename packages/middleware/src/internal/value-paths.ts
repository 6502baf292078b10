// The path guard's values-first half, apart from its declared roots: a value shaped like a path in
// an argument no root covers may not hold a NUL, climb two or more levels above where it starts, or
// name a file where credentials live (internal/value-shapes.ts says which).

import { refusalReason, type ToolMiddlewareContext } from '@toolgate/core';
import { isPathShaped, stringValues, valuePathProblem, type ValuePathProblem } from './value-shapes';

const WORDS: Record<ValuePathProblem, string> = {
  nul: 'contains a NUL character',
  traversal: "climbs out of the directory it starts in ('..' two or more levels up)",
  sensitive: 'names a file where keys or credentials are kept',
};

const CODES: Record<ValuePathProblem, string> = {
  nul: 'PATH_NUL',
  traversal: 'PATH_TRAVERSAL',
  sensitive: 'PATH_SENSITIVE',
};

/** Refuses the first path-shaped value outside `declared` argument paths that has a problem. */
export function refuseValuePath(ctx: ToolMiddlewareContext, declared: ReadonlyMap<string, unknown>): void {
  for (const { at, value } of stringValues(ctx.args)) {
    // A declared path was judged against its roots; list items stand under it as `path.0`.
    const under = at.replace(/\.\d+$/, '');
    if (declared.has(at) || declared.has(under) || !isPathShaped(value)) continue;
    const problem = valuePathProblem(value);
    if (problem === undefined) continue;
    const code = CODES[problem];
    ctx.emit({ type: 'path.refused', arg: at, code });
    ctx.deny(
      refusalReason(
        `'${ctx.toolName}' argument '${at}' ${WORDS[problem]}`,
        'Retrying with the same path will not help',
        problem === 'sensitive'
          ? 'Tell the user that reading this file is not allowed'
          : 'Use a plain path inside the directory the tool works in',
      ),
      { code, detail: `path guard: '${at}' ${problem}` },
    );
  }
}
