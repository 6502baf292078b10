// The egress guard: arguments that name where a tool connects (declared `egress`, or a `uri`/
// `hostname` format in the schema) must point to the public internet, and, when an allow-list
// applies to the tenant, to a host on it. Stops server-side request forgery through the model:
// cloud metadata, loopback services, the internal network, in any spelling the URL parser accepts.

import {
  DeadlineError,
  DEFAULT_DEADLINE_MS,
  refusalReason,
  shortHash,
  withDeadline,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { isIpLiteral, privateKind, type PrivateKind } from './internal/addresses';
import { destinationOf, type DestinationKind } from './internal/destinations';
import { assertDeadline } from './internal/consult';
import { itemsAt, pathsWithFormat } from './internal/values';
import { destinationShape, hostOfShape, stringValues } from './internal/value-shapes';

/** Resolves a host name to its addresses (IPv4 dotted quads or IPv6). Node: see docs/guards.md. */
export type EgressResolver = (
  hostname: string,
  options: { readonly signal: AbortSignal },
) => Promise<readonly string[]>;

export interface EgressGuardOptions {
  /** Hosts calls may reach: `'api.example.com'`, `'*.example.com'` (any subdomain), a public IP. Absent: any public host. */
  readonly allowHosts?: readonly string[];
  /** Per tenant (`identity.tenant`): an allow-list that replaces `allowHosts` for that tenant's calls. */
  readonly tenants?: Readonly<Record<string, { readonly allowHosts?: readonly string[] }>>;
  /** URL schemes a URL argument may use; default `['http', 'https']`. */
  readonly schemes?: readonly string[];
  /** Resolves names, so a name that resolves to a private address is refused too. None: names are judged as written. */
  readonly resolve?: EgressResolver;
  /** How long `resolve` may take; default 5000 ms. */
  readonly deadlineMs?: number;
  /** Judge arguments whose schema says `format: 'uri'`, `'hostname'`, … even when the tool declares no `egress`; default true. */
  readonly detectFormats?: boolean;
  /** Also judge every argument value shaped like a URL or a bare address, declared or not (imported tools declare nothing); default true. */
  readonly values?: boolean;
}

/** What the guard leaves in `ctx.state.egress` for the tool: each judged argument's host and checked addresses. */
export interface EgressChecked {
  readonly host: string;
  /** The addresses the resolver returned and the guard checked (connect to these to avoid a second lookup). */
  readonly addresses?: readonly string[];
}

declare module '@toolgate/core' {
  interface ToolState {
    egress?: Record<string, EgressChecked>;
  }
}

const FORMATS = new Map<string, DestinationKind>([
  ['uri', 'url'],
  ['url', 'url'],
  ['iri', 'url'],
  ['uri-reference', 'reference'],
  ['iri-reference', 'reference'],
  ['uri-template', 'reference'],
  ['hostname', 'host'],
  ['idn-hostname', 'host'],
  ['ipv4', 'host'],
  ['ipv6', 'host'],
]);
const FORMAT_NAMES = new Set(FORMATS.keys());

interface Target {
  readonly path: string;
  readonly kind: DestinationKind;
}

const KIND_WORDS: Record<PrivateKind, string> = {
  loopback: 'a loopback address (this machine)',
  'link-local': 'a link-local address (where cloud metadata services answer)',
  private: 'a private network address',
  unspecified: 'the unspecified address (all zeros), which means this machine',
  reserved: 'a reserved address that is not on the public internet',
  'local-name': 'a name that only resolves inside a local network',
};

/** One allow-list entry, normalized by the URL parser: `{ host }` exact or `{ suffix }` for `*.` entries. */
type HostRule = { readonly host: string } | { readonly suffix: string };

function hostRules(list: readonly string[] | undefined, where: string): readonly HostRule[] | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new TypeError(`egressGuard: ${where} must be an array of host names.`);
  return list.map((entry: unknown) => {
    const wildcard = typeof entry === 'string' && entry.startsWith('*.');
    const name = typeof entry === 'string' ? (wildcard ? entry.slice(2) : entry) : '';
    const read = destinationOf(name, 'host', new Set());
    if (!read.ok || read.host === undefined)
      throw new TypeError(
        `egressGuard: ${where} has ${JSON.stringify(entry)}, which is not a host name; write 'example.com' or '*.example.com'.`,
      );
    return wildcard ? { suffix: `.${read.host}` } : { host: read.host };
  });
}

