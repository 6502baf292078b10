// The cross-server guard (opt-in): the confused deputy. A value one MCP server returned (an account
// number from a web page, a path from a file listing) that the model then passes to a tool of another
// server, or to one of our own, moved between servers on the model's word alone. The guard remembers
// the values each server returned, as keyed digests per conversation, and refuses such a call, or
// has the check-in gate ask a person with the final arguments.

import {
  refusalReason,
  type Identity,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { keyedDigest } from './internal/keyed-digest';
import { someString } from './internal/values';

export interface CrossServerFlow {
  /** The MCP server that returned the value (`'*'`: any). */
  readonly from: string;
  /** The MCP server whose tool receives it (`'*'`: any, our own tools included). */
  readonly to: string;
}

export interface CrossServerGuardOptions {
  /** `'refuse'` (default) or `'ask'`: a person approves the call through the check-in gate. */
  readonly action?: 'refuse' | 'ask';
  /** Flows that are fine, e.g. `{ from: 'fs', to: 'git' }`. */
  readonly allowFlows?: readonly CrossServerFlow[];
  /** Judge values passed to our own tools (no source) too; default true. */
  readonly ownTools?: boolean;
  /** The shortest value remembered, in characters; default 8. */
  readonly minLength?: number;
  /** Values remembered per conversation, oldest forgotten first; default 5000. */
  readonly perConversation?: number;
  /** Conversations remembered, least recently used forgotten first; default 1000. */
  readonly conversations?: number;
}

const TOKEN = /[^\s"'`<>()[\]{},;|]+/g;
const TRAILING = /[.,:;!?]+$/;
const VALUE_LIKE = /[\d@/:]/;
const MAX_VALUE_CHARS = 4096;

/** The values in one string: the whole (a phrase or something value-like) and its value-like tokens. */
function valuesIn(text: string, min: number, out: Set<string>): void {
  const whole = text.trim();
  if (whole.length < min) return;
  if (
    whole.length <= MAX_VALUE_CHARS &&
    (VALUE_LIKE.test(whole) || whole.includes(' ') || whole.length >= 24)
  )
    out.add(whole);
  for (const match of whole.matchAll(TOKEN)) {
    const token = match[0].replace(TRAILING, '');
    if (
      token.length >= min &&
      token.length <= MAX_VALUE_CHARS &&
      (VALUE_LIKE.test(token) || token.length >= 24)
    )
      out.add(token);
  }
}

const conversationOf = (identity: Identity | undefined) =>
  `${identity?.tenant ?? ''}\u0000${identity?.principal ?? ''}\u0000${identity?.conversation ?? ''}`;

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0)
    throw new TypeError(`crossServerGuard: ${name} must be a positive integer.`);
  return value;
}

/**
 * Refuses (or asks about) a call whose arguments carry a value another MCP server returned earlier in
 * the same conversation. Values are matched exactly (after trimming), as whole strings and as tokens.
 *
 * @example
 * crossServerGuard({ action: 'ask', allowFlows: [{ from: 'fs', to: 'git' }] })
 */
