// The portable suite: DESIGN contract cases that need no Node API, run unchanged on Node, Bun, Deno
// and workerd. It imports only @toolgate/core, @toolgate/middleware and @toolgate/audit, asserts with
// plain throws, and returns its findings as JSON so each runtime's runner can report them.

import {
  carryOutDecision,
  checkInApproved,
  checkInDeclined,
  createDispatcher,
  defineTool,
  EVENT_TYPES,
  inMemoryCheckIns,
  isArtifactRef,
  type CredentialProvider,
  type DispatchOutcome,
  type PermissionChecker,
} from '@toolgate/core';
import { inboxApp, staticApprovers } from '@toolgate/inbox';
import { canonicalChain, inMemoryArtifacts, type SchemaValidator } from '@toolgate/middleware';
import { auditLog, generateAuditKeys, inMemoryAuditStore, verifyAuditLog } from '@toolgate/audit';
import { SCHEMA_CASES } from '../test-support/schema-cases';
import { policyCases } from './policy-cases';

export interface CaseResult {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
}

export interface SuiteReport {
  readonly validator: string;
  readonly cases: readonly CaseResult[];
  /** What the model read for each shared schema case, to compare word for word across validators and runtimes. */
  readonly refusals: readonly { readonly name: string; readonly content: string }[];
}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

function expectKind<K extends DispatchOutcome['kind']>(
  outcome: DispatchOutcome,
  kind: K,
): Extract<DispatchOutcome, { kind: K }> {
  check(outcome.kind === kind, `expected a ${kind} outcome, got ${outcome.kind}: ${outcome.content ?? ''}`);
  return outcome as Extract<DispatchOutcome, { kind: K }>;
}

const CHECK_IN_KEY = 'portable-suite-check-in-key-0123456789';
const SECRET = 'sk_live_portable_"quote"\\slash';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Looks up an order',
  inputSchema: {
    type: 'object',
    required: ['orderId'],
    additionalProperties: false,
    properties: {
      orderId: { type: 'string', pattern: '^ord_[0-9]+$' },
      verbose: { type: 'boolean', default: false },
    },
  },
  execute: (args: { orderId: string; verbose?: boolean }) => ({
    orderId: args.orderId,
    verbose: args.verbose,
  }),
});

function refundTool(runs: { count: number }) {
  return defineTool({
    name: 'refund',
    description: 'Refunds an order',
    inputSchema: {
      type: 'object',
      required: ['orderId', 'amount'],
      properties: { orderId: { type: 'string' }, amount: { type: 'number', minimum: 0 } },
    },
    capabilities: ['payments'],
    checkIn: 'always',
    execute: (args: { orderId: string; amount: number }) => {
      runs.count += 1;
      return `refunded ${args.amount} on ${args.orderId}`;
    },
  });
}

const summarize = defineTool({
  name: 'summarize_report',
  description: 'Summarizes a report artifact',
  inputSchema: { type: 'object', required: ['report'], properties: { report: { type: 'string' } } },
  wants: { report: 'report' },
  execute: (args: { report: unknown }) => `summary of ${JSON.stringify(args.report).length} chars`,
});

const upstream = defineTool({
  name: 'call_upstream',
  description: 'Calls an upstream API with a key',
  inputSchema: { type: 'object', properties: {} },
  needs: { kind: 'api_key', service: 'upstream' },
  execute: (_args, ctx) => ({ used: ctx.credential?.reveal() === SECRET, echoed: ctx.credential?.reveal() }),
});

const bigReport = defineTool({
  name: 'big_report',
  description: 'Returns a large report',
  inputSchema: { type: 'object', properties: {} },
  resultCeiling: { maxChars: 100, narrowBy: ['limit'] },
  execute: () => 'x'.repeat(5_000),
});

const credentials: CredentialProvider = { resolve: () => ({ kind: 'api_key', value: SECRET }) };

