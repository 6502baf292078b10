// The wants gate: a tool declares `wants: { arg: kind }`; the model passes an `art_…` ref; the gate
// resolves it in the caller's own scope, checks its kind and swaps the data into the args.

import {
  isArtifactRef,
  refusalReason,
  scopeOf,
  withDeadline,
  type ArtifactMeta,
  type ArtifactStore,
  type Middleware,
  type Next,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { isArtifactMetaList, isStoredArtifact } from './internal/artifact-answers';
import { assertDeadline } from './internal/consult';

export interface WantsGateOptions {
  readonly store?: ArtifactStore;
  /** How long each store call may take; default 5000 ms. */
  readonly deadlineMs?: number;
}

const LISTED_REFS = 10;
const NO_WANTED_ARGS = Object.freeze({ why: 'no wanted args' });

function requiredArgs(ctx: ToolMiddlewareContext): ReadonlySet<string> {
  const required = ctx.tool.schema.inputSchema['required'];
  return new Set(Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : []);
}

/**
 * Resolves each wanted argument's artifact ref. Unknown, expired, other-scope and wrong-kind refs never reach
 * the tool; the model reads a refusal that lists up to 10 live refs of the wanted kind in its own scope.
 */
export function wantsGate(options: WantsGateOptions = {}): Middleware {
  const { store } = options;
  const deadlineMs = assertDeadline('wantsGate', options.deadlineMs);
  if (store !== undefined && (typeof store.get !== 'function' || typeof store.list !== 'function')) {
    throw new TypeError(
      'wantsGate: store must be an ArtifactStore with get(scope, ref) and list(scope, kind, limit).',
    );
  }
  const resolve = async (
    store: ArtifactStore,
    wanted: readonly [string, string][],
    ctx: ToolMiddlewareContext,
    next: Next,
  ): Promise<void> => {
    const scope = scopeOf(ctx.identity);
    const required = requiredArgs(ctx);
    const storeFailed = (arg: string, kind: string): never => {
      ctx.emit({ type: 'artifacts.refused', arg, wantedKind: kind, failure: 'store failed' });
      return ctx.deny(
        refusalReason(
          `'${ctx.toolName}' could not read the artifact for '${arg}' because the artifact store is unavailable`,
          'Retrying later may help',
        ),
        {
          code: 'ARTIFACT_STORE_FAILED',
          retryable: true,
        },
      );
    };
    const liveRefs = async (arg: string, kind: string): Promise<string> => {
      let live: ArtifactMeta[];
      try {
        live = await withDeadline(() => store.list(scope, kind, LISTED_REFS), deadlineMs, ctx.signal);
        if (!isArtifactMetaList(live)) throw new TypeError('the store answered list with something else');
      } catch {
        return storeFailed(arg, kind);
      }
      const refs = live.slice(0, LISTED_REFS).map((meta) => meta.ref);
      return refs.length === 0
        ? refusalReason(
            `There is no live '${kind}' artifact in this conversation`,
            'Create one first, then call it again',
          )
        : refusalReason(
            `Live '${kind}' artifacts: ${refs.join(', ')}`,
            'Call it again with one of those refs',
          );
    };
    // The listing is read before the event, so a store failing mid-refusal files one event, not two.
    const refuse = async (
      arg: string,
      kind: string,
      what: string,
      code: string,
      failure: string,
      ref?: string,
    ): Promise<never> => {
      const listing = await liveRefs(arg, kind);
      ctx.emit({
        type: 'artifacts.refused',
        arg,
        wantedKind: kind,
        ...(ref !== undefined ? { ref } : {}),
        failure,
      });
      return ctx.deny(refusalReason(what, listing), { code });
    };
    const resolved: { arg: string; ref: string; kind: string }[] = [];
    const args: Record<string, unknown> = { ...ctx.args };
    for (const [arg, kind] of wanted) {
      const value = args[arg];
      if (value === undefined) {
        if (!required.has(arg)) continue;
        return refuse(
          arg,
          kind,
          `'${ctx.toolName}' needs '${arg}': an artifact ref of kind '${kind}'`,
          'ARTIFACT_MISSING',
          'missing',
        );
      }
      let found;
      try {
        found = isArtifactRef(value)
          ? await withDeadline(() => store.get(scope, value), deadlineMs, ctx.signal)
          : undefined;
        if (found !== undefined && !isStoredArtifact(found, value as string))
          throw new TypeError('the store answered get with something else');
      } catch {
        return storeFailed(arg, kind);
      }
      if (found === undefined || found.meta.kind !== kind) {
        // Unknown, expired and other-scope refs read alike; only a wrong kind in the caller's own scope is named.
        const ref = isArtifactRef(value) ? value : undefined;
        return found === undefined
          ? refuse(
              arg,
              kind,
              `'${arg}' does not refer to a live '${kind}' artifact`,
              'ARTIFACT_NOT_FOUND',
              'not found',
              ref,
            )
          : refuse(
              arg,
              kind,
              `'${arg}' refers to an artifact of kind '${found.meta.kind}', but '${ctx.toolName}' needs kind '${kind}'`,
              'ARTIFACT_WRONG_KIND',
              'wrong kind',
              ref,
            );
      }
      args[arg] = found.data;
      ctx.provideWanted(arg, found.meta);
      resolved.push({ arg, ref: found.meta.ref, kind });
    }
    if (resolved.length > 0) {
      ctx.setArgs(args, `resolved artifact refs for ${resolved.map((r) => `'${r.arg}'`).join(', ')}`);
      ctx.emit({ type: 'artifacts.resolved', refs: resolved });
    } else {
      ctx.note('no wanted args given');
    }
    return next();
  };
  return {
    name: 'wants',
    after: ['validate-args'],
    transformsArgs: true,
    fingerprint: store === undefined ? 'no store' : 'store',
    checkTool(tool) {
      if (tool.wants !== undefined && Object.keys(tool.wants).length > 0 && store === undefined) {
        return `it wants artifacts (${Object.keys(tool.wants).join(', ')}) but the chain has no artifact store; pass 'artifacts' to canonicalChain`;
      }
      return undefined;
    },
    passThrough: (tool) =>
      Object.keys(tool.wants ?? {}).length === 0 || store === undefined ? NO_WANTED_ARGS : undefined,
    // A tool that wants nothing passes without an async frame; only resolving refs awaits.
    run: function wants(ctx, next) {
      const wanted = Object.entries(ctx.tool.wants ?? {});
      if (wanted.length === 0 || store === undefined) {
        ctx.note('no wanted args');
        return next();
      }
      return resolve(store, wanted, ctx, next);
    },
  };
}
