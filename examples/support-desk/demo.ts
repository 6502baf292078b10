// The support-desk demo as a function: build the tools, stores and per-tenant chains, let a scripted
// model talk to them, and report every gate decision. main.ts is the command line around it.

import {
  awaitDecision,
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  decisionOf,
  EVENT_TYPES,
  type Chain,
  type CheckInDecision,
  type CheckInRequest,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';
import { canonicalChain } from '@toolgate/middleware';
import { policyGate } from '@toolgate/policy';
import { runAgentLoop, scriptedModel, type ScriptStep } from '@toolgate/testing';
import { connectKnowledgeBase } from './knowledge-base';
import { startInbox, type DemoInbox } from './inbox';
import {
  describeRules,
  limitsFor,
  refundCap,
  refundCapRule,
  rulesFor,
  supportDeskPermissions,
} from './policy';
import { acmeScript, globexScript } from './script';
import { openStores, type StoreKind } from './stores';
import { createTrace, type Trace } from './trace';
import { exportReport, issueRefund, lookupCustomer, refundsIssued, ticketRows } from './tools';

export interface DemoOptions {
  /**
   * How a paused refund is decided: the person at the terminal (`ask`), a flag (`approve`,
   * `decline`), a person in the approval inbox (`inbox`), or nobody (`unanswered`: no terminal and
   * no flag), which declines.
   */
  readonly decide: 'ask' | 'approve' | 'decline' | 'inbox' | 'unanswered';
  /** With `decide: 'inbox'`: the port the inbox listens on (default a free one). */
  readonly inboxPort?: number;
  /** With `decide: 'inbox'`: told where the inbox is once it listens (the trace prints it too). */
  readonly onInbox?: (inbox: Pick<DemoInbox, 'url' | 'token'>) => void;
  readonly ask?: (request: CheckInRequest) => Promise<CheckInDecision>;
  readonly json: boolean;
  readonly color: boolean;
  /** Show what the model reads in full. */
  readonly verbose?: boolean;
  /** Columns to fit the trace to (the terminal's); 80 when absent. */
  readonly width?: number;
  readonly store: StoreKind;
  readonly dbPath?: string;
  readonly write: (line: string) => void;
  /** How the refund cap is written: one CEL rule in the policy gate (default), or a TypeScript middleware. */
  readonly refundCap?: 'cel' | 'typescript';
}

export interface DemoResult {
  readonly outcomes: readonly (DispatchOutcome & { tenant: string })[];
  /** Every check-in decision, in order. */
  readonly decisions: readonly CheckInDecision[];
  /** The chain id each tenant's calls ran under. */
  readonly chainIds: Readonly<Record<string, string>>;
  /** What each tenant's model said last. */
  readonly finalWords: Readonly<Record<string, string>>;
  readonly refundsIssued: number;
}

// A demo key; a deployment reads its own from a secret store.
const CHECK_IN_KEY = 'support-desk-demo-check-in-key-0001';

/** What nobody answering means: the refund is declined, and the model reads why. */
export const UNANSWERED = {
  by: 'the unattended demo',
  reason:
    'nobody was at a terminal to approve it and no --yes was given, and a refund is never approved by default',
} as const;

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const trace: Trace = createTrace(options);
  const { artifacts, checkIns, limits, close, where } = await openStores(
    options.store,
    options.dbPath !== undefined ? { dbPath: options.dbPath } : {},
  );
  const kb = await connectKnowledgeBase();
  const refundsBefore = refundsIssued.length;
  let inbox: DemoInbox | undefined;
  try {
    if (options.decide === 'inbox') {
      inbox = await startInbox({
        checkIns,
        artifacts,
        checkInKey: CHECK_IN_KEY,
        ...(options.inboxPort !== undefined ? { port: options.inboxPort } : {}),
      });
      trace.inbox(inbox.url, inbox.token);
      options.onInbox?.({ url: inbox.url, token: inbox.token });
    }
    // The model passes data by reference: the tenant's export lives in its own artifact scope.
    const acme: Identity = { tenant: 'acme', principal: 'agent-7', conversation: 'conv-1' };
    await artifacts.put(acme, {
      kind: 'dataset/rows',
      data: ticketRows(),
      meta: { name: 'tickets, last 30 days' },
    });
    const notes = await artifacts.put(acme, { kind: 'doc/markdown', data: '# Shift notes' });

    // One chain per tenant: each has its own permission rules and refund cap, so its own chain id.
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
          ...(limitsFor(tenant).length > 0 ? { limits: { store: limits, limits: limitsFor(tenant) } } : {}),
          ...(options.refundCap !== 'typescript'
            ? { policy: policyGate([refundCapRule(rulesFor(tenant).refundCap)]) }
            : {}),
        });
        if (options.refundCap === 'typescript') chain = chain.use(refundCap(rulesFor(tenant).refundCap));
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
    const globex: Identity = { tenant: 'globex', principal: 'agent-2', conversation: 'conv-9' };
    trace.intro(
      where,
      dispatcher,
      [acme, globex].map((id) => [id.tenant!, chainFor(id), describeRules(id.tenant!)] as const),
    );

    const decisions: CheckInDecision[] = [];
    const onPause = async (request: CheckInRequest): Promise<CheckInDecision> => {
      trace.pause(request);
      let decision: CheckInDecision;
      if (options.decide === 'inbox') decision = await decidedInInbox(request);
      else if (options.decide === 'ask' && options.ask !== undefined) decision = await options.ask(request);
      else if (options.decide === 'approve')
        decision = checkInApproved({ by: 'supervisor (--yes)', note: 'damage confirmed from photos' });
      else if (options.decide === 'decline')
        decision = checkInDeclined({ by: 'supervisor (--no)', reason: 'refunds are on hold this week' });
      else {
        trace.unanswered();
        decision = checkInDeclined(UNANSWERED);
      }
      decisions.push(decision);
      trace.decided(decision);
      return decision;
    };

    // The refund waits in the store until a person decides it in the inbox, or it expires.
    const decidedInInbox = async (request: CheckInRequest): Promise<CheckInDecision> => {
      trace.waitingInInbox(inbox!.url, request.id);
      const record = await awaitDecision(checkIns, request.id, { pollMs: 200 });
      if (record?.decision !== undefined) return decisionOf(record.decision);
      return checkInDeclined({ by: 'the inbox', reason: 'nobody decided before the request expired' });
    };

    const outcomes: (DispatchOutcome & { tenant: string })[] = [];
    const finalWords: Record<string, string> = {};
    const converse = async (identity: Identity, steps: ScriptStep[], prompt: string) => {
      trace.conversation(identity, chainFor(identity), prompt);
      const run = await runAgentLoop({
        model: trace.watch(scriptedModel(steps)),
        dispatcher: trace.shown(dispatcher),
        identity,
        onPause,
        prompt,
      });
      outcomes.push(...run.outcomes.map((outcome) => ({ ...outcome, tenant: identity.tenant ?? '' })));
      if (run.finalText !== undefined) {
        finalWords[identity.tenant ?? ''] = run.finalText;
        trace.say(run.finalText);
      }
    };
    await converse(
      acme,
      acmeScript({ notes }),
      'Ada Park says her order arrived damaged. Refund her 250 EUR and send me a ticket summary.',
    );
    await converse(
      globex,
      globexScript(),
      'What is our refund policy? Lin Osei wants 250 EUR back for a late delivery.',
    );
    const issued = refundsIssued.length - refundsBefore;
    trace.summary(outcomes);
    const chainIds = Object.fromEntries([acme, globex].map((id) => [id.tenant, chainFor(id).id]));
    return { outcomes, decisions, chainIds, finalWords, refundsIssued: issued };
  } finally {
    await inbox?.close();
    await kb.close();
    await close();
  }
}