function cases(validator: SchemaValidator): Record<string, () => Promise<void>> {
  return {
    ...policyCases(validator),
    async 'a governed call runs, with a ledger row per gate and a chainId'() {
      const dispatcher = createDispatcher({ tools: [lookup], chain: canonicalChain({ validator }) });
      const outcome = expectKind(
        await dispatcher.dispatch({ toolName: 'lookup_order', args: { orderId: 'ord_1' } }),
        'result',
      );
      check(outcome.content === '{"orderId":"ord_1","verbose":false}', `content was ${outcome.content}`);
      check(outcome.ledger.length === 7, `ledger has ${outcome.ledger.length} rows`);
      check(/^chain_[0-9a-f]{16}$/.test(outcome.chainId), `chainId was ${outcome.chainId}`);
    },

    async 'args as a JSON string are parsed; malformed JSON is a refusal'() {
      const dispatcher = createDispatcher({ tools: [lookup], chain: canonicalChain({ validator }) });
      expectKind(
        await dispatcher.dispatch({ toolName: 'lookup_order', args: '{"orderId":"ord_2"}' }),
        'result',
      );
      const bad = expectKind(
        await dispatcher.dispatch({ toolName: 'lookup_order', args: '{"orderId":' }),
        'refused',
      );
      check(bad.content.includes('JSON'), `refusal was ${bad.content}`);
    },

    async 'an unknown tool is refused by dispatch, listing the known tools'() {
      const dispatcher = createDispatcher({ tools: [lookup], chain: canonicalChain({ validator }) });
      const outcome = expectKind(await dispatcher.dispatch({ toolName: 'drop_tables', args: {} }), 'refused');
      check(outcome.gate === 'dispatch' && outcome.content.includes('lookup_order'), outcome.content);
    },

    async 'invalid args are refused naming the path, never the value'() {
      const dispatcher = createDispatcher({ tools: [lookup], chain: canonicalChain({ validator }) });
      const outcome = expectKind(
        await dispatcher.dispatch({ toolName: 'lookup_order', args: { orderId: 'DROP-secret-77' } }),
        'refused',
      );
      check(outcome.gate === 'validate-args' && outcome.content.includes("'orderId'"), outcome.content);
      check(!outcome.content.includes('DROP-secret-77'), 'the refusal repeats the value');
    },

    async 'a denying checker refuses; a throwing checker fails closed'() {
      const deny: PermissionChecker = { check: () => ({ allow: false, reason: 'refunds are closed today' }) };
      const refused = expectKind(
        await createDispatcher({
          tools: [lookup],
          chain: canonicalChain({ validator, permissions: deny }),
        }).dispatch({
          toolName: 'lookup_order',
          args: { orderId: 'ord_1' },
        }),
        'refused',
      );
      check(
        refused.gate === 'permission' && refused.content.includes('refunds are closed today'),
        refused.content,
      );
      const broken: PermissionChecker = {
        check: () => {
          throw new Error('db password hunter2');
        },
      };
      const failed = expectKind(
        await createDispatcher({
          tools: [lookup],
          chain: canonicalChain({ validator, permissions: broken }),
        }).dispatch({
          toolName: 'lookup_order',
          args: { orderId: 'ord_1' },
        }),
        'refused',
      );
      check(failed.gate === 'permission' && !failed.content.includes('hunter2'), failed.content);
    },

    async 'a signed check-in pauses, survives JSON, resumes once, and refuses a replay'() {
      const runs = { count: 0 };
      const ranTimes = () => runs.count;
      const dispatcher = createDispatcher({
        tools: [refundTool(runs)],
        chain: canonicalChain({ validator, checkInKey: CHECK_IN_KEY }),
      });
      const paused = expectKind(
        await dispatcher.dispatch(
          { toolName: 'refund', args: { orderId: 'ord_9', amount: 25 } },
          { identity: { tenant: 'acme' } },
        ),
        'paused',
      );
      check(/^[0-9a-f]{64}$/.test(paused.checkIn.signature), 'the signature is hex HMAC-SHA-256');
      check(ranTimes() === 0, 'the tool ran before approval');
      const request = JSON.parse(JSON.stringify(paused.checkIn)) as typeof paused.checkIn;
      const approved = expectKind(
        await dispatcher.resume(request, checkInApproved({ by: 'supervisor' })),
        'result',
      );
      check(approved.content === 'refunded 25 on ord_9' && ranTimes() === 1, approved.content);
      check(approved.receipts?.[0]?.by === 'supervisor', 'the approval left a receipt');
      const replay = await dispatcher.resume(request, checkInApproved({ by: 'supervisor' }));
      check(replay.kind === 'refused' && ranTimes() === 1, 'an approval was honoured twice');
    },

    async 'a tampered or declined check-in never runs the tool'() {
      const runs = { count: 0 };
      const dispatcher = createDispatcher({
        tools: [refundTool(runs)],
        chain: canonicalChain({ validator, checkInKey: CHECK_IN_KEY }),
      });
      const first = expectKind(
        await dispatcher.dispatch({ toolName: 'refund', args: { orderId: 'ord_9', amount: 25 } }),
        'paused',
      );
      const tampered = { ...first.checkIn, args: { orderId: 'ord_9', amount: 25_000 } };
      expectKind(await dispatcher.resume(tampered, checkInApproved({ by: 'supervisor' })), 'refused');
      const second = expectKind(
        await dispatcher.dispatch({ toolName: 'refund', args: { orderId: 'ord_9', amount: 25 } }),
        'paused',
      );
      const declined = expectKind(
        await dispatcher.resume(
          second.checkIn,
          checkInDeclined({ by: 'supervisor', reason: 'not eligible' }),
        ),
        'refused',
      );
      check(declined.content.includes('not eligible') && runs.count === 0, declined.content);
    },

    async 'an artifact ref resolves in its own scope only'() {
      const artifacts = inMemoryArtifacts();
      const ref = await artifacts.put({ tenant: 'acme' }, { kind: 'report', data: { rows: [1, 2, 3] } });
      check(isArtifactRef(ref) && /^art_[0-9A-Za-z]{22}$/.test(ref), `ref was ${ref}`);
      const dispatcher = createDispatcher({
        tools: [summarize],
        chain: canonicalChain({ validator, artifacts }),
      });
      const mine = expectKind(
        await dispatcher.dispatch(
          { toolName: 'summarize_report', args: { report: ref } },
          { identity: { tenant: 'acme' } },
        ),
        'result',
      );
      check(mine.content === 'summary of 16 chars', mine.content);
      const theirs = expectKind(
        await dispatcher.dispatch(
          { toolName: 'summarize_report', args: { report: ref } },
          { identity: { tenant: 'globex' } },
        ),
        'refused',
      );
      const unknown = expectKind(
        await dispatcher.dispatch(
          { toolName: 'summarize_report', args: { report: 'art_0000000000000000000000' } },
          { identity: { tenant: 'globex' } },
        ),
        'refused',
      );
      check(theirs.content === unknown.content.replace('art_0000000000000000000000', ref), theirs.content);
    },

    async 'a credential reaches the tool and nothing else'() {
      const seen: string[] = [];
      const dispatcher = createDispatcher({
        tools: [upstream],
        chain: canonicalChain({ validator, credentials }),
      });
      for (const type of EVENT_TYPES)
        dispatcher.on(type, (event: unknown) => void seen.push(JSON.stringify(event)));
      const outcome = expectKind(
        await dispatcher.dispatch({ toolName: 'call_upstream', args: {} }),
        'result',
      );
      check(outcome.content.includes('"used":true'), outcome.content);
      const everything = JSON.stringify(outcome) + seen.join('');
      check(!everything.includes('sk_live_portable'), 'the secret leaked');
    },

    async 'an oversized result is refused with its true size, and never enters the outcome'() {
      const dispatcher = createDispatcher({ tools: [bigReport], chain: canonicalChain({ validator }) });
      const outcome = expectKind(await dispatcher.dispatch({ toolName: 'big_report', args: {} }), 'refused');
      check(outcome.gate === 'result-ceiling' && outcome.content.includes('5,000'), outcome.content);
      check(!JSON.stringify(outcome).includes('xxxxxxxxxx'), 'the payload entered the outcome');
    },

    async 'per-tenant chains decide per call and carry their own chainId'() {
      const strict = canonicalChain({
        validator,
        permissions: { check: () => ({ allow: false, reason: 'globex is read-only' }) },
      });
      const open = canonicalChain({ validator });
      const dispatcher = createDispatcher({
        tools: [lookup],
        chain: (identity) => (identity?.tenant === 'globex' ? strict : open),
      });
      const acme = await dispatcher.dispatch(
        { toolName: 'lookup_order', args: { orderId: 'ord_1' } },
        { identity: { tenant: 'acme' } },
      );
      const globex = await dispatcher.dispatch(
        { toolName: 'lookup_order', args: { orderId: 'ord_1' } },
        { identity: { tenant: 'globex' } },
      );
      check(acme.kind === 'result' && globex.kind === 'refused', `${acme.kind} / ${globex.kind}`);
      check(acme.chainId !== globex.chainId, 'both tenants ran under one chainId');
    },

    async 'an aborted call does not run the tool'() {
      const runs = { count: 0 };
      const slow = defineTool({
        name: 'slow',
        description: 'slow',
        inputSchema: { type: 'object', properties: {} },
        execute: () => {
          runs.count += 1;
          return 'ran';
        },
      });
      const controller = new AbortController();
      controller.abort();
      const outcome = await createDispatcher({
        tools: [slow],
        chain: canonicalChain({ validator }),
      }).dispatch({ toolName: 'slow', args: {} }, { signal: controller.signal });
      check(outcome.kind !== 'result' && runs.count === 0, `outcome was ${outcome.kind}`);
    },

    async 'the approval inbox shows a check-in escaped and carries out a narrowed approval once'() {
      const ran: number[] = [];
      const refund = defineTool({
        name: 'refund',
        description: 'refund',
        inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
        checkIn: 'always',
        execute: (args: { amount: number }) => {
          ran.push(args.amount);
          return 'refunded';
        },
      });
      const checkInKey = 'portable-check-in-key-0123456789abcdef';
      const checkIns = inMemoryCheckIns();
      const chain = canonicalChain({ validator, checkInKey, checkIns });
      const dispatcher = createDispatcher({ tools: [refund], chain });
      const paused = expectKind(
        await dispatcher.dispatch(
          { toolName: 'refund', args: { amount: 500, note: '<script>x</script>' } },
          { identity: { tenant: 'acme' } },
        ),
        'paused',
      );
      const inbox = inboxApp({
        checkIns,
        checkInKey,
        approvers: staticApprovers([{ token: 'portable-approver-token', id: 'ana', tenants: ['acme'] }]),
        carryOut: (record) => carryOutDecision(dispatcher, record, { checkIns }),
      });
      const auth = { authorization: 'Bearer portable-approver-token' };
      const page = await (await inbox.request(`/check-ins/${paused.checkIn.id}`, { headers: auth })).text();
      check(
        page.includes('&lt;script&gt;x&lt;/script&gt;') && !page.includes('<script>x'),
        'the page is not escaped',
      );
      const approve = () =>
        inbox.request(`/api/check-ins/${paused.checkIn.id}/approve`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ args: { amount: 200 } }),
        });
      const [first, second] = await Promise.all([approve(), approve()]);
      check(
        [first.status, second.status].sort().join() === '200,409',
        `statuses ${first.status}, ${second.status}`,
      );
      check(ran.join() === '200', `the tool ran with ${ran.join() || 'nothing'}`);
    },

    async 'the audit log signs and chains each outcome, and verification finds an edit (Web Crypto Ed25519)'() {
      const keys = await generateAuditKeys();
      const store = inMemoryAuditStore();
      const audit = auditLog({ store, signingKey: keys.privateKey, digestKey: CHECK_IN_KEY });
      const dispatcher = audit.attach(
        createDispatcher({ tools: [lookup], chain: canonicalChain({ validator }) }),
      );
      await dispatcher.dispatch(
        { toolName: 'lookup_order', args: { orderId: 'ord_1' } },
        { identity: { tenant: 'acme' } },
      );
      await dispatcher.dispatch({ toolName: 'lookup_order', args: { orderId: 'nope' } });
      const verdict = await verifyAuditLog(store, keys.publicKey);
      check(verdict.ok && verdict.count === 2, `the log did not verify: ${JSON.stringify(verdict)}`);
      const records = await store.read(0, 2);
      check(
        records[1]?.kind === 'refused' &&
          records[0]?.argsDigest === (await audit.digest({ orderId: 'ord_1' })),
        'records',
      );
      const edited = await verifyAuditLog(
        [{ ...records[0]!, tenant: 'globex' }, records[1]!],
        keys.publicKey,
      );
      check(!edited.ok && edited.seq === 1, `an edit went unseen: ${JSON.stringify(edited)}`);
    },
  };
}