const allowed = (rules: readonly HostRule[], host: string) =>
  rules.some((rule) => ('host' in rule ? rule.host === host : host.endsWith(rule.suffix)));

function allowListText(rules: readonly HostRule[]): string {
  const names = rules.slice(0, 10).map((rule) => ('host' in rule ? rule.host : `*${rule.suffix}`));
  return names.length === 0 ? 'none is allowed' : `${names.join(', ')}${rules.length > 10 ? ', …' : ''}`;
}

/**
 * Refuses a call whose URL or host arguments point to loopback, link-local (cloud metadata), private,
 * unspecified or reserved addresses (IPv4, IPv6 and IPv6 forms embedding IPv4), to local-only names,
 * to a scheme other than `schemes`, carry credentials, or name a host outside the tenant's allow-list.
 *
 * @example
 * egressGuard({ allowHosts: ['*.wikipedia.org'], tenants: { acme: { allowHosts: ['api.acme.com'] } } })
 */
export function egressGuard(options: EgressGuardOptions = {}): Middleware {
  const { resolve, detectFormats = true, values: readValues = true } = options;
  if (resolve !== undefined && typeof resolve !== 'function')
    throw new TypeError('egressGuard: resolve must be a function (hostname, { signal }) => addresses.');
  const deadlineMs = assertDeadline('egressGuard', options.deadlineMs ?? DEFAULT_DEADLINE_MS);
  const schemes = new Set(
    (options.schemes ?? ['http', 'https']).map((s) => String(s).toLowerCase().replace(/:$/, '')),
  );
  const everywhere = hostRules(options.allowHosts, 'allowHosts');
  const perTenant = new Map(
    Object.entries(options.tenants ?? {}).map(([tenant, config]) => [
      tenant,
      hostRules(config?.allowHosts, `tenants.${tenant}.allowHosts`),
    ]),
  );
  const targetsOf = new WeakMap<Tool, readonly Target[]>();
  const targets = (tool: Tool): readonly Target[] => {
    let found = targetsOf.get(tool);
    if (found === undefined) {
      // A declaration is the author's word, and replaces what the schema suggests (`egress: []` opts out).
      found =
        tool.egress !== undefined
          ? tool.egress.map((path) => ({ path, kind: 'url' as const }))
          : detectFormats
            ? [...pathsWithFormat(tool.schema.inputSchema, FORMAT_NAMES)].map(([path, format]) => ({
                path,
                kind: FORMATS.get(format)!,
              }))
            : [];
      targetsOf.set(tool, found);
    }
    return found;
  };
  const schemeWords = [...schemes].join(' or ');

  const refuse = (
    ctx: ToolMiddlewareContext,
    at: string,
    code: string,
    what: string,
    instead: string,
    retryable = false,
  ): never => {
    ctx.emit({ type: 'egress.refused', arg: at, code });
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' argument '${at}' ${what}`,
        retryable ? 'Retrying later may help' : 'Retrying with the same destination will not help',
        instead,
      ),
      { code, retryable, detail: `egress guard: '${at}' ${code.toLowerCase()}` },
    );
  };

  const judge = async (
    ctx: ToolMiddlewareContext,
    at: string,
    value: string,
    kind: DestinationKind,
    checked: Record<string, EgressChecked>,
  ) => {
    const read = destinationOf(value, kind, schemes);
    if (!read.ok) {
      if (read.problem === 'scheme')
        return refuse(
          ctx,
          at,
          'EGRESS_SCHEME',
          `uses a URL scheme this deployment does not let tools use`,
          `Use an ${schemeWords} URL`,
        );
      if (read.problem === 'credentials')
        return refuse(
          ctx,
          at,
          'EGRESS_CREDENTIALS',
          `carries a user name or password in the URL`,
          'Pass the URL without credentials',
        );
      return refuse(
        ctx,
        at,
        'EGRESS_NOT_A_URL',
        `is not a ${kind === 'host' ? 'host name' : 'URL'} this guard can read`,
        kind === 'host' ? 'Pass a bare host name like example.com' : `Pass an absolute ${schemeWords} URL`,
      );
    }
    const host = read.host;
    if (host === undefined) return;
    const kindOf = privateKind(host);
    if (kindOf !== undefined)
      return refuse(
        ctx,
        at,
        'EGRESS_PRIVATE_ADDRESS',
        `points to ${KIND_WORDS[kindOf]}, which tools may not reach`,
        'Use a public address',
      );
    const rules =
      (ctx.identity?.tenant !== undefined ? perTenant.get(ctx.identity.tenant) : undefined) ?? everywhere;
    if (rules !== undefined && !allowed(rules, host))
      return refuse(
        ctx,
        at,
        'EGRESS_HOST_NOT_ALLOWED',
        `names a host outside this deployment's allow-list`,
        `Use an allowed host: ${allowListText(rules)}`,
      );
    if (resolve === undefined || isIpLiteral(host)) {
      checked[at] = { host };
      return;
    }
    let addresses: readonly string[];
    try {
      const name = host.replace(/\.+$/, '');
      addresses = await withDeadline((signal) => resolve(name, { signal }), deadlineMs, ctx.signal);
      if (!Array.isArray(addresses) || addresses.length === 0 || addresses.some((a) => typeof a !== 'string'))
        throw new TypeError('no addresses');
    } catch (error) {
      ctx.emit({
        type: 'egress.resolve-failed',
        arg: at,
        failure: error instanceof DeadlineError ? 'timeout' : 'failed',
      });
      return refuse(
        ctx,
        at,
        'EGRESS_RESOLVE_FAILED',
        'names a host that could not be resolved to check where it leads',
        'Check the host name, or try again later',
        true,
      );
    }
    const inside = addresses.map(privateKind).find((k) => k !== undefined);
    if (inside !== undefined)
      return refuse(
        ctx,
        at,
        'EGRESS_PRIVATE_ADDRESS',
        `names a host that resolves to ${KIND_WORDS[inside]}, which tools may not reach`,
        'Use a public address',
      );
    checked[at] = { host, addresses: Object.freeze([...addresses]) };
  };

  const guard = async (ctx: ToolMiddlewareContext, found: readonly Target[]): Promise<number> => {
    const checked: Record<string, EgressChecked> = {};
    let count = 0;
    for (const { path, kind } of found) {
      for (const item of itemsAt(ctx.args, path)) {
        if (typeof item.value !== 'string' && typeof item.value !== 'number') {
          return refuse(
            ctx,
            item.at,
            'EGRESS_NOT_A_URL',
            `is not a ${kind === 'host' ? 'host name' : 'URL'} this guard can read`,
            `Pass it as a string`,
          );
        }
        await judge(ctx, item.at, String(item.value), kind, checked);
        count++;
      }
    }
    // Values first: a URL the declarations did not name is judged all the same.
    if (readValues)
      for (const { at, value } of stringValues(ctx.args)) {
        if (Object.hasOwn(checked, at) || found.some((target) => target.path === at)) continue;
        const shape = destinationShape(value);
        if (shape === undefined) continue;
        await judge(ctx, at, shape === 'host' ? hostOfShape(value) : value.trim(), shape, checked);
        count++;
      }
    ctx.state.egress = checked;
    return count;
  };

  const settings = JSON.stringify([
    options.allowHosts ?? null,
    [...perTenant.keys()].sort(),
    options.tenants ?? null,
    [...schemes],
    resolve !== undefined,
    detectFormats,
    readValues,
  ]);
  return {
    name: 'egress-guard',
    after: ['validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    honors: ['egress'],
    fingerprint: `${everywhere === undefined ? 'any public host' : `${everywhere.length} hosts`}${perTenant.size > 0 ? `, ${perTenant.size} tenants` : ''}${resolve === undefined ? '' : ', dns'}, ${shortHash(settings)}`,
    passThrough: (tool) =>
      !readValues && targets(tool).length === 0 ? { why: 'no URL or host arguments' } : undefined,
    run: async function egressGuardRun(ctx, next) {
      const found = targets(ctx.tool);
      const count = found.length === 0 && !readValues ? 0 : await guard(ctx, found);
      ctx.note(
        count === 0 ? 'no URL or host arguments' : `${count} destination${count === 1 ? '' : 's'} allowed`,
      );
      return next();
    },
  };
}
