// The path guard: arguments that are file paths must stay under their roots after lexical
// normalization (`..`, `%2e%2e`, backslashes, fullwidth dots, NUL, absolute paths). Roots come from
// the tool's own `paths` declaration, the operator's per-tool map, and the tenant's map; a path must
// satisfy every one that applies. What reaches the tool is the absolute, normalized path the guard
// approved: a relative path is read against the tool's base directory (`base`) and rewritten, and
// refused when no base is known, since the guard cannot see what the tool would open.

import {
  refusalReason,
  shortHash,
  type Middleware,
  type Tool,
  type ToolArgs,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import {
  absolutePath,
  isUnder,
  pathProblem,
  rootOf,
  type PathProblem,
  type Root,
} from './internal/lexical-path';
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
  /**
   * The absolute directory a tool resolves relative paths from (its working directory), for every
   * tool or per tool; undefined for a tool means unknown, and its relative paths are refused.
   */
  readonly base?: string | ((tool: Tool) => string | undefined);
  /**
   * Resolves symbolic links where the guard can see the tool's file system (same host): the real
   * path must stay under the roots' real paths too, and is what the tool receives. Answers the path
   * itself when nothing there exists yet is fine; throwing refuses the call.
   */
  readonly realpath?: (path: string, tool: Tool) => Promise<string>;
}

/** Root sets that apply to one argument path; a value must be under a root of each. */
type Confinement = ReadonlyMap<string, readonly (readonly Root[])[]>;

const WORDS: Record<PathProblem, string> = {
  outside: 'leads outside the directories it may use once `..`, encodings and separators are resolved',
  nul: 'contains a NUL character',
  encoding: 'contains a malformed percent-encoding',
  'not-a-path': 'is not a plain path (a `~`, `file:` URL, network share or drive-relative path)',
  relative: 'is relative, and the directory the tool reads it from is not known',
};

const CODES: Record<PathProblem, string> = {
  outside: 'PATH_OUTSIDE_ROOT',
  nul: 'PATH_NUL',
  encoding: 'PATH_ENCODING',
  'not-a-path': 'PATH_NOT_PLAIN',
  relative: 'PATH_RELATIVE',
};

