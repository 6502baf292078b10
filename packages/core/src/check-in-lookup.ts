// Which check-in request an approval answers when it comes back through an agent framework (AI SDK
// messages, a LangGraph resume, an OpenAI Agents RunState). Those carry ids and args that a client or
// host can replay or edit, so an adapter answers only a request raised for exactly the call in front
// of it, and `dispatcher.resume` (the store's single-use consume) decides that it runs once. The
// in-process index is a shortcut for requests this process raised, never the authority.

import { identityOf, parseArgs } from './call-input';
import { canonicalJson } from './canonical';
import type { CheckInRequest, CheckInStore } from './check-in';
import { DEFAULT_DEADLINE_MS, withDeadline } from './deadline';
import type { Identity } from './identity';

/** The call an approval came back for, as the framework hands it over now. */
export interface ApprovedCall {
  readonly toolName: string;
  /** The served tool's own `source` (absent for our own tools), never the framework's claim. */
  readonly toolSource?: string;
  readonly toolCallId: string;
  /** The args as the framework passes them: an object, or the model's JSON text. */
  readonly args: unknown;
  /** Who is calling now, from the framework's context. */
  readonly identity?: Identity;
}

export interface CheckInLookupOptions {
  /**
   * The chain's check-in store. With it, a request raised in another process is found; without it,
   * only requests this process raised are.
   */
  readonly store?: CheckInStore;
  /** How many requests the in-process index keeps; default 1,000. The oldest go first. */
  readonly limit?: number;
  /** How long a store call may take; default 5000 ms. */
  readonly deadlineMs?: number;
}

export interface CheckInLookup {
  /** Indexes a request this process raised. */
  remember(request: CheckInRequest): void;
  /** Forgets a request the adapter has handed to `resume`, so the index never offers it again. */
  settle(id: string): void;
  /** The newest unsettled request this process raised for exactly `call` (index only). */
  latest(call: ApprovedCall): CheckInRequest | undefined;
  /**
   * The pending requests raised for exactly `call` by `asker` (any asker when absent), oldest first:
   * from the store when there is one, else from the index. Rejects when the store fails.
   */
  pendingFor(call: ApprovedCall, asker?: string): Promise<CheckInRequest[]>;
  /** Request `id`, when it was raised for exactly `call` and is still pending. Rejects when the store fails. */
  pending(id: string, call: ApprovedCall): Promise<CheckInRequest | undefined>;
  /** Revokes a request nobody will answer; a store that fails leaves it to expire. */
  revoke(id: string): Promise<void>;
}

const DEFAULT_LIMIT = 1_000;

/** The call's identity as the core records it on a request, or undefined when its args cannot run. */
function callKey(call: ApprovedCall): string | undefined {
  const args = parseArgs(call.args);
  if (typeof args === 'string') return undefined;
  try {
    return canonicalJson({
      tool: call.toolName,
      source: call.toolSource ?? null,
      id: call.toolCallId,
      identity: identityOf(call.identity) ?? null,
      args,
    });
  } catch {
    return undefined;
  }
}

function requestKey(request: CheckInRequest): string | undefined {
  try {
    return canonicalJson({
      tool: request.toolName,
      source: request.toolSource ?? null,
      id: request.toolCallId,
      identity: request.identity ?? null,
      args: request.args,
    });
  } catch {
    return undefined;
  }
}

/**
 * Whether `request` was raised for exactly `call`: the same tool and source, call id, identity
 * (tenant, principal, conversation, roles) and args. What runs is still decided by `resume`, which
 * checks the signature and the digest of the final args and consumes the request once.
 */
export function checkInRaisedFor(request: CheckInRequest, call: ApprovedCall): boolean {
  const key = callKey(call);
  return key !== undefined && requestKey(request) === key;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const byAge = (a: CheckInRequest, b: CheckInRequest): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * The index and store look-ups a framework adapter needs to find the request an approval answers.
 *
 * @example
 * const lookup = checkInLookup({ store: checkIns });
 * const [request] = await lookup.pendingFor({ toolName, toolCallId, args, identity }, 'check-in');
 * if (request !== undefined) outcome = await dispatcher.resume(request, checkInApproved({ by }));
 */
export function checkInLookup(options: CheckInLookupOptions = {}): CheckInLookup {
  const { store } = options;
  const limit = options.limit ?? DEFAULT_LIMIT;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  if (!(Number.isInteger(limit) && limit > 0))
    throw new TypeError('checkInLookup: limit must be a positive integer.');
  if (!(Number.isInteger(deadlineMs) && deadlineMs > 0))
    throw new TypeError('checkInLookup: deadlineMs must be a positive integer of milliseconds.');
  // Requests by call key, newest last, and each id's key: small, bounded, process-local.
  const byKey = new Map<string, CheckInRequest[]>();
  const keyOf = new Map<string, string>();

  function settle(id: string): void {
    const key = keyOf.get(id);
    if (key === undefined) return;
    keyOf.delete(id);
    const rest = (byKey.get(key) ?? []).filter((request) => request.id !== id);
    if (rest.length === 0) byKey.delete(key);
    else byKey.set(key, rest);
  }

  const ask = <T>(work: () => Promise<T>): Promise<T> => withDeadline(work, deadlineMs);

  return {
    remember(request) {
      const key = requestKey(request);
      if (key === undefined || keyOf.has(request.id)) return;
      if (keyOf.size >= limit) settle(keyOf.keys().next().value!);
      keyOf.set(request.id, key);
      byKey.set(key, [...(byKey.get(key) ?? []), request]);
    },
    settle,
    latest(call) {
      if (byKey.size === 0) return undefined;
      const key = callKey(call);
      return key === undefined ? undefined : byKey.get(key)?.at(-1);
    },
    async pendingFor(call, asker) {
      const key = callKey(call);
      if (key === undefined) return [];
      const mine = (request: CheckInRequest) =>
        (asker === undefined || request.asker === asker) && requestKey(request) === key;
      if (store === undefined) return (byKey.get(key) ?? []).filter(mine).sort(byAge);
      const tenant = identityOf(call.identity)?.tenant;
      const records = await ask(() =>
        store.list({
          toolName: call.toolName,
          state: 'pending',
          ...(tenant !== undefined ? { tenant } : {}),
        }),
      );
      if (!Array.isArray(records))
        throw new TypeError('the check-in store answered list with something else');
      return records
        .filter((record) => isRecord(record) && record.state === 'pending' && isRecord(record.request))
        .map((record) => record.request)
        .filter(mine)
        .sort(byAge);
    },
    async pending(id, call) {
      if (typeof id !== 'string' || id === '') return undefined;
      if (store === undefined) {
        const key = keyOf.get(id);
        const request = key === undefined ? undefined : byKey.get(key)?.find((each) => each.id === id);
        return request !== undefined && checkInRaisedFor(request, call) ? request : undefined;
      }
      const record: unknown = await ask(() => store.get(id));
      if (!isRecord(record) || record['state'] !== 'pending') return undefined;
      const request = record['request'];
      if (!isRecord(request) || request['id'] !== id) return undefined;
      return checkInRaisedFor(request as unknown as CheckInRequest, call)
        ? (request as unknown as CheckInRequest)
        : undefined;
    },
    async revoke(id) {
      settle(id);
      if (store === undefined) return;
      try {
        await ask(() => store.revoke(id));
      } catch {
        // The request still expires on its own.
      }
    },
  };
}
