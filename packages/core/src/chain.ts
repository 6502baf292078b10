// The chain: an immutable, ordered list of named middleware, checked for order at every build
// and composed with koa-compose once per chain, never per call.

import type { CheckInStore } from './check-in';
import { inMemoryCheckIns } from './check-in';
import { createSigner, shortHash, type Signer } from './canonical';
import { DEFAULT_DEADLINE_MS } from './deadline';
import type { Identity } from './identity';
import type { ToolMiddlewareContext } from './middleware-context';
import { buildPlan, type Composed, type PassThrough, type Plan, type Wrap } from './plan';
import type { Tool } from './tool';

/** `next` as koa-compose hands it to a middleware. */
export type Next = () => Promise<void>;

export interface Middleware {
  /** kebab-case; a built-in gate's name equals its `CANONICAL_ORDER` entry. */
  readonly name: string;
  run(ctx: ToolMiddlewareContext, next: Next): Promise<void>;
  /** Must stand after these (vacuous when one is absent). */
  readonly after?: readonly string[];
  /** Must stand before these. */
  readonly before?: readonly string[];
  /** Must be the last middleware before the executor. */
  readonly innermost?: boolean;
  /** Changes args: `validate-args` must come after it, unless it declares `after: ['validate-args']`. */
  readonly transformsArgs?: boolean;
  /** Its configuration in a few words, folded into `chainId`. */
  readonly fingerprint?: string;
  /**
   * Tool declarations it enforces (`'egress'`, `'paths'`): a tool that makes one of these declarations is
   * refused at dispatcher build by a chain where no middleware honors it.
   */
  readonly honors?: readonly string[];
  /** Build-time: why this middleware cannot serve `tool` in `chain`, or undefined when it can. */
  checkTool?(tool: Tool, chain: Chain): string | undefined;
  /**
   * Build-time: when this middleware has nothing to decide for `tool` in `chain`, the pass it would
   * file on every call of it (its ledger `why` and gate events); undefined when it must run. A per-tool
   * plan leaves it out of the onion and files that pass in its place. Absent: it always runs.
   */
  passThrough?(tool: Tool, chain: Chain): PassThrough | undefined;
  /**
   * Build-time: whether this middleware may call `ctx.requireCheckIn` on calls of `tool`, so the gate
   * that asks (check-in) is never planned out of that tool's onion. Absent: it never does.
   */
  requiresCheckIn?(tool: Tool, chain: Chain): boolean;
  /**
   * List-time: true when this middleware refuses every call of `tool` by `identity`, whatever the
   * args, so tool lists (`mcpServe`'s tools/list) leave it out. Calls stay governed either way.
   */
  hides?(tool: Tool, identity: Identity | undefined): boolean;
}

/**
 * The tools `identity` may see in a list: those no middleware of `chain` refuses it whatever the
 * args. A `hides` that throws hides the tool: a list never shows more than calls could do.
 */
export function listableTools<T extends Tool>(
  tools: readonly T[],
  chain: Chain,
  identity: Identity | undefined,
): T[] {
  const hiders = chain.middleware.filter((m) => typeof m.hides === 'function');
  if (hiders.length === 0) return [...tools];
  return tools.filter(
    (tool) =>
      !hiders.some((m) => {
        try {
          return m.hides?.(tool, identity) === true;
        } catch {
          return true;
        }
      }),
  );
}

/**
 * Whether some middleware of `chain` may require a check-in on calls of `tool`. A declaration that
 * throws counts as yes: planning the asker out would only turn that call into a refusal.
 */
export function mayRequireCheckIn(tool: Tool, chain: Chain): boolean {
  return chain.middleware.some((m) => {
    try {
      return m.requiresCheckIn?.(tool, chain) === true;
    } catch {
      return true;
    }
  });
}

/** The canonical order of the built-in gates. User policy goes just before `validate-args`. */
export const CANONICAL_ORDER: readonly string[] = Object.freeze([
  'permission',
  'capabilities',
  'validate-args',
  'wants',
  'check-in',
  'credentials',
  'result-ceiling',
]);