/** `args` with the string at `at` (`paths.1`) replaced; undefined when `at` cannot be followed. */
function withValueAt(args: ToolArgs, at: string, value: string): ToolArgs | undefined {
  const segments = at.split('.');
  const copy = (node: unknown, depth: number): unknown => {
    if (depth === segments.length) return value;
    if (typeof node !== 'object' || node === null) return undefined;
    const key = segments[depth]!;
    if (!Object.hasOwn(node, key)) return undefined;
    const inner = copy((node as Record<string, unknown>)[key], depth + 1);
    if (inner === undefined) return undefined;
    if (Array.isArray(node)) {
      const items = [...(node as unknown[])];
      items[Number(key)] = inner;
      return items;
    }
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(node))
      Object.defineProperty(out, name, {
        value: name === key ? inner : (node as Record<string, unknown>)[name],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  };
  return copy(args, 0) as ToolArgs | undefined;
}

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
 * Refuses a call whose path arguments leave their roots, and hands the tool each approved path as
 * an absolute, normalized path. Relative paths are read against `base` (refused without one);
 * symbolic links are followed only through `realpath`.
 *
 * @example
 * pathGuard({ base: '/srv/app', tenants: { acme: { read_file: { path: ['/srv/data/acme'] } } } })
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

  const baseOf = (() => {
    const option = options.base;
    const fixed = typeof option === 'string' ? rootsOf([option], 'base')[0] : undefined;
    if (typeof option !== 'function') return (): Root | undefined => fixed;
    const known = new WeakMap<Tool, Root | null>();
    return (tool: Tool): Root | undefined => {
      let root = known.get(tool);
      if (root === undefined) {
        const text = option(tool);
        root = text === undefined ? null : rootsOf([text], `base of '${tool.schema.name}'`)[0]!;
        known.set(tool, root);
      }
      return root ?? undefined;
    };
  })();

  // The roots' own real paths, once each: a root behind a symbolic link still holds its files.
  type Realpath = NonNullable<PathGuardOptions['realpath']>;
  const realRoots = new WeakMap<Tool, Map<string, Promise<Root>>>();
  const realRoot = (root: Root, realpath: Realpath, tool: Tool): Promise<Root> => {
    let known = realRoots.get(tool);
    if (known === undefined) realRoots.set(tool, (known = new Map()));
    let found = known.get(root.text);
    if (found === undefined) {
      found = realpath(root.text, tool).then(
        (real) => rootOf(real),
        () => root,
      );
      known.set(root.text, found);
    }
    return found;
  };

  interface Approved {
    readonly at: string;
    readonly value: string;
    readonly absolute: string;
    readonly sets: readonly (readonly Root[])[];
  }

  const judge = (ctx: ToolMiddlewareContext, confinement: Confinement): Approved[] => {
    const base = baseOf(ctx.tool);
    const approved: Approved[] = [];
    for (const [path, sets] of confinement) {
      for (const item of itemsAt(ctx.args, path)) {
        if (typeof item.value !== 'string') return refuse(ctx, item.at, 'not-a-path', sets);
        for (const roots of sets) {
          const problem = pathProblem(item.value, roots, base);
          if (problem !== undefined) return refuse(ctx, item.at, problem, [roots]);
        }
        const absolute = absolutePath(item.value, base);
        if (absolute === undefined) return refuse(ctx, item.at, 'relative', sets);
        approved.push({ at: item.at, value: item.value, absolute, sets });
      }
    }
    return approved;
  };

  /** The args with every approved path as the tool should receive it; refuses what cannot be written back. */
  const rewrite = (
    ctx: ToolMiddlewareContext,
    approved: readonly Approved[],
    finals: readonly string[],
    note: string,
  ) => {
    let args = ctx.args;
    const changed: string[] = [];
    approved.forEach((item, i) => {
      const final = finals[i]!;
      if (final === item.value) return;
      const next = withValueAt(args, item.at, final);
      if (next === undefined) return refuse(ctx, item.at, 'not-a-path', item.sets);
      args = next;
      changed.push(`'${item.at}'`);
    });
    if (changed.length > 0) ctx.setArgs(args, `${note}; ${changed.join(', ')} made absolute`);
  };

  const followLinks = async (
    ctx: ToolMiddlewareContext,
    approved: readonly Approved[],
    realpath: Realpath,
  ): Promise<string[]> => {
    const finals: string[] = [];
    for (const item of approved) {
      let real: string;
      try {
        real = await realpath(item.absolute, ctx.tool);
      } catch {
        return refuse(ctx, item.at, 'outside', item.sets);
      }
      for (const roots of item.sets) {
        const reals = await Promise.all(roots.map((root) => realRoot(root, realpath, ctx.tool)));
        if (!isUnder(real, reals) && !isUnder(real, roots)) return refuse(ctx, item.at, 'outside', [roots]);
      }
      finals.push(real);
    }
    return finals;
  };

  // A base given per tool and a realpath are code: their presence is what the fingerprint can show.
  const reading = [
    ...(options.base === undefined ? [] : [typeof options.base === 'string' ? options.base : 'per tool']),
    ...(options.realpath === undefined ? [] : ['realpath']),
  ];
  const fingerprinted = [options.tools ?? null, options.tenants ?? null, ...reading];

  return {
    name: 'path-guard',
    after: ['validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    honors: ['paths'],
    fingerprint: `${everyone.size} tools, ${perTenant.size} tenants, ${shortHash(JSON.stringify(fingerprinted))}${options.values === false ? ', declared only' : ''}`,
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
      const approved = judge(ctx, confinement);
      if (options.values !== false) refuseValuePath(ctx, confinement);
      const count = approved.length;
      const note =
        confinement.size === 0
          ? 'no path arguments'
          : `${count} path${count === 1 ? '' : 's'} inside their roots`;
      ctx.note(note);
      const realpath = options.realpath;
      if (realpath === undefined || count === 0) {
        rewrite(
          ctx,
          approved,
          approved.map((item) => item.absolute),
          note,
        );
        return next();
      }
      return followLinks(ctx, approved, realpath).then((finals) => {
        rewrite(ctx, approved, finals, note);
        return next();
      });
    },
  };
}
