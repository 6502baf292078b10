// The AI SDK adapter: every tool of a dispatcher becomes an AI SDK tool whose execute dispatches through
// the chain. The model reads the outcome's content; identity comes from the SDK's tool context, never
// from the model's input.

import {
  checkInApproved,
  type CheckInDecision,
  type CheckInRequest,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type PausedOutcome,
  type Tool as ToolgateTool,
} from '@toolgate/core';
import {
  jsonSchema,
  tool,
  type JSONSchema7,
  type ModelMessage,
  type Tool,
  type ToolExecutionOptions,
} from 'ai';

/** The tool context `aiSdkTools` reads by default: pass `{ identity }` per tool through `toolsContext`. */
export type ToolgateToolContext = { readonly identity?: Identity };

/** What the AI SDK accepts as a tool's context. */
export type ToolContext = Record<string, unknown>;

/** Where a call's identity comes from: a fixed identity, or a function of the SDK's tool context. */
export type IdentitySource<C> = Identity | ((context: C | undefined) => Identity | undefined);

export interface AiSdkToolsOptions<C extends ToolContext = ToolgateToolContext> {
  /**
   * The identity every call runs for. Default: `context.identity` from the tool's entry in the
   * `toolsContext` given to generateText / streamText / ToolLoopAgent.
   */
  readonly identity?: IdentitySource<C>;
  /**
   * A call paused by a check-in the AI SDK's approval flow does not cover (a `checkIn` function, a
   * policy middleware's `ctx.ask`, or any check-in with `approvals: 'on-pause'`). Return a decision to
   * resume at once; return undefined to leave it pending: the model reads the check-in text and the
   * app resumes later with `dispatcher.resume(request, decision)`.
   */
  readonly onPause?: (
    request: CheckInRequest,
    outcome: PausedOutcome,
  ) => CheckInDecision | undefined | Promise<CheckInDecision | undefined>;
  /**
   * `'ai-sdk'` (default): a tool that declares `checkIn: 'always'` asks for the SDK's own approval
   * (`needsApproval`); the SDK's approval response answers toolgate's check-in. `'on-pause'`: every
   * check-in goes to `onPause`.
   */
  readonly approvals?: 'ai-sdk' | 'on-pause';
  /** Every final outcome, for the app's audit (ledger, receipts, toolSource). */
  readonly onOutcome?: (outcome: DispatchOutcome) => void;
}

/** An AI SDK tool backed by a toolgate dispatcher: input is the model's args, output the text it reads. */
export type AiSdkTool<C extends ToolContext = ToolgateToolContext> = Tool<Record<string, unknown>, string, C>;

// A call that keeps asking new questions is a bug in its chain; stop rather than loop forever.
const MAX_PAUSES_PER_CALL = 10;

/**
 * The dispatcher's tools as an AI SDK `ToolSet`. Each `execute` dispatches through the chain and
 * returns the outcome's `content`: a result, a refusal the model can act on, or a failure; never the
 * raw value (credential values are redacted from the content only).
 *
 * @example
 * const tools = aiSdkTools(dispatcher);
 * await generateText({ model, tools, toolsContext: toolgateContext(tools, { tenant: 'acme' }), prompt });
 */
export function aiSdkTools<C extends ToolContext = ToolgateToolContext>(
  dispatcher: Dispatcher,
  options: AiSdkToolsOptions<C> = {},
): Record<string, AiSdkTool<C>> {
  if (typeof dispatcher?.dispatch !== 'function' || !(dispatcher.tools instanceof Map))
    throw new TypeError('aiSdkTools: dispatcher must come from createDispatcher.');
  const approvals = options.approvals ?? 'ai-sdk';
  if (approvals !== 'ai-sdk' && approvals !== 'on-pause')
    throw new TypeError(`aiSdkTools: approvals must be 'ai-sdk' or 'on-pause'; got ${String(approvals)}.`);
  const identityOf = identityReader(options.identity);
  const tools: Record<string, AiSdkTool<C>> = {};
  for (const declared of dispatcher.tools.values()) {
    const name = declared.schema.name;
    const viaSdk = approvals === 'ai-sdk' && declared.checkIn === 'always';
    tools[name] = tool<Record<string, unknown>, string, C>({
      description: declared.schema.description,
      // No validate function: the chain's validate-args gate judges the input and the model reads its refusal.
      inputSchema: jsonSchema<Record<string, unknown>>(declared.schema.inputSchema as JSONSchema7),
      ...(declared.source !== undefined ? { metadata: { toolgateSource: declared.source } } : {}),
      ...(viaSdk ? { needsApproval: true } : {}),
      execute: (input, execution) =>
        runCall(dispatcher, declared, input, execution, {
          identity: identityOf(execution.context as C | undefined),
          viaSdk,
          options,
        }),
    }) as AiSdkTool<C>;
  }
  return tools;
}

