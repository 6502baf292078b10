// A small deployment for the inbox tests: a refund tool that asks a person, a TypeScript policy
// middleware that caps refunds, per-tenant identities, approvers for two tenants and one for all,
// and the inbox carrying decisions out beside the dispatcher.

import {
  carryOutDecision,
  createDispatcher,
  defineTool,
  inMemoryCheckIns,
  type CheckInRecord,
  type CheckInStore,
  type Identity,
  type Middleware,
  type PausedOutcome,
} from '@toolgate/core';
import { staticApprovers, inboxApp, type InboxApp, type InboxOptions } from '@toolgate/inbox';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { Type } from 'typebox';

export const KEY = 'inbox-test-check-in-key-0123456789abcdef';

export const TOKENS = {
  ana: 'ana-token-acme-0123456789',
  bo: 'bo-token-globex-0123456789',
  root: 'root-token-all-0123456789',
} as const;

export const ACME: Identity = { tenant: 'acme', principal: 'agent-7', conversation: 'conv-1' };
export const GLOBEX: Identity = { tenant: 'globex', principal: 'agent-2' };

/** Policy, in TypeScript: no refund over 1000, whoever approved it. */
export const refundCap: Middleware = {
  name: 'refund-cap',
  fingerprint: 'max 1000',
  async run(ctx, next) {
    const amount = ctx.args['amount'];
    if (typeof amount === 'number' && amount > 1000)
      ctx.deny('refunds over 1000 EUR are not allowed; a person cannot approve more', {
        code: 'POLICY_DENIED',
      });
    await next();
  },
};

export interface Deployment {
  readonly checkIns: CheckInStore;
  readonly ran: Array<Record<string, unknown>>;
  readonly inbox: InboxApp;
  readonly dispatcher: ReturnType<typeof createDispatcher>;
  pause(identity: Identity, args: Record<string, unknown>, toolName?: string): Promise<PausedOutcome>;
  api(
    path: string,
    init?: { token?: string; method?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
}

export function deployment(
  options: Partial<InboxOptions> & { carry?: boolean; now?: () => number; checkInTtlMs?: number } = {},
): Deployment {
  const { carry = true, now, checkInTtlMs, ...rest } = options;
  const checkIns = options.checkIns ?? inMemoryCheckIns(now === undefined ? {} : { now });
  const artifacts = options.artifacts ?? inMemoryArtifacts();
  const ran: Array<Record<string, unknown>> = [];
  const refund = defineTool({
    name: 'issue_refund',
    description: 'Refunds an order',
    inputSchema: Type.Object({
      orderId: Type.String(),
      amount: Type.Number(),
      memo: Type.Optional(Type.String()),
    }),
    checkIn: 'always',
    execute: async (args) => {
      ran.push({ ...args });
      return { refunded: args.amount };
    },
  });
  const note = defineTool({
    name: 'send_note',
    description: 'Sends a note',
    inputSchema: Type.Object({}, { additionalProperties: true }),
    checkIn: 'always',
    checkInComponent: { id: 'note-preview', props: { title: 'Note <b>preview</b>' } },
    execute: async (args) => {
      ran.push({ ...args });
      return 'sent';
    },
  });
  const chain = canonicalChain({
    checkInKey: KEY,
    checkIns,
    artifacts,
    ...(checkInTtlMs !== undefined ? { checkInTtlMs } : {}),
    evidence: (ctx) => ({ order: ctx.args['orderId'], rule: 'every refund needs a person' }),
  }).use(refundCap);
  const dispatcher = createDispatcher({
    tools: [refund, note],
    chain,
    ...(now !== undefined ? { clock: now } : {}),
  });
  const inbox = inboxApp({
    checkIns,
    checkInKey: KEY,
    approvers: staticApprovers([
      { token: TOKENS.ana, id: 'ana@acme', name: 'Ana', tenants: ['acme'] },
      { token: TOKENS.bo, id: 'bo@globex', tenants: ['globex'] },
      { token: TOKENS.root, id: 'ops', tenants: 'all' },
    ]),
    artifacts,
    basePath: '/inbox',
    pollMs: 50,
    ...(carry
      ? { carryOut: (record: CheckInRecord) => carryOutDecision(dispatcher, record, { checkIns }) }
      : {}),
    ...(now !== undefined ? { now } : {}),
    ...rest,
  });
  return {
    checkIns,
    ran,
    inbox,
    dispatcher,
    async pause(identity, args, toolName = 'issue_refund') {
      const outcome = await dispatcher.dispatch({ toolName, args }, { identity });
      if (outcome.kind !== 'paused')
        throw new Error(`expected a pause, got ${outcome.kind}: ${outcome.content}`);
      return outcome;
    },
    api(path, init = {}) {
      const headers: Record<string, string> = { ...(init.headers ?? {}) };
      if (init.token !== undefined) headers['authorization'] = `Bearer ${init.token}`;
      if (init.body !== undefined) headers['content-type'] ??= 'application/json';
      return Promise.resolve(
        inbox.request(`http://inbox.test/inbox/api${path}`, {
          method: init.method ?? (init.body !== undefined ? 'POST' : 'GET'),
          headers,
          ...(init.body !== undefined
            ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
            : {}),
        }),
      );
    },
  };
}
