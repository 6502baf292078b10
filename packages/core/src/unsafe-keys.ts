// Keys in a call's args that could change objects the whole process shares. They are refused at
// dispatch and wherever a middleware replaces the args, so no tool ever receives one.

import { refusalReason } from './refusal';
import type { ToolArgs } from './tool';

/**
 * The path of the first key in `args` that could alter objects the whole process shares, if any:
 * `__proto__` anywhere (a model's JSON makes it an own key, and `Object.assign` or a spread in a tool
 * then sets a prototype from it), and `constructor` or `prototype` holding an object (what a careless
 * deep merge walks into `Object.prototype` through). Walked without recursion, so depth cannot overflow.
 */
export function pollutingKeyPath(args: Readonly<ToolArgs>): string | undefined {
  const pending: [object, string][] = [[args, '']];
  const seen = new Set<object>();
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, path] = next;
    if (seen.has(node)) continue;
    seen.add(node);
    const inArray = Array.isArray(node);
    for (const key of Object.keys(node)) {
      const value = (node as Record<string, unknown>)[key];
      const isObject = typeof value === 'object' && value !== null;
      if (!inArray && (key === '__proto__' || (isObject && (key === 'constructor' || key === 'prototype'))))
        return path === '' ? key : `${path}.${key}`;
      if (isObject) pending.push([value, path === '' ? key : `${path}.${key}`]);
    }
  }
  return undefined;
}

// Paths hold names the model made up; a long one is cut, not repeated whole.
const MAX_PATH_CHARS = 80;

/** The refusal for a key `pollutingKeyPath` found. */
export function unsafeKeyReason(toolName: string, path: string): string {
  const shown = path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS - 1)}…` : path;
  const key = path.slice(path.lastIndexOf('.') + 1);
  return refusalReason(
    `the arguments for '${toolName}' hold the key '${key}' at '${shown}', which is never passed to a tool: ` +
      `'__proto__' anywhere, or 'constructor' or 'prototype' holding an object, could change objects the whole process shares`,
    'Retrying with it will not help',
    "Call it again without that key (rename it, e.g. to 'proto' or 'constructorName')",
  );
}
