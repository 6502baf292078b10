// Standing grants: a person approves "this tool, for this principal, with arguments within these
// bounds, for N calls or until T" once, instead of the same question every time (consent fatigue).
// A grant only answers the ask: every call it covers still runs the whole chain, so policy and every
// gate judge it. Bounds are checked against the call the person was shown and can only narrow it.

import { canonicalJson } from './canonical';
import type { CheckInRequest } from './check-in';
import { newId } from './ids';

/**
 * What one argument may be under a grant, at most what the shown call had:
 * - `equals`: exactly the shown value;
 * - `atMost`: a number no greater than this (itself at most the shown number), and not below zero
 *   when the shown number was not;
 * - `oneOf`: one of these values (or, for a list, a list of them), each one the shown value or an
 *   item of the shown list.
 */
export type GrantBound =
  { readonly equals: unknown } | { readonly atMost: number } | { readonly oneOf: readonly unknown[] };

export interface StandingGrant {
  readonly id: string;
  readonly tenant?: string;
  readonly principal?: string;
  readonly toolName: string;
  readonly toolSource?: string;
  /** The middleware whose ask this grant answers, and the chain it asked in. */
  readonly asker: string;
  readonly chainId: string;
  /** Every top-level argument of the shown call, each with its bound; a call with other arguments is not covered. */
  readonly bounds: Readonly<Record<string, GrantBound>>;
  /** Calls it may answer; absent: until it expires. */
  readonly maxUses?: number;
  readonly uses: number;
  readonly expiresAt: string;
  /** The digest of the tool's definition when it was granted: a changed definition voids it. */
  readonly definitionDigest: string;
  /** The check-in it was granted from, and who granted it. */
  readonly fromCheckIn: string;
  readonly createdBy: string;
  readonly createdAt: string;
  readonly note?: string;
  readonly revoked?: boolean;
}

export interface StandingGrantFilter {
  readonly tenant?: string;
  readonly principal?: string;
  readonly toolName?: string;
  /** true: only grants that can still answer a call (not revoked, not used up, not expired). */
  readonly active?: boolean;
}

/**
 * Where standing grants live. `use` is the single-use point: it counts one call against a grant
 * atomically, and answers false once the grant is revoked, used up or expired; a store shared by
 * several processes must keep that promise across them.
 */
export interface StandingGrantStore {
  create(grant: StandingGrant): Promise<void>;
  get(id: string): Promise<StandingGrant | undefined>;
  list(filter?: StandingGrantFilter): Promise<StandingGrant[]>;
  use(id: string): Promise<boolean>;
  revoke(id: string): Promise<boolean>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const same = (a: unknown, b: unknown): boolean => {
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch {
    return false;
  }
};

/** The bound `value` as given by a person or a script, or the reason it is not one. */
function boundOf(value: unknown): GrantBound | string {
  if (!isPlainObject(value)) return 'must be { equals } , { atMost } or { oneOf }';
  const keys = Object.keys(value);
  if (keys.length !== 1) return 'must be exactly one of { equals }, { atMost }, { oneOf }';
  if ('equals' in value) return { equals: value['equals'] };
  if ('atMost' in value) {
    const max = value['atMost'];
    return typeof max === 'number' && Number.isFinite(max) ? { atMost: max } : "'atMost' must be a number";
  }
  if ('oneOf' in value) {
    const list = value['oneOf'];
    return Array.isArray(list) && list.length > 0 ? { oneOf: [...list] } : "'oneOf' must be a non-empty list";
  }
  return 'must be { equals }, { atMost } or { oneOf }';
}

/**
 * The bounds a grant would have for `shown` (the args the person saw, a request's `review`), or the
 * problems that refuse it: a bound wider than the shown value, an unknown argument, a malformed
 * bound. An argument without a bound must equal the shown value.
 */
export function grantBounds(
  shown: Readonly<Record<string, unknown>>,
  given: unknown,
): { readonly bounds: Readonly<Record<string, GrantBound>> } | { readonly problems: readonly string[] } {
  const problems: string[] = [];
  const requested = given === undefined ? {} : given;
  if (!isPlainObject(requested)) return { problems: ["'bounds' must be an object of argument → bound"] };
  for (const name of Object.keys(requested))
    if (!Object.hasOwn(shown, name)) problems.push(`'${name}' is not an argument of the call shown`);
  const bounds: Record<string, GrantBound> = {};
  for (const name of Object.keys(shown)) {
    const value = shown[name];
    const bound = Object.hasOwn(requested, name) ? boundOf(requested[name]) : { equals: value };
    if (typeof bound === 'string') {
      problems.push(`'${name}' ${bound}`);
      continue;
    }
    if ('equals' in bound && !same(bound.equals, value))
      problems.push(`'${name}' must equal the value shown; a grant never widens the call`);
    if ('atMost' in bound) {
      if (typeof value !== 'number') problems.push(`'${name}' is not a number, so it has no 'atMost'`);
      else if (bound.atMost > value)
        problems.push(`'${name}' at most ${bound.atMost} is wider than the ${value} shown`);
    }
    if ('oneOf' in bound) {
      const items = Array.isArray(value) ? value : [value];
      for (const option of bound.oneOf)
        if (!items.some((item) => same(item, option)))
          problems.push(`'${name}' one of … lists a value the call shown did not have`);
    }
    bounds[name] = bound;
  }
  return problems.length > 0 ? { problems: [...new Set(problems)] } : { bounds };
}

/** Whether `args` (a request's `review`) are within `bounds`: the same argument names, each value in its bound. */
export function withinBounds(
  bounds: Readonly<Record<string, GrantBound>>,
  args: Readonly<Record<string, unknown>>,
): boolean {
  const names = Object.keys(bounds);
  if (Object.keys(args).length !== names.length) return false;
  for (const name of names) {
    if (!Object.hasOwn(args, name)) return false;
    const bound = bounds[name]!;
    const value = args[name];
    if ('equals' in bound) {
      if (!same(bound.equals, value)) return false;
    } else if ('atMost' in bound) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value > bound.atMost) return false;
      if (bound.atMost >= 0 && value < 0) return false;
    } else {
      const items = Array.isArray(value) ? value : [value];
      if (Array.isArray(value) && value.length === 0) return false;
      if (!items.every((item) => bound.oneOf.some((option) => same(item, option)))) return false;
    }
  }
  return true;
}

