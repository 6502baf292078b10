// The support-desk demo as a function: build the tools, stores and per-tenant chains, let a scripted
// model talk to them, and report every gate decision. main.ts is the command line around it.

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  EVENT_TYPES,
  type ArtifactStore,
  type Chain,
  type CheckInDecision,
  type CheckInRequest,
  type CheckInStore,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';
import { canonicalChain, inMemoryArtifacts } from '@toolgate/middleware';
import { sqliteArtifacts, sqliteCheckIns } from '@toolgate/store-sqlite';
import { inMemoryCheckIns, runAgentLoop, scriptedModel, type ScriptStep } from '@toolgate/testing';
import { connectKnowledgeBase } from './knowledge-base';
import { refundCap, supportDeskPermissions } from './policy';
import { acmeScript, globexScript } from './script';
import { createTrace, type Trace } from './trace';
import { exportReport, issueRefund, lookupCustomer, refundsIssued, ticketRows } from './tools';

export interface DemoOptions {
  /** How a paused refund is decided: ask the person at the terminal, or decide by flag. */
  readonly decide: 'ask' | 'approve' | 'decline';
  readonly ask?: (request: CheckInRequest) => Promise<CheckInDecision>;
  readonly json: boolean;
  readonly color: boolean;
  readonly store: 'memory' | 'sqlite';
  readonly dbPath?: string;
  readonly write: (line: string) => void;
}

export interface DemoResult {
  readonly outcomes: readonly (DispatchOutcome & { tenant: string })[];
  readonly refundsIssued: number;
}

// A demo key; a deployment reads its own from a secret store.
const CHECK_IN_KEY = 'support-desk-demo-check-in-key-0001';

function stores(options: DemoOptions): {
  artifacts: ArtifactStore;
  checkIns: CheckInStore;
  close(): void;
  where: string;
} {
  if (options.store === 'memory')
    return {
      artifacts: inMemoryArtifacts(),
      checkIns: inMemoryCheckIns(),
      close: () => undefined,
      where: 'in memory',
    };
  const path = options.dbPath ?? join(tmpdir(), `toolgate-demo-${process.pid}.db`);
  const checkIns = sqliteCheckIns({ path });
  const artifacts = sqliteArtifacts({ path });
  return {
    artifacts,
    checkIns,
    where: `SQLite at ${path}`,
    close() {
      checkIns.close();
      artifacts.close();
    },
  };
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const trace: Trace = createTrace(options);
  const { artifacts, checkIns, close, where } = stores(options);
  const kb = await connectKnowledgeBase();
  const refundsBefore = refundsIssued.length;
  try {
    // The model passes data by reference: the tenant's export lives in its own artifact scope.
    const acme: Identity = { tenant: 'acme', principal: 'agent-7', conversation: 'conv-1' };
    await artifacts.put(acme, {
      kind: 'dataset/rows',
      data: ticketRows(),
      meta: { name: 'tickets, last 30 days' },
    });
    const notes = await artifacts.put(acme, { kind: 'doc/markdown', data: '# Shift notes' });

    const chains = new Map<string, Chain>();
    const chainFor = (identity: Identity | undefined): Chain => {
      const tenant = identity?.tenant ?? 'unknown';
      let chain = chains.get(tenant);
      if (chain === undefined) {
        chain = canonicalChain({
          permissions: supportDeskPermissions(tenant),
          artifacts,
          checkIns,
          checkInKey: CHECK_IN_KEY,
          credentials: { resolve: (need) => ({ kind: need.kind, value: `sk_demo_${need.service}_7f3a9c` }) },
          evidence: (ctx) => ({
            customer: ctx.args['customerId'],
            amount: ctx.args['amount'],
            rule: 'refunds over 100 EUR need a person',
          }),
          defaultMaxChars: 8000,
        }).use(refundCap);
        chains.set(tenant, chain);
      }
      return chain;
    };
    const dispatcher: Dispatcher = createDispatcher({
      tools: [lookupCustomer, issueRefund, exportReport, ...kb.tools],
      chain: chainFor,
      clock: () => performance.timeOrigin + performance.now(),
    });
    for (const type of EVENT_TYPES) dispatcher.on(type, trace.onEvent as never);
    trace.intro(where, dispatcher, chainFor({ tenant: 'acme' }));

    const onPause = async (request: CheckInRequest): Promise<CheckInDecision> => {
      trace.pause(request);
      const decision =
        options.decide === 'ask' && options.ask !== undefined
          ? await options.ask(request)
          : options.decide === 'decline'
            ? checkInDeclined({ by: 'supervisor (--no)', reason: 'refunds are on hold this week' })
            : checkInApproved({ by: 'supervisor (--yes)', note: 'damage confirmed from photos' });
      trace.decided(decision);
      return decision;
    };

    const outcomes: (DispatchOutcome & { tenant: string })[] = [];
    const converse = async (identity: Identity, steps: ScriptStep[], prompt: string) => {
      trace.conversation(identity, prompt);
      const run = await runAgentLoop({
        model: trace.watch(scriptedModel(steps)),
        dispatcher: trace.shown(dispatcher),
        identity,
        onPause,
        prompt,
      });
      outcomes.push(...run.outcomes.map((outcome) => ({ ...outcome, tenant: identity.tenant ?? '' })));
      if (run.finalText !== undefined) trace.say(run.finalText);
    };
    await converse(
      acme,
      acmeScript({ notes }),
      'Ada Park says her order arrived damaged. Refund her 250 EUR and send me a ticket summary.',
    );
    await converse(
      { tenant: 'globex', principal: 'agent-2', conversation: 'conv-9' },
      globexScript(),
      'What is our refund policy?',
    );
    trace.summary(outcomes);
    return { outcomes, refundsIssued: refundsIssued.length - refundsBefore };
  } finally {
    await kb.close();
    close();
  }
}
