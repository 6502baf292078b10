// Relaying an upstream's input-required answer to a 2026-07-28 client, and the client's retry back:
// the client is asked only what it declared it can answer, sees our sealed state (never the
// upstream's), and its retry reaches the upstream only when that state opens for this very caller
// and request. A state that does not open is a protocol error (-32602) and nothing is sent upstream.

import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type ClientCapabilities,
  type InputRequiredResult,
  type InputRequests,
} from '@modelcontextprotocol/server';
import { refusalReason } from '@toolgate/core';
import type { UpstreamAsked, UpstreamRetry } from './relay';
import type { McpRequestExtra } from './serve';
import { isUpstreamState, type UpstreamStateBinding, type UpstreamStates } from './upstream-state';

/** The capability each embedded request needs the client to have declared. */
const NEEDS: Readonly<Record<string, keyof ClientCapabilities>> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/** The stable code a refused state carries in the error's data. */
export const STATE_INVALID_CODE = 'CHECKIN_STATE_INVALID';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What a 2026-07-28 request's `_meta` declared the client can do; undefined for a 2025-11-25 request. */
export function declaredCapabilities(extra: McpRequestExtra): ClientCapabilities | undefined {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope === undefined) return undefined;
  const declared = envelope[CLIENT_CAPABILITIES_META_KEY];
  return isRecord(declared) ? (declared as ClientCapabilities) : {};
}

/**
 * The retry an echoed state carries for the upstream: its own state and the client's answers to the
 * questions it asked (only those keys). Undefined when the request echoed no state of ours. Throws
 * the protocol error for a state that does not open for this binding.
 */
export function upstreamRetryOf(
  states: UpstreamStates,
  extra: McpRequestExtra,
  binding: UpstreamStateBinding,
): UpstreamRetry | undefined {
  const echoed = extra.mcpReq.requestState();
  if (!isUpstreamState(echoed)) return undefined;
  const opened = states.open(echoed, binding);
  if (!opened.ok) throw invalidState(binding.target);
  const given = isRecord(extra.mcpReq.inputResponses) ? extra.mcpReq.inputResponses : {};
  const inputResponses = Object.fromEntries(
    opened.ask.keys.filter((key) => Object.hasOwn(given, key)).map((key) => [key, given[key]]),
  );
  return {
    ...(Object.keys(inputResponses).length > 0 ? { inputResponses } : {}),
    ...(opened.ask.requestState !== undefined ? { requestState: opened.ask.requestState } : {}),
    ...(opened.ask.upstreamTask !== undefined ? { upstreamTask: opened.ask.upstreamTask } : {}),
    ...(opened.ask.parkedCall !== undefined ? { parkedCall: opened.ask.parkedCall } : {}),
  };
}

/** Whether a request echoed a state this module sealed (else it may be the host's own). */
export const echoesUpstreamState = (extra: McpRequestExtra): boolean =>
  isUpstreamState(extra.mcpReq.requestState());

function invalidState(target: string): ProtocolError {
  return new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `[mcp refused: ${refusalReason(
      `the requestState sent with '${target.slice(0, 200)}' is not one this server gave this caller for this request, or it expired`,
      'Retrying with it will not help',
      'Send the request again without a requestState to start over',
    )}]`,
    { code: STATE_INVALID_CODE },
  );
}

/**
 * Of an upstream's questions, those the client declared it can answer, and the capabilities the
 * others would need.
 */
export function answerable(
  asked: Readonly<Record<string, unknown>>,
  declared: ClientCapabilities,
): { readonly inputRequests: InputRequests; readonly missing: ClientCapabilities } {
  const inputRequests: InputRequests = {};
  const missing: ClientCapabilities = {};
  for (const [key, request] of Object.entries(asked)) {
    const method = isRecord(request) ? request['method'] : undefined;
    const needs = typeof method === 'string' ? NEEDS[method] : undefined;
    // A question of a kind MCP does not define cannot be answered by any client.
    if (needs === undefined) continue;
    if (declared[needs] === undefined) {
      (missing as Record<string, unknown>)[needs] = {};
      continue;
    }
    inputRequests[key] = request as InputRequests[string];
  }
  return { inputRequests, missing };
}

/**
 * The input-required result the client sees for an upstream's: the upstream's questions the client
 * declared it can answer, and our state sealing the upstream's. When none is left, the -32021 error
 * naming what the client would have to declare.
 */
export function relayedInputRequired(
  states: UpstreamStates,
  binding: UpstreamStateBinding,
  asked: UpstreamAsked,
  declared: ClientCapabilities,
): InputRequiredResult {
  const { inputRequests, missing } = answerable(asked.inputRequests, declared);
  // Asked only what this client cannot answer: it would be asked again on every retry.
  if (Object.keys(inputRequests).length === 0 && Object.keys(missing).length > 0)
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities: missing });
  if (Object.keys(inputRequests).length === 0 && asked.requestState === undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `the upstream serving '${binding.target.slice(0, 200)}' asked for input this server cannot relay`,
    );
  const requestState = states.seal(binding, {
    ...(asked.requestState !== undefined ? { requestState: asked.requestState } : {}),
    keys: Object.keys(inputRequests),
    ...(asked.upstreamTask !== undefined ? { upstreamTask: asked.upstreamTask } : {}),
    ...(asked.parkedCall !== undefined ? { parkedCall: asked.parkedCall } : {}),
  });
  return {
    resultType: 'input_required',
    ...(Object.keys(inputRequests).length > 0 ? { inputRequests } : {}),
    requestState,
  };
}
