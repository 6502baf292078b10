// inboxApp's options, checked once when the app is built, and what every route shares.

import type {
  ArtifactStore,
  CheckInRecord,
  CheckInRequest,
  CheckInStore,
  DispatchOutcome,
  StandingGrant,
  StandingGrantStore,
} from '@toolgate/core';
import type { Approvers } from './approvers';
import { inboxKeys, type InboxKeys } from './keys';
import type { PinDiff } from './views/diff';
import type { Html } from './views/html';
import type { OperatorStatus } from './views/status';

/**
 * A check-in screen: renders a tool's `checkInComponent` from its props. Return markup built with
 * `html` from `hono/html` (it escapes what it interpolates); a plain string is shown as text.
 */
export type CheckInScreen = (
  props: unknown,
  request: CheckInRequest,
) => Html | string | Promise<Html | string>;

export interface InboxWebhook {
  /** Where each new check-in is posted, as a Slack-compatible message (an incoming-webhook URL). */
  readonly url: string;
  /** The inbox's public address including `basePath`, e.g. `https://gateway.example/inbox`, for links. */
  readonly publicUrl: string;
  /** Tenants whose check-ins are posted; default every tenant. */
  readonly tenants?: readonly string[] | 'all';
  /** Who decides through a link, as the decision records it; default `'webhook link'`. */
  readonly by?: string;
  /** How long a link lasts; default until its check-in expires. */
  readonly linkTtlMs?: number;
  /** How often the store is read for new check-ins; default 2000 ms. 0: only when `deliverWebhook()` is called. */
  readonly pollMs?: number;
  /** Extra request headers, e.g. an authorization for a non-Slack receiver. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The fetch used to post; default the global one. */
  readonly fetch?: typeof fetch;
}

export interface InboxOptions {
  readonly checkIns: CheckInStore;
  /** The chains' check-in key (at least 32 bytes): verifies requests, and derives the inbox's own secrets. */
  readonly checkInKey: string | Uint8Array;
  readonly approvers: Approvers;
  /** Screens by `checkInComponent.id`. */
  readonly components?: Readonly<Record<string, CheckInScreen>>;
  /** Where a `checkInComponent.propsRef` is resolved, in the scope of the call's identity. */
  readonly artifacts?: ArtifactStore;
  /** Where the app is mounted, e.g. `'/inbox'`; default the root. */
  readonly basePath?: string;
  /** The definition diff of a pinned tool that changed, for the check-in page; from the pinning layer. */
  readonly pinDiffs?: (request: CheckInRequest) => PinDiff | undefined | Promise<PinDiff | undefined>;
  /**
   * In the process that holds the dispatcher: carries out a decision as soon as it is recorded, e.g.
   * `(record) => carryOutDecision(dispatcher, record, { checkIns })`, and shows the approver what
   * happened. Without it a decision waits in the store for its holder (`awaitDecision`).
   */
  readonly carryOut?: (record: CheckInRecord) => Promise<DispatchOutcome>;
  /**
   * Checks changed args before an approval with changes is recorded: the problems (empty when they
   * fit), e.g. the tool's schema through the chain's validator. A problem refuses the approval with
   * a 400 and records nothing, so the person can fix it. The chain judges the changed call again
   * either way; this only answers sooner.
   */
  readonly checkArgs?: (
    request: CheckInRequest,
    args: Readonly<Record<string, unknown>>,
  ) => readonly string[] | Promise<readonly string[]>;
  readonly webhook?: InboxWebhook;
  /**
   * The operator's status page at `/status`, for approvers with the `operator` role: what the host
   * reports (upstreams, pins waiting for review, reloads, the audit head). Without it, no page.
   */
  readonly status?: () => OperatorStatus | Promise<OperatorStatus>;
  /**
   * Where standing grants live: with it (and `definitionOf`), an approver may approve "this tool,
   * this caller, args within bounds, N calls or until T", and list and revoke grants. The holder of
   * the dispatcher uses them (`grantCovers`, then `use`), running the whole chain for every call.
   */
  readonly grants?: StandingGrantStore;
  /** The digest of the tool's definition as served now, or undefined when it is not served; a grant is void once it changes. */
  readonly definitionOf?: (request: CheckInRequest) => string | undefined | Promise<string | undefined>;
  /**
   * Told when a standing grant is created or revoked here, with who did it (e.g. to write the audit
   * log and an event). A creation is told before the grant is stored: when the hook throws or
   * rejects, the grant is not made (the approval stands, and its answer says why). A revocation is
   * told after it takes effect; it stands either way, and the answer says it could not be recorded.
   */
  readonly onGrant?: (change: GrantChange) => void | Promise<void>;
  /** The longest a standing grant may last; default 7 days. */
  readonly maxGrantMs?: number;
  /** How often an open page's live list reads the store; default 1000 ms. */
  readonly pollMs?: number;
  /**
   * Origins the inbox's pages are served from besides the one each request names in its Host,
   * e.g. `https://gateway.example` behind a TLS proxy: a state-changing browser request must come
   * from one of them.
   */
  readonly origins?: readonly string[];
  /** Mark cookies `Secure`; default when the request arrived over https. Set true behind a TLS proxy. */
  readonly secureCookies?: boolean;
  /** How long a sign-in lasts; default 12 hours. */
  readonly sessionTtlMs?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
}