/** Where `use` inserts in a canonical chain: policy middleware runs before args are validated. */
export const POLICY_ANCHOR = 'validate-args';

const VALIDATE_ARGS = 'validate-args';
const KEBAB_CASE = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** One broken ordering constraint. */
export interface OrderViolation {
  readonly middleware: string;
  readonly other: string;
  readonly reason: string;
}

/** A builder verb produced an order that breaks a declared constraint. Names both middleware. */
export class ChainOrderError extends Error {
  override readonly name = 'ChainOrderError';
  readonly code = 'ERR_CHAIN_ORDER';
  constructor(readonly violations: readonly OrderViolation[]) {
    super(
      `${violations.map((v) => `'${v.middleware}' and '${v.other}': ${v.reason}`).join('; ')}. ` +
        `Reorder them, or pass { unsafeOrder: 'why' } as the verb's last argument.`,
    );
  }
}

/** A middleware list that cannot form a chain at all (bad name, duplicate, missing `run`). */
export class ChainConfigError extends Error {
  override readonly name = 'ChainConfigError';
  readonly code = 'ERR_CHAIN_CONFIG';
}

/** The last argument of a builder verb that may break order on purpose. */
export interface UnsafeOrder {
  readonly unsafeOrder: string;
}

export interface PauseServiceOptions {
  /** HMAC key for signing check-in requests and receipts. */
  readonly key: string | Uint8Array;
  readonly store?: CheckInStore;
  /** Request lifetime; default 15 minutes. */
  readonly ttlMs?: number;
  /** How long each store call may take before the call is refused; default 5000 ms. */
  readonly deadlineMs?: number;
}

/** What `ctx.ask` signs with and stores into. Shared by every chain derived from the same base. */
export interface PauseService {
  readonly signer: Signer;
  readonly store: CheckInStore;
  readonly ttlMs: number;
  readonly deadlineMs: number;
}

export interface CreateChainOptions {
  readonly checkIns?: PauseServiceOptions;
  /** Explicit reason to accept an order that breaks declared constraints. */
  readonly unsafeOrder?: string;
  /** Name before which `use` inserts; default: at the end, before any innermost middleware. */
  readonly policyAnchor?: string;
}

export interface MiddlewareDescription {
  readonly position: number;
  readonly name: string;
  readonly after?: readonly string[];
  readonly before?: readonly string[];
  readonly innermost?: true;
  readonly transformsArgs?: true;
  readonly fingerprint?: string;
}

export const DEFAULT_CHECK_IN_TTL_MS = 15 * 60 * 1000;

/** An immutable, ordered list of named middleware. Builder verbs return new chains. */
export class Chain {
  readonly #middleware: readonly Middleware[];
  readonly #pauseService: PauseService | undefined;
  readonly #policyAnchor: string | undefined;
  readonly #acceptedViolations: ReadonlySet<string>;
  #id: string | undefined;
  // Plans per tool, and the onions they share by which middleware run: a chain and a frozen tool never
  // change, so neither is ever invalidated, and a WeakMap lets both go with the tool.
  readonly #plans = new WeakMap<Tool, Plan>();
  readonly #onions = new Map<string, Composed>();

  /** @internal Use `createChain`. */
  constructor(
    middleware: readonly Middleware[],
    pauseService: PauseService | undefined,
    policyAnchor: string | undefined,
    acceptedViolations: ReadonlySet<string>,
  ) {
    this.#middleware = middleware;
    this.#pauseService = pauseService;
    this.#policyAnchor = policyAnchor;
    this.#acceptedViolations = acceptedViolations;
  }