export function crossServerGuard(options: CrossServerGuardOptions = {}): Middleware {
  const action = options.action ?? 'refuse';
  if (action !== 'refuse' && action !== 'ask')
    throw new TypeError(`crossServerGuard: action must be 'refuse' or 'ask'.`);
  const ownTools = options.ownTools ?? true;
  const min = positive('minLength', options.minLength, 8);
  const perConversation = positive('perConversation', options.perConversation, 5000);
  const maxConversations = positive('conversations', options.conversations, 1000);
  const flows = (options.allowFlows ?? []).map((flow) => {
    if (typeof flow?.from !== 'string' || typeof flow?.to !== 'string' || flow.from === '' || flow.to === '')
      throw new TypeError(
        `crossServerGuard: each allowFlows entry must be { from, to } with server names or '*'.`,
      );
    return flow;
  });
  const allowed = (from: string, to: string | undefined) =>
    flows.some((flow) => (flow.from === '*' || flow.from === from) && (flow.to === '*' || flow.to === to));
  const judged = (tool: Tool) => ownTools || tool.source !== undefined;

  let key: Uint8Array | undefined;
  // Drawn at first use, never while a module loads (workers forbid randomness at global scope).
  const digest = (value: string) => keyedDigest((key ??= crypto.getRandomValues(new Uint8Array(16))), value);
  const memory = new Map<string, Map<number, string>>();

  const recall = (id: string): Map<number, string> | undefined => {
    const seen = memory.get(id);
    if (seen !== undefined) {
      memory.delete(id);
      memory.set(id, seen);
    }
    return seen;
  };

  const remember = (ctx: ToolMiddlewareContext, source: string): void => {
    const text = ctx.resultText;
    if (text === undefined) return;
    const values = new Set<string>();
    const value = typeof ctx.result === 'string' ? ctx.result : (JSON.parse(text) as unknown);
    someString(value, (s) => (valuesIn(s, min, values), false), { numbers: true, keys: false });
    if (values.size === 0) return;
    const id = conversationOf(ctx.identity);
    let seen = recall(id);
    if (seen === undefined) {
      seen = new Map();
      memory.set(id, seen);
      if (memory.size > maxConversations) memory.delete(memory.keys().next().value as string);
    }
    for (const v of values) {
      const d = digest(v);
      seen.delete(d);
      seen.set(d, source);
      if (seen.size > perConversation) seen.delete(seen.keys().next().value as number);
    }
  };

  const judge = (ctx: ToolMiddlewareContext): void => {
    const seen = recall(conversationOf(ctx.identity));
    if (seen === undefined || seen.size === 0) {
      ctx.note('no values from other servers in this conversation');
      return;
    }
    const target = ctx.toolSource;
    let flow: { at: string; from: string } | undefined;
    someString(
      ctx.args,
      (text, at) => {
        const values = new Set<string>();
        valuesIn(text, min, values);
        for (const v of values) {
          const from = seen.get(digest(v));
          if (from !== undefined && from !== target && !allowed(from, target)) {
            flow = { at, from };
            return true;
          }
        }
        return false;
      },
      { numbers: true },
    );
    if (flow === undefined) {
      ctx.note('no value from another server');
      return;
    }
    const into = target === undefined ? 'one of our own tools' : `MCP server '${target}'`;
    ctx.emit({ type: 'cross-server.flow', arg: flow.at, from: flow.from, action });
    if (action === 'ask') {
      ctx.requireCheckIn(
        `argument '${flow.at}' carries a value returned by MCP server '${flow.from}', passed to ${into}`,
      );
      ctx.note(`a value from '${flow.from}' in '${flow.at}': a person must approve`);
      return;
    }
    ctx.deny(
      refusalReason(
        `'${ctx.toolName}' argument '${flow.at}' carries a value returned by MCP server '${flow.from}', and values may not pass from one server to ${into} here`,
        'Retrying with the same value will not help',
        `Ask the user to confirm the value and give it to you themselves`,
      ),
      {
        code: 'CROSS_SERVER_FLOW',
        detail: `cross-server guard: '${flow.from}' → ${target ?? 'own tools'} in '${flow.at}'`,
      },
    );
  };

  return {
    name: 'cross-server-guard',
    after: ['validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    fingerprint: `${action}${ownTools ? '' : ', MCP tools only'}, min ${min}${flows.length > 0 ? `, allows ${flows.map((f) => `${f.from}>${f.to}`).join(' ')}` : ''}`,
    checkTool(tool, chain) {
      if (action === 'ask' && judged(tool) && !chain.canPause)
        return `the cross-server guard asks a person about flows, but the chain has no check-in key; pass 'checkInKey' to canonicalChain`;
      return undefined;
    },
    passThrough: (tool) => (judged(tool) ? undefined : { why: 'not an MCP tool' }),
    requiresCheckIn: (tool) => action === 'ask' && judged(tool),
    run: async function crossServerGuardRun(ctx, next) {
      if (judged(ctx.tool)) judge(ctx);
      else ctx.note('not an MCP tool');
      await next();
      const source = ctx.toolSource;
      if (source === undefined || !ctx.ran) return;
      try {
        remember(ctx, source);
      } catch {
        // A result too deep to read is remembered by nothing; the call's outcome stands.
        ctx.emit({ type: 'cross-server.unread', reason: 'result could not be read' });
      }
    },
  };
}