/** A standing grant made or revoked in the inbox, and by whom (`Approver.id`). */
export interface GrantChange {
  readonly kind: 'created' | 'revoked';
  readonly grant: StandingGrant;
  readonly by: string;
}

/** What every route reads. */
export interface InboxContext {
  readonly checkIns: CheckInStore;
  readonly approvers: Approvers;
  readonly keys: InboxKeys;
  readonly base: string;
  readonly components: Readonly<Record<string, CheckInScreen>>;
  readonly artifacts: ArtifactStore | undefined;
  readonly pinDiffs: InboxOptions['pinDiffs'];
  readonly carryOut: InboxOptions['carryOut'];
  readonly checkArgs: InboxOptions['checkArgs'];
  readonly webhook: InboxWebhook | undefined;
  readonly status: InboxOptions['status'];
  readonly grants: StandingGrantStore | undefined;
  readonly definitionOf: InboxOptions['definitionOf'];
  /** The host's `onGrant`: resolves whether it took the change (true without a hook), never rejects. */
  readonly onGrant: (change: GrantChange) => Promise<boolean>;
  readonly maxGrantMs: number;
  readonly pollMs: number;
  readonly secureCookies: boolean | undefined;
  readonly origins: readonly string[];
  readonly sessionTtlMs: number;
  readonly now: () => number;
}

const MIN_KEY_BYTES = 32;

function positive(name: string, value: number | undefined, fallback: number, zeroOk = false): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && (value > 0 || (zeroOk && value === 0))))
    throw new TypeError(`inboxApp: '${name}' must be a positive number of milliseconds.`);
  return value;
}

function basePathOf(value: unknown): string {
  if (value === undefined || value === '' || value === '/') return '';
  if (typeof value !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(value))
    throw new TypeError(`inboxApp: 'basePath' must look like '/inbox' (no trailing slash).`);
  return value;
}

