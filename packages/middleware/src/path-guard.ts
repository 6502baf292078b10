// The path guard: arguments that are file paths must stay under their roots after lexical
// normalization (`..`, `%2e%2e`, backslashes, fullwidth dots, NUL, absolute paths). Roots come from
// the tool's own `paths` declaration, the operator's per-tool map, and the tenant's map; a path must
// satisfy every one that applies.

import {
  refusalReason,
  shortHash,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { pathProblem, rootOf, type PathProblem, type Root } from './internal/lexical-path';
import { itemsAt } from './internal/values';
import { refuseValuePath } from './internal/value-paths';

/** `{ toolName: { argPath: [root, …] } }`. */
export type PathRoots = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

export interface PathGuardOptions {
  /** Roots per tool for every call, on top of each tool's own `paths` declaration. */
  readonly tools?: PathRoots;
  /** Roots per tenant (`identity.tenant`), on top of the others. A tenant not listed gets only `tools` and declarations. */
  readonly tenants?: Readonly<Record<string, PathRoots>>;
  /** Also read every argument value shaped like a path, declared or not (imported tools declare nothing); default true. */
  readonly values?: boolean;
}

/** Root sets that apply to one argument path; a value must be under a root of each. */
type Confinement = ReadonlyMap<string, readonly (readonly Root[])[]>;

const WORDS: Record<PathProblem, string> = {
  outside: 'leads outside the directories it may use once `..`, encodings and separators are resolved',
  nul: 'contains a NUL character',
  encoding: 'contains a malformed percent-encoding',
  'not-a-path': 'is not a plain path (a `~`, `file:` URL, network share or drive-relative path)',
};

const CODES: Record<PathProblem, string> = {
  outside: 'PATH_OUTSIDE_ROOT',
  nul: 'PATH_NUL',
  encoding: 'PATH_ENCODING',
  'not-a-path': 'PATH_NOT_PLAIN',
};

function rootsOf(list: unknown, where: string): readonly Root[] {
  if (!Array.isArray(list) || list.length === 0)
    throw new TypeError(`pathGuard: ${where} must list at least one root directory.`);
  return list.map((root: unknown) => {
    if (typeof root !== 'string' || root.includes('\0'))
      throw new TypeError(`pathGuard: ${where} has a root that is not a string.`);
    try {
      return rootOf(root);
    } catch {
      throw new TypeError(
        `pathGuard: ${where} has '${root}', which is not an absolute directory like '/srv/data'.`,
      );
    }
  });
}

function compile(map: PathRoots | undefined, where: string): ReadonlyMap<string, Confinement> {
  const out = new Map<string, Confinement>();
  for (const [tool, args] of Object.entries(map ?? {})) {
    out.set(
      tool,
      new Map(
        Object.entries(args ?? {}).map(([path, roots]) => [
          path,
          [rootsOf(roots, `${where}.${tool}.${path}`)],
        ]),
      ),
    );
  }
  return out;
}

/** Every confinement that applies, merged by argument path. */
function merge(...parts: (Confinement | undefined)[]): Confinement {
  const out = new Map<string, (readonly Root[])[]>();
  for (const part of parts)
    for (const [path, sets] of part ?? []) out.set(path, [...(out.get(path) ?? []), ...sets]);
  return out;
}

const rootList = (sets: readonly (readonly Root[])[]) =>
  sets[sets.length - 1]!.slice(0, 5)
    .map((root) => root.text)
    .join(', ');

/**
 * Refuses a call whose path arguments leave their roots. Relative paths are read against the root
 * (and may not climb above it); absolute ones must lie under it. Symbolic links are not followed.
 *
 * @example
 * pathGuard({ tenants: { acme: { read_file: { path: ['/srv/data/acme'] } } } })
 */
export function pathGuard(options: PathGuardOptions = {}): Middleware {
  const everyone = compile(options.tools, 'tools');
  const perTenant = new Map(
    Object.entries(options.tenants ?? {}).map(([tenant, map]) => [tenant, compile(map, `tenants.${tenant}`)]),
  );
  const declared = new WeakMap<Tool, Confinement>();
  const ownOf = (tool: Tool): Confinement => {
    let own = declared.get(tool);
    if (own === undefined) {
      own = merge(
        new Map(
          Object.entries(tool.paths ?? {}).map(([path, roots]) => [
            path,
            [rootsOf(roots, `'${tool.schema.name}' paths.${path}`)],
          ]),
        ),
        everyone.get(tool.schema.name),
      );
      declared.set(tool, own);
    }
    return own;
  };
  const mentioned = (tool: Tool) =>
    ownOf(tool).size > 0 || [...perTenant.values()].some((map) => map.has(tool.schema.name));

  const refuse = (
    ctx: ToolMiddlewareContext,
    at: string,
    problem: PathProblem,
    sets: readonly (readonly Root[])[],
  ): never => {
    const code = CODES[problem];
    ctx.emit({ type: 'path.refused', arg: at, code });
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' argument '${at}' ${WORDS[problem]}`,
        'Retrying with the same path will not help',
        `Use a plain path under ${rootList(sets)}`,
      ),
      { code, detail: `path guard: '${at}' ${problem}` },
    );
  };

  const judge = (ctx: ToolMiddlewareContext, confinement: Confinement): number => {
    let count = 0;
    for (const [path, sets] of confinement) {
      for (const item of itemsAt(ctx.args, path)) {
        if (typeof item.value !== 'string') return refuse(ctx, item.at, 'not-a-path', sets);
        for (const roots of sets) {
          const problem = pathProblem(item.value, roots);
          if (problem !== undefined) return refuse(ctx, item.at, problem, [roots]);
        }
        count++;
      }
    }
    return count;
  };

  return {
    name: 'path-guard',
    after: ['validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    honors: ['paths'],
    fingerprint: `${everyone.size} tools, ${perTenant.size} tenants, ${shortHash(JSON.stringify([options.tools ?? null, options.tenants ?? null]))}${options.values === false ? ', declared only' : ''}`,
    checkTool(tool) {
      try {
        ownOf(tool);
        return undefined;
      } catch (error) {
        return error instanceof Error ? error.message : 'its paths cannot be read';
      }
    },
    passThrough: (tool) =>
      options.values !== false || mentioned(tool) ? undefined : { why: 'no path arguments' },
    run: function pathGuardRun(ctx, next) {
      const tenant = ctx.identity?.tenant;
      const extra = tenant === undefined ? undefined : perTenant.get(tenant)?.get(ctx.toolName);
      const confinement = extra === undefined ? ownOf(ctx.tool) : merge(ownOf(ctx.tool), extra);
      const count = judge(ctx, confinement);
      if (options.values !== false) refuseValuePath(ctx, confinement);
      ctx.note(
        confinement.size === 0
          ? 'no path arguments'
          : `${count} path${count === 1 ? '' : 's'} inside their roots`,
      );
      return next();
    },
  };
}
