// AI SDK 7's `toolApproval` answered by the chain: for a governed tool the chain runs up to its
// check-in when the SDK asks, so the person approves the request the model's call raised, a refusal is
// the SDK's denial, and the approval that comes back is answered in the ToolSet's `execute`, once.
// The app's own rules still decide first what only they know (deny, or ask a person).

import type { CheckInStore, Dispatcher, DispatchOutcome, Tool as ToolgateTool } from '@toolgate/core';
import type { ModelMessage } from 'ai';
import { governor, type ApprovalStatus } from './governed-call';
import { identityReader, type IdentitySource, type ToolContext, type ToolgateToolContext } from './tools';

/**
 * The app's own `toolApproval`, in either of the SDK's forms: a map of tool name to a status or a
 * function `(input, { toolCallId, messages, toolContext, runtimeContext })`, or one function of
 * `{ toolCall, tools, toolsContext, runtimeContext, messages }`.
 */
export type AppRules = Readonly<Record<string, unknown>> | ((options: never) => unknown);

export interface ToolgateApprovalOptions<C extends ToolContext = ToolgateToolContext> {
  /** The identity every call runs for; the same source given to `aiSdkTools`. Default: `context.identity`. */
  readonly identity?: IdentitySource<C>;
  /** The chain's check-in store; the same one given to `aiSdkTools`. */
  readonly checkIns?: CheckInStore;
  /**
   * The app's own approval rules, in either of the SDK's forms (a per-tool map or one function). They
   * are asked first: `denied` stands, `user-approval` asks a person even where the chain would not
   * (that approval then answers exactly that call, once); the chain's check-in is asked whatever
   * they say, so no rule approves a governed call a person must approve.
   */
  readonly rules?: AppRules;
  /** Calls the chain refused while the SDK asked (the SDK denies them, so `execute` never sees them). */
  readonly onOutcome?: (outcome: DispatchOutcome) => void;
}

/** What the SDK hands a `toolApproval` function. */
export interface ToolApprovalQuestion {
  readonly toolCall: { readonly toolName: string; readonly toolCallId: string; readonly input: unknown };
  readonly tools?: Readonly<Record<string, unknown>> | undefined;
  readonly toolsContext?: unknown;
  readonly runtimeContext?: unknown;
  readonly messages: ModelMessage[];
}

const STATUSES = new Set(['not-applicable', 'approved', 'denied', 'user-approval']);

/** The SDK's reading of a status; anything it would not accept asks a person (fail closed). */
function statusOf(value: unknown): ApprovalStatus {
  if (value === undefined || value === null) return { type: 'not-applicable' };
  if (typeof value === 'string')
    return STATUSES.has(value) ? ({ type: value } as ApprovalStatus) : { type: 'user-approval' };
  if (typeof value === 'object' && STATUSES.has((value as { type?: unknown }).type as string)) {
    const { type, reason } = value as { type: ApprovalStatus['type']; reason?: unknown };
    return typeof reason === 'string' && type !== 'not-applicable'
      ? { type, reason }
      : ({ type } as ApprovalStatus);
  }
  return { type: 'user-approval' };
}

const own = (record: unknown, key: string): unknown =>
  typeof record === 'object' && record !== null && Object.hasOwn(record, key)
    ? (record as Record<string, unknown>)[key]
    : undefined;

/** The app's answer for this call, the way the SDK would read `rules`; absent when it has none. */
async function appAnswer(
  rules: ToolgateApprovalOptions['rules'],
  asked: ToolApprovalQuestion,
): Promise<ApprovalStatus | undefined> {
  if (rules === undefined) return undefined;
  if (typeof rules === 'function') return statusOf(await rules(asked as never));
  const name = asked.toolCall.toolName;
  const entry = own(rules, name);
  if (entry === undefined || entry === null) return undefined;
  if (typeof entry !== 'function') return statusOf(entry);
  return statusOf(
    await (entry as (input: unknown, options: unknown) => unknown)(asked.toolCall.input, {
      toolCallId: asked.toolCall.toolCallId,
      messages: asked.messages,
      toolContext: own(asked.toolsContext, name),
      runtimeContext: asked.runtimeContext,
    }),
  );
}

/** What the SDK does for a tool nobody gave a rule: the tool's own `needsApproval`. */
async function toolsOwnAnswer(asked: ToolApprovalQuestion): Promise<ApprovalStatus> {
  const name = asked.toolCall.toolName;
  const needs = own(own(asked.tools, name), 'needsApproval');
  if (needs === undefined || needs === null) return { type: 'not-applicable' };
  const yes =
    typeof needs === 'function'
      ? await (needs as (input: unknown, options: unknown) => unknown)(asked.toolCall.input, {
          toolCallId: asked.toolCall.toolCallId,
          messages: asked.messages,
          context: own(asked.toolsContext, name),
        })
      : needs;
  return yes === true ? { type: 'user-approval' } : { type: 'not-applicable' };
}

/**
 * A `toolApproval` for generateText / streamText / ToolLoopAgent that asks the chain. For a tool of
 * `dispatcher`, the chain runs up to its check-in when the SDK asks: `user-approval` when it pauses for
 * a person (the request is raised now, and the SDK's approval answers it once in the ToolSet's
 * `execute`), `denied` with the refusal's reason when it refuses, `not-applicable` when it does not
 * pause (the call then runs once: `execute` answers with that outcome). Other tools get `rules`.
 *
 * @example
 * const tools = aiSdkTools(dispatcher, { checkIns });
 * await generateText({
 *   model, tools, toolsContext: toolgateContext(tools, identity), prompt,
 *   toolApproval: toolgateApproval(dispatcher, { checkIns, rules: { refund: (input) => input.amount >= 100 ? 'user-approval' : 'not-applicable' } }),
 * });
 */
export function toolgateApproval<C extends ToolContext = ToolgateToolContext>(
  dispatcher: Dispatcher,
  options: ToolgateApprovalOptions<C> = {},
): (asked: ToolApprovalQuestion) => Promise<ApprovalStatus> {
  if (typeof dispatcher?.dispatch !== 'function' || !(dispatcher.tools instanceof Map))
    throw new TypeError('toolgateApproval: dispatcher must come from createDispatcher.');
  const { rules, checkIns } = options;
  if (rules !== undefined && (typeof rules !== 'object' || rules === null) && typeof rules !== 'function')
    throw new TypeError(
      'toolgateApproval: rules must be a per-tool map or a function, as toolApproval takes.',
    );
  if (checkIns !== undefined && (typeof checkIns?.list !== 'function' || typeof checkIns.get !== 'function'))
    throw new TypeError(
      'toolgateApproval: checkIns must be a CheckInStore (the one the chain keeps check-ins in).',
    );
  const identityOf = identityReader(options.identity);
  const governed = governor(dispatcher, options, identityOf);
  const byName = new Map<string, ToolgateTool>();
  for (const declared of dispatcher.tools.values()) byName.set(declared.schema.name, declared);

  return async function approval(asked) {
    const name = asked.toolCall.toolName;
    const declared = byName.get(name);
    const app = await appAnswer(rules, asked);
    if (declared === undefined) return app ?? toolsOwnAnswer(asked);
    const identity = identityOf(own(asked.toolsContext, name) as C | undefined);
    return governed.question(
      declared,
      asked.toolCall.input,
      { toolCallId: asked.toolCall.toolCallId, messages: asked.messages },
      identity,
      app ?? { type: 'not-applicable' },
      'deny',
    );
  };
}