  /** A short, stable hash of the middleware names and fingerprints in order. */
  get id(): string {
    if (this.#id === undefined) {
      // JSON keeps names and free-form fingerprints apart, so no fingerprint can spell out another middleware.
      const text = JSON.stringify(this.#middleware.map((m) => [m.name, m.fingerprint ?? '']));
      this.#id = `chain_${shortHash(text)}`;
    }
    return this.#id;
  }

  get middleware(): readonly Middleware[] {
    return this.#middleware;
  }

  /** The store the chain's pause service keeps check-ins in, when it has one. */
  get checkInStore(): CheckInStore | undefined {
    return this.#pauseService?.store;
  }

  /** Whether `ctx.ask` can pause a call in this chain (it has a check-in key). */
  get canPause(): boolean {
    return this.#pauseService !== undefined;
  }

  /** @internal The pause service `ctx.ask` signs with. */
  pauseService(): PauseService | undefined {
    return this.#pauseService;
  }

  names(): string[] {
    return this.#middleware.map((m) => m.name);
  }

  has(name: string): boolean {
    return this.#middleware.some((m) => m.name === name);
  }

  get(name: string): Middleware | undefined {
    return this.#middleware.find((m) => m.name === name);
  }

  describe(): MiddlewareDescription[] {
    return this.#middleware.map((m, position) => ({
      position,
      name: m.name,
      ...(m.after?.length ? { after: [...m.after] } : {}),
      ...(m.before?.length ? { before: [...m.before] } : {}),
      ...(m.innermost ? { innermost: true as const } : {}),
      ...(m.transformsArgs ? { transformsArgs: true as const } : {}),
      ...(m.fingerprint !== undefined ? { fingerprint: m.fingerprint } : {}),
    }));
  }

  /**
   * Inserts at the policy anchor: before it in a canonical chain (right after it, for middleware that
   * declares it must stand after the anchor), else last before any innermost middleware.
   */
  use(middleware: Middleware, unsafe?: UnsafeOrder): Chain {
    const list = [...this.#middleware];
    const anchor = this.#policyAnchor;
    let at = anchor === undefined ? -1 : list.findIndex((m) => m.name === anchor);
    // A policy that reads validated args declares after: [anchor]; "just before" would break its order.
    if (at !== -1 && anchor !== undefined && middleware?.after?.includes(anchor) === true) at += 1;
    if (at === -1) {
      at = list.findIndex((m) => m.innermost === true);
      if (at === -1) at = list.length;
    }
    list.splice(at, 0, middleware);
    return this.#derive(list, unsafe);
  }

  insertBefore(name: string, middleware: Middleware, unsafe?: UnsafeOrder): Chain {
    const list = [...this.#middleware];
    list.splice(this.#indexOf(name, 'insertBefore'), 0, middleware);
    return this.#derive(list, unsafe);
  }

  insertAfter(name: string, middleware: Middleware, unsafe?: UnsafeOrder): Chain {
    const list = [...this.#middleware];
    list.splice(this.#indexOf(name, 'insertAfter') + 1, 0, middleware);
    return this.#derive(list, unsafe);
  }

  replace(name: string, middleware: Middleware, unsafe?: UnsafeOrder): Chain {
    const list = [...this.#middleware];
    list.splice(this.#indexOf(name, 'replace'), 1, middleware);
    return this.#derive(list, unsafe);
  }

  remove(name: string, unsafe?: UnsafeOrder): Chain {
    const list = [...this.#middleware];
    list.splice(this.#indexOf(name, 'remove'), 1);
    return this.#derive(list, unsafe);
  }

  /** @internal The plan for `tool`'s calls, built on its first call and kept for the chain's lifetime. */
  planFor(tool: Tool, wrap: Wrap): Plan {
    let plan = this.#plans.get(tool);
    if (plan === undefined) {
      plan = buildPlan(this, tool, wrap, this.#onions);
      this.#plans.set(tool, plan);
    }
    return plan;
  }

  toJSON(): { id: string; middleware: MiddlewareDescription[] } {
    return { id: this.id, middleware: this.describe() };
  }

  #indexOf(name: string, verb: string): number {
    const index = this.#middleware.findIndex((m) => m.name === name);
    if (index === -1) {
      throw new ChainConfigError(
        `chain.${verb}: no middleware named '${name}'; the chain has ${this.names().join(', ') || 'none'}.`,
      );
    }
    return index;
  }

  #derive(list: Middleware[], unsafe: UnsafeOrder | undefined): Chain {
    return buildChain(
      list,
      this.#pauseService,
      this.#policyAnchor,
      this.#acceptedViolations,
      unsafe?.unsafeOrder,
    );
  }
}

/** 'tenantPolicy' → 'tenant-policy', 'Tenant_Policy' → 'tenant-policy'. */
function kebabCase(name: string): string {
  const kebab = name
    .slice(0, 64)
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase();
  return KEBAB_CASE.test(kebab) ? kebab : 'tenant-policy';
}

function assertMiddleware(middleware: unknown, index: number): asserts middleware is Middleware {
  const m = middleware as Partial<Middleware> | null;
  if (typeof m !== 'object' || m === null) {
    throw new ChainConfigError(
      `createChain: middleware #${index} must be an object { name, run }; got ${m === null ? 'null' : typeof m}.`,
    );
  }
  if (typeof m.name !== 'string' || !KEBAB_CASE.test(m.name)) {
    // Name it by what was given, so a 'tenantPolicy' is found by its name, not its position.
    const given =
      typeof m.name === 'string' && m.name !== ''
        ? `'${m.name.slice(0, 64)}' (#${index})`
        : `#${index} (it has no name)`;
    const suggestion = typeof m.name === 'string' && m.name !== '' ? kebabCase(m.name) : 'tenant-policy';
    throw new ChainConfigError(
      `createChain: middleware ${given} needs a kebab-case 'name', e.g. '${suggestion}'.`,
    );
  }
  if (typeof m.run !== 'function') {
    throw new ChainConfigError(`createChain: middleware '${m.name}' needs a 'run(ctx, next)' function.`);
  }
  for (const field of ['after', 'before'] as const) {
    const names = m[field];
    if (names !== undefined && (!Array.isArray(names) || names.some((n) => typeof n !== 'string'))) {
      throw new ChainConfigError(
        `createChain: middleware '${m.name}': '${field}' must be an array of middleware names.`,
      );
    }
  }
}

/** Every broken constraint of `list`, each keyed for comparison with a base chain's accepted ones. */
export function orderViolations(list: readonly Middleware[]): OrderViolation[] {
  const position = new Map(list.map((m, i) => [m.name, i]));
  const violations: OrderViolation[] = [];
  const validateAt = position.get(VALIDATE_ARGS);
  list.forEach((m, i) => {
    for (const name of m.after ?? []) {
      const j = position.get(name);
      if (j !== undefined && j > i)
        violations.push({
          middleware: m.name,
          other: name,
          reason: `'${m.name}' must stand after '${name}'`,
        });
    }
    for (const name of m.before ?? []) {
      const j = position.get(name);
      if (j !== undefined && j < i)
        violations.push({
          middleware: m.name,
          other: name,
          reason: `'${m.name}' must stand before '${name}'`,
        });
    }
    if (m.innermost && i !== list.length - 1) {
      const last = list[list.length - 1]!;
      violations.push({
        middleware: m.name,
        other: last.name,
        reason: `'${m.name}' must be innermost, but '${last.name}' stands after it`,
      });
    }
    const validatesItself = m.after?.includes(VALIDATE_ARGS) ?? false;
    if (
      m.transformsArgs &&
      m.name !== VALIDATE_ARGS &&
      !validatesItself &&
      validateAt !== undefined &&
      validateAt < i
    ) {
      violations.push({
        middleware: m.name,
        other: VALIDATE_ARGS,
        reason: `'${m.name}' transforms args, so '${VALIDATE_ARGS}' must come after it to judge the args that will run`,
      });
    }
  });
  return violations;
}

const violationKey = (v: OrderViolation) => `${v.middleware}|${v.other}|${v.reason}`;

function buildChain(
  list: Middleware[],
  pauseService: PauseService | undefined,
  policyAnchor: string | undefined,
  accepted: ReadonlySet<string>,
  unsafeOrder: string | undefined,
): Chain {
  list.forEach(assertMiddleware);
  const seen = new Set<string>();
  for (const m of list) {
    if (seen.has(m.name))
      throw new ChainConfigError(`createChain: two middleware are named '${m.name}'; names must be unique.`);
    seen.add(m.name);
  }
  if (unsafeOrder !== undefined && (typeof unsafeOrder !== 'string' || unsafeOrder.trim() === '')) {
    throw new ChainConfigError(`unsafeOrder must be a non-empty reason explaining why the order is safe.`);
  }
  const violations = orderViolations(list);
  const fresh = violations.filter((v) => !accepted.has(violationKey(v)));
  if (fresh.length > 0 && unsafeOrder === undefined) throw new ChainOrderError(fresh);
  // Violations accepted once stay accepted in derived chains; new ones need their own reason.
  const stillAccepted = new Set(violations.map(violationKey));
  return new Chain(Object.freeze(list), pauseService, policyAnchor, stillAccepted);
}

// An HMAC key shorter than the hash's output weakens every signature made with it.
const MIN_KEY_BYTES = 32;

/** A key's length in bytes (a string as UTF-8), or undefined when it is neither string nor bytes. */
function keyBytes(key: unknown): number | undefined {
  if (typeof key === 'string') return new TextEncoder().encode(key).length;
  return key instanceof Uint8Array ? key.length : undefined;
}

function pauseServiceOf(options: PauseServiceOptions | undefined): PauseService | undefined {
  if (options === undefined) return undefined;
  const { key, ttlMs = DEFAULT_CHECK_IN_TTL_MS, deadlineMs = DEFAULT_DEADLINE_MS } = options;
  const bytes = keyBytes(key);
  if (bytes === undefined || bytes < MIN_KEY_BYTES) {
    throw new ChainConfigError(
      `createChain: checkIns.key (canonicalChain's checkInKey) must be a string or Uint8Array of at least ${MIN_KEY_BYTES} bytes; ` +
        `got ${bytes === undefined ? 'neither' : `${bytes} byte${bytes === 1 ? '' : 's'}`}. A short key can be guessed and approvals forged: ` +
        `use a random secret, e.g. 32 random bytes as hex, kept in a secret store.`,
    );
  }
  if (!Number.isInteger(ttlMs) || ttlMs <= 0) {
    throw new ChainConfigError(
      `createChain: checkIns.ttlMs must be a positive integer of milliseconds; got ${String(ttlMs)}.`,
    );
  }
  if (!Number.isInteger(deadlineMs) || deadlineMs <= 0) {
    throw new ChainConfigError(
      `createChain: checkIns.deadlineMs must be a positive integer of milliseconds; got ${String(deadlineMs)}.`,
    );
  }
  // The dispatcher judges expiry with its own (injectable) clock before it consumes, so the default
  // store defers to it rather than to the wall clock.
  const store = options.store ?? inMemoryCheckIns({ now: () => Number.NEGATIVE_INFINITY });
  return { signer: createSigner(key), store, ttlMs, deadlineMs };
}

/**
 * Builds a chain from any list of middleware, checking every declared order constraint.
 *
 * @example
 * const chain = createChain([audit, tenantPolicy], { checkIns: { key: process.env.CHECKIN_KEY! } });
 */
export function createChain(middleware: readonly Middleware[], options: CreateChainOptions = {}): Chain {
  if (!Array.isArray(middleware)) throw new ChainConfigError(`createChain: expected an array of middleware.`);
  return buildChain(
    [...middleware],
    pauseServiceOf(options.checkIns),
    options.policyAnchor,
    new Set(),
    options.unsafeOrder,
  );
}

export function isChain(value: unknown): value is Chain {
  return value instanceof Chain;
}