async function refusalsOf(validator: SchemaValidator): Promise<SuiteReport['refusals']> {
  const refusals = [];
  for (const { name, schema, args } of SCHEMA_CASES) {
    const tool = defineTool({ name: 'probe', description: 'probe', inputSchema: schema, execute: (a) => a });
    const outcome = await createDispatcher({ tools: [tool], chain: canonicalChain({ validator }) }).dispatch({
      toolName: 'probe',
      args,
    });
    refusals.push({ name, content: outcome.content ?? '' });
  }
  return refusals;
}

/** Runs every case with the given validator; never throws. */
export async function runPortableSuite(
  validatorName: string,
  validator: SchemaValidator,
): Promise<SuiteReport> {
  const results: CaseResult[] = [];
  for (const [name, run] of Object.entries(cases(validator))) {
    try {
      await run();
      results.push({ name, ok: true });
    } catch (error) {
      results.push({ name, ok: false, error: error instanceof Error ? error.message : String(error) });
    }
  }
  let refusals: SuiteReport['refusals'] = [];
  try {
    refusals = await refusalsOf(validator);
  } catch (error) {
    results.push({
      name: 'shared schema cases',
      ok: false,
      error: error instanceof Error ? error.message : String(error),
    });
  }
  return { validator: validatorName, cases: results, refusals };
}