function checkWebhook(webhook: InboxWebhook): InboxWebhook {
  for (const name of ['url', 'publicUrl'] as const) {
    let url: URL;
    try {
      url = new URL(webhook[name]);
    } catch {
      throw new TypeError(`inboxApp: 'webhook.${name}' must be an absolute http(s) URL.`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new TypeError(`inboxApp: 'webhook.${name}' must be an absolute http(s) URL.`);
  }
  positive('webhook.linkTtlMs', webhook.linkTtlMs, 1);
  positive('webhook.pollMs', webhook.pollMs, 1, true);
  if (webhook.by !== undefined && (typeof webhook.by !== 'string' || webhook.by.trim() === ''))
    throw new TypeError(`inboxApp: 'webhook.by' must be a non-empty string.`);
  return { ...webhook, publicUrl: webhook.publicUrl.replace(/\/+$/, '') };
}

function originsOf(value: unknown): readonly string[] {
  if (value === undefined) return [];
  const fault = `inboxApp: 'origins' must be a list of origins like 'https://gateway.example'.`;
  if (!Array.isArray(value)) throw new TypeError(fault);
  return value.map((origin: unknown) => {
    let url: URL;
    try {
      url = new URL(String(origin));
    } catch {
      throw new TypeError(fault);
    }
    if (typeof origin !== 'string' || url.origin === 'null' || url.origin !== origin.replace(/\/+$/, ''))
      throw new TypeError(fault);
    return url.origin;
  });
}

export function inboxContext(options: InboxOptions): InboxContext {
  if (typeof options !== 'object' || options === null)
    throw new TypeError('inboxApp: expected { checkIns, checkInKey, approvers, basePath? }.');
  const { checkIns, checkInKey, approvers } = options;
  for (const verb of ['get', 'list', 'decide'] as const) {
    if (typeof checkIns?.[verb] !== 'function')
      throw new TypeError(
        `inboxApp: 'checkIns' must be a CheckInStore with ${verb}(); pass the chains' store.`,
      );
  }
  const keyLength =
    typeof checkInKey === 'string'
      ? new TextEncoder().encode(checkInKey).length
      : checkInKey instanceof Uint8Array
        ? checkInKey.length
        : 0;
  if (keyLength < MIN_KEY_BYTES)
    throw new TypeError(
      `inboxApp: 'checkInKey' must be the chains' check-in key, at least ${MIN_KEY_BYTES} bytes.`,
    );
  if (typeof approvers !== 'function')
    throw new TypeError(`inboxApp: 'approvers' must be a function (token) => approver | undefined.`);
  const components = options.components ?? {};
  for (const [id, screen] of Object.entries(components)) {
    if (typeof screen !== 'function')
      throw new TypeError(`inboxApp: component '${id}' must be a render function.`);
  }
  if (options.carryOut !== undefined && typeof options.carryOut !== 'function')
    throw new TypeError(`inboxApp: 'carryOut' must be a function (record) => Promise<DispatchOutcome>.`);
  if (options.checkArgs !== undefined && typeof options.checkArgs !== 'function')
    throw new TypeError(`inboxApp: 'checkArgs' must be a function (request, args) => problems.`);
  if (options.status !== undefined && typeof options.status !== 'function')
    throw new TypeError(`inboxApp: 'status' must be a function () => OperatorStatus.`);
  if (options.grants !== undefined) {
    for (const verb of ['create', 'get', 'list', 'use', 'revoke'] as const)
      if (typeof options.grants?.[verb] !== 'function')
        throw new TypeError(`inboxApp: 'grants' must be a StandingGrantStore with ${verb}().`);
    if (typeof options.definitionOf !== 'function')
      throw new TypeError(
        `inboxApp: 'grants' needs 'definitionOf' (request) => the tool definition's digest, so a changed tool voids its grants.`,
      );
  }
  if (options.onGrant !== undefined && typeof options.onGrant !== 'function')
    throw new TypeError(`inboxApp: 'onGrant' must be a function (change) => void.`);
  if (options.pinDiffs !== undefined && typeof options.pinDiffs !== 'function')
    throw new TypeError(`inboxApp: 'pinDiffs' must be a function (request) => PinDiff | undefined.`);
  return {
    checkIns,
    approvers,
    keys: inboxKeys(checkInKey),
    base: basePathOf(options.basePath),
    components,
    artifacts: options.artifacts,
    pinDiffs: options.pinDiffs,
    carryOut: options.carryOut,
    checkArgs: options.checkArgs,
    webhook: options.webhook === undefined ? undefined : checkWebhook(options.webhook),
    status: options.status,
    grants: options.grants,
    definitionOf: options.definitionOf,
    onGrant: async (change) => {
      try {
        await options.onGrant?.(change);
        return true;
      } catch {
        // The host's hook reports its own failure; the caller decides what a change it could not take means.
        return false;
      }
    },
    maxGrantMs: positive('maxGrantMs', options.maxGrantMs, 7 * 24 * 60 * 60 * 1000),
    pollMs: positive('pollMs', options.pollMs, 1000),
    secureCookies: options.secureCookies,
    origins: originsOf(options.origins),
    sessionTtlMs: positive('sessionTtlMs', options.sessionTtlMs, 12 * 60 * 60 * 1000),
    now: options.now ?? Date.now,
  };
}