/**
 * The `toolsContext` that hands `identity` to every tool in `tools` (the default identity source).
 *
 * @example
 * generateText({ model, tools, toolsContext: toolgateContext(tools, { tenant: 'acme', principal: 'ann' }) })
 */
export function toolgateContext(
  tools: Readonly<Record<string, unknown>>,
  identity: Identity,
): Record<string, ToolgateToolContext> {
  const context: Record<string, ToolgateToolContext> = {};
  for (const name of Object.keys(tools)) context[name] = { identity };
  return context;
}

function identityReader<C>(
  source: IdentitySource<C> | undefined,
): (context: C | undefined) => Identity | undefined {
  if (typeof source === 'function') return source;
  if (source !== undefined) return () => source;
  return (context) => {
    const identity = (context as ToolgateToolContext | undefined)?.identity;
    return typeof identity === 'object' && identity !== null ? identity : undefined;
  };
}

async function runCall<C extends ToolContext>(
  dispatcher: Dispatcher,
  declared: ToolgateTool,
  input: unknown,
  execution: ToolExecutionOptions<C>,
  run: { identity: Identity | undefined; viaSdk: boolean; options: AiSdkToolsOptions<C> },
): Promise<string> {
  const { identity, viaSdk, options } = run;
  const signal = execution.abortSignal;
  let outcome = await dispatcher.dispatch(
    { toolName: declared.schema.name, args: input, toolCallId: execution.toolCallId },
    { ...(identity !== undefined ? { identity } : {}), ...(signal !== undefined ? { signal } : {}) },
  );
  for (let pauses = 0; outcome.kind === 'paused' && pauses < MAX_PAUSES_PER_CALL; pauses++) {
    const decision = await decide(outcome, execution, viaSdk, options);
    if (decision === undefined) break;
    outcome = await dispatcher.resume(outcome.checkIn, decision, signal !== undefined ? { signal } : {});
  }
  try {
    options.onOutcome?.(outcome);
  } catch {
    // An observer that throws is the observer's bug; the model still reads what the chain decided.
  }
  return outcome.content;
}

/** Who answers a pause: the SDK's approval for the check-in gate it asked about, otherwise `onPause`. */
async function decide<C extends ToolContext>(
  outcome: PausedOutcome,
  execution: ToolExecutionOptions<C>,
  viaSdk: boolean,
  options: AiSdkToolsOptions<C>,
): Promise<CheckInDecision | undefined> {
  // Only the check-in gate's own question was put to the human through the SDK; a policy
  // middleware's ask was not, so an SDK approval must not answer it.
  if (viaSdk && outcome.checkIn.asker === 'check-in') {
    const approvalId = approvedInMessages(execution.messages, execution.toolCallId);
    if (approvalId !== undefined) return checkInApproved({ by: `ai-sdk approval ${approvalId}` });
  }
  if (options.onPause === undefined) return undefined;
  try {
    return await options.onPause(outcome.checkIn, outcome);
  } catch {
    // An onPause that throws decided nothing: the call stays paused, never approved.
    return undefined;
  }
}

/** The id of an approved `tool-approval-response` for `toolCallId` in the messages the SDK executed with. */
function approvedInMessages(messages: readonly ModelMessage[], toolCallId: string): string | undefined {
  const requested = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content)
      if (part.type === 'tool-approval-request' && part.toolCallId === toolCallId)
        requested.add(part.approvalId);
  }
  if (requested.size === 0) return undefined;
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content)
      if (part.type === 'tool-approval-response' && part.approved && requested.has(part.approvalId))
        return part.approvalId;
  }
  return undefined;
}
