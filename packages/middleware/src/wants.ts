// The wants gate: a tool declares `wants: { arg: kind }`; the model passes an `art_…` ref; the gate
// resolves it in the caller's own scope, checks its kind and swaps the data into the args.

import {
  isArtifactRef,
  refusalReason,
  scopeOf,
  withDeadline,
  type ArtifactMeta,
  type ArtifactScope,
  type ArtifactStore,
  type Middleware,
  type Next,
  type StoredArtifact,
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

function isRequired(ctx: ToolMiddlewareContext, arg: string): boolean {
  const required = ctx.tool.schema.inputSchema['required'];
  return Array.isArray(required) && required.includes(arg);
}

/** One call's lookups: the store, the caller's scope, and how long each store call may take. */
interface Lookup {
  readonly store: ArtifactStore;
  readonly scope: ArtifactScope;
  readonly ctx: ToolMiddlewareContext;
  readonly deadlineMs: number;
}

function storeFailed(ctx: ToolMiddlewareContext, arg: string, kind: string): never {
  ctx.emit({ type: 'artifacts.refused', arg, wantedKind: kind, failure: 'store failed' });
  return ctx.deny(
    refusalReason(
      `'${ctx.toolName}' could not read the artifact for '${arg}' because the artifact store is unavailable`,
      'Retrying later may help',
    ),
    { code: 'ARTIFACT_STORE_FAILED', retryable: true },
  );
}

/** The sentence listing up to 10 live refs of `kind` in the caller's scope. */
async function liveRefs(look: Lookup, arg: string, kind: string): Promise<string> {
  const { store, scope, ctx, deadlineMs } = look;
  let live: ArtifactMeta[];
  try {
    live = await withDeadline(() => store.list(scope, kind, LISTED_REFS), deadlineMs, ctx.signal);
    if (!isArtifactMetaList(live)) throw new TypeError('the store answered list with something else');
  } catch {
    return storeFailed(ctx, arg, kind);
  }
  const refs = live.slice(0, LISTED_REFS).map((meta) => meta.ref);
  return refs.length === 0
    ? refusalReason(
        `There is no live '${kind}' artifact in this conversation`,
        'Create one first, then call it again',
      )
    : refusalReason(`Live '${kind}' artifacts: ${refs.join(', ')}`, 'Call it again with one of those refs');
}

interface RefRefusal {
  readonly arg: string;
  readonly kind: string;
  readonly what: string;
  readonly code: string;
  readonly failure: string;
  readonly ref?: string | undefined;
}

// The listing is read before the event, so a store failing mid-refusal files one event, not two.
async function refuseRef(look: Lookup, r: RefRefusal): Promise<never> {
  const listing = await liveRefs(look, r.arg, r.kind);
  look.ctx.emit({
    type: 'artifacts.refused',
    arg: r.arg,
    wantedKind: r.kind,
    ...(r.ref !== undefined ? { ref: r.ref } : {}),
    failure: r.failure,
  });
  return look.ctx.deny(refusalReason(r.what, listing), { code: r.code });
}

/** The artifact `value` refers to, or the refusal (thrown) when it is not a live one of `kind`. */
async function lookUp(look: Lookup, arg: string, kind: string, value: unknown): Promise<StoredArtifact> {
  const { store, scope, ctx, deadlineMs } = look;
  let found: StoredArtifact | undefined;
  try {
    found = isArtifactRef(value)
      ? await withDeadline(() => store.get(scope, value), deadlineMs, ctx.signal)
      : undefined;
    if (found !== undefined && !isStoredArtifact(found, value as string))
      throw new TypeError('the store answered get with something else');
  } catch {
    return storeFailed(ctx, arg, kind);
  }
  if (found !== undefined && found.meta.kind === kind) return found;
  // Unknown, expired and other-scope refs read alike; only a wrong kind in the caller's own scope is named.
  const ref = isArtifactRef(value) ? value : undefined;
  return found === undefined
    ? refuseRef(look, {
        arg,
        kind,
        what: `'${arg}' does not refer to a live '${kind}' artifact`,
        code: 'ARTIFACT_NOT_FOUND',
        failure: 'not found',
        ref,
      })
    : refuseRef(look, {
        arg,
        kind,
        what: `'${arg}' refers to an artifact of kind '${found.meta.kind}', but '${ctx.toolName}' needs kind '${kind}'`,
        code: 'ARTIFACT_WRONG_KIND',
        failure: 'wrong kind',
        ref,
      });
}

async function resolveWanted(look: Lookup, wanted: readonly [string, string][], next: Next): Promise<void> {
  const { ctx } = look;
  const resolved: { arg: string; ref: string; kind: string }[] = [];
  const args: Record<string, unknown> = { ...ctx.args };
  for (const [arg, kind] of wanted) {
    const value = args[arg];
    if (value === undefined) {
      if (!isRequired(ctx, arg)) continue;
      return refuseRef(look, {
        arg,
        kind,
        what: `'${ctx.toolName}' needs '${arg}': an artifact ref of kind '${kind}'`,
        code: 'ARTIFACT_MISSING',
        failure: 'missing',
      });
    }
    const found = await lookUp(look, arg, kind, value);
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
      return resolveWanted({ store, scope: scopeOf(ctx.identity), ctx, deadlineMs }, wanted, next);
    },
  };
}