/** Whether `grant` may answer `request` now: same caller, tool, asker and chain, args within bounds, definition unchanged. */
export function grantCovers(
  grant: StandingGrant,
  request: CheckInRequest,
  definitionDigest: string | undefined,
  now: number,
): boolean {
  return (
    grant.revoked !== true &&
    Date.parse(grant.expiresAt) > now &&
    (grant.maxUses === undefined || grant.uses < grant.maxUses) &&
    grant.tenant === request.identity?.tenant &&
    grant.principal === request.identity?.principal &&
    grant.toolName === request.toolName &&
    grant.toolSource === request.toolSource &&
    grant.asker === request.asker &&
    grant.chainId === request.chainId &&
    definitionDigest !== undefined &&
    grant.definitionDigest === definitionDigest &&
    withinBounds(grant.bounds, request.review)
  );
}

/** A new grant for the call `request` asked about, with checked bounds; a TypeError lists what refuses it. */
export function standingGrantFor(
  request: CheckInRequest,
  input: {
    readonly bounds?: unknown;
    readonly maxUses?: number;
    readonly expiresAt: string;
    readonly definitionDigest: string;
    readonly createdBy: string;
    readonly note?: string;
    readonly now?: number;
  },
): StandingGrant {
  const checked = grantBounds(request.review, input.bounds);
  if ('problems' in checked) throw new TypeError(checked.problems.join('; '));
  if (input.maxUses !== undefined && !(Number.isInteger(input.maxUses) && input.maxUses > 0))
    throw new TypeError("'uses' must be a positive whole number");
  const expires = Date.parse(input.expiresAt);
  if (Number.isNaN(expires) || expires <= (input.now ?? Date.now()))
    throw new TypeError("'until' must be a time in the future");
  return {
    id: newId('grt'),
    ...(request.identity?.tenant !== undefined ? { tenant: request.identity.tenant } : {}),
    ...(request.identity?.principal !== undefined ? { principal: request.identity.principal } : {}),
    toolName: request.toolName,
    ...(request.toolSource !== undefined ? { toolSource: request.toolSource } : {}),
    asker: request.asker,
    chainId: request.chainId,
    bounds: checked.bounds,
    ...(input.maxUses !== undefined ? { maxUses: input.maxUses } : {}),
    uses: 0,
    expiresAt: new Date(expires).toISOString(),
    definitionDigest: input.definitionDigest,
    fromCheckIn: request.id,
    createdBy: input.createdBy,
    createdAt: new Date(input.now ?? Date.now()).toISOString(),
    ...(input.note !== undefined ? { note: input.note } : {}),
  };
}

/** Whether `grant` can still answer a call at `now`. */
export const grantActive = (grant: StandingGrant, now: number): boolean =>
  grant.revoked !== true &&
  Date.parse(grant.expiresAt) > now &&
  (grant.maxUses === undefined || grant.uses < grant.maxUses);

/** A `StandingGrantStore` in this process's memory: lost on restart. */
export function inMemoryStandingGrants(options: { readonly now?: () => number } = {}): StandingGrantStore {
  const now = options.now ?? Date.now;
  const grants = new Map<string, StandingGrant>();
  const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
  return {
    async create(grant) {
      if (grants.has(grant.id)) throw new Error(`inMemoryStandingGrants: grant '${grant.id}' exists`);
      grants.set(grant.id, copy(grant));
    },
    async get(id) {
      const grant = grants.get(id);
      return grant === undefined ? undefined : copy(grant);
    },
    async list(filter = {}) {
      return [...grants.values()]
        .filter(
          (grant) =>
            (filter.tenant === undefined || grant.tenant === filter.tenant) &&
            (filter.principal === undefined || grant.principal === filter.principal) &&
            (filter.toolName === undefined || grant.toolName === filter.toolName) &&
            (filter.active === undefined || grantActive(grant, now()) === filter.active),
        )
        .map(copy);
    },
    async use(id) {
      const grant = grants.get(id);
      if (grant === undefined || !grantActive(grant, now())) return false;
      grants.set(id, { ...grant, uses: grant.uses + 1 });
      return true;
    },
    async revoke(id) {
      const grant = grants.get(id);
      if (grant === undefined || grant.revoked === true) return false;
      grants.set(id, { ...grant, revoked: true });
      return true;
    },
  };
}
