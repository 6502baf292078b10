// The AI SDK adapter: every tool of a dispatcher becomes an AI SDK tool whose execute dispatches through
// the chain. The model reads the outcome's content; identity comes from the SDK's tool context, never
// from the model's input.

import type {
  CheckInDecision,
  CheckInRequest,
  CheckInStore,
  Dispatcher,
  DispatchOutcome,
  Identity,
  PausedOutcome,
} from '@toolgate/core';
import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai';
import { governor } from './governed-call';

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
   * (`needsApproval`); the check-in is raised when the SDK asks, and the SDK's approval answers that
   * request once. `'on-pause'`: every check-in goes to `onPause`.
   */
  readonly approvals?: 'ai-sdk' | 'on-pause';
  /**
   * The chain's check-in store (what `checkIns` is in `canonicalChain`). With it, an approval that
   * comes back to another process sharing the store finds the request raised when the SDK asked;
   * without it, only requests this process raised are found, and any other approval is refused.
   */
  readonly checkIns?: CheckInStore;
  /** Every final outcome, for the app's audit (ledger, receipts, toolSource). */
  readonly onOutcome?: (outcome: DispatchOutcome) => void;
}

/** An AI SDK tool backed by a toolgate dispatcher: input is the model's args, output the text it reads. */
export type AiSdkTool<C extends ToolContext = ToolgateToolContext> = Tool<Record<string, unknown>, string, C>;

/**
 * The dispatcher's tools as an AI SDK `ToolSet`. Each `execute` dispatches through the chain and
 * returns the outcome's `content`: a result, a refusal the model can act on, or a failure; never the
 * raw value (credential values are redacted from the content only).
 *
 * @example
 * const tools = aiSdkTools(dispatcher, { checkIns });
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
  const checkIns = options.checkIns;
  if (checkIns !== undefined && (typeof checkIns?.list !== 'function' || typeof checkIns.get !== 'function'))
    throw new TypeError(
      'aiSdkTools: checkIns must be a CheckInStore (the one the chain keeps check-ins in).',
    );
  const identityOf = identityReader(options.identity);
  const governed = governor(dispatcher, options, identityOf);
  const tools: Record<string, AiSdkTool<C>> = {};
  for (const declared of dispatcher.tools.values()) {
    const name = declared.schema.name;
    const viaSdk = approvals === 'ai-sdk';
    tools[name] = tool<Record<string, unknown>, string, C>({
      description: declared.schema.description,
      // No validate function: the chain's validate-args gate judges the input and the model reads its refusal.
      inputSchema: jsonSchema<Record<string, unknown>>(declared.schema.inputSchema as JSONSchema7),
      ...(declared.source !== undefined ? { metadata: { toolgateSource: declared.source } } : {}),
      // Every call the SDK is handed, so an approval of it (whoever asked) can answer it once.
      ...(viaSdk
        ? {
            onInputAvailable: ({ input, ...handed }) => governed.inputAvailable(declared, input, handed),
          }
        : {}),
      ...(viaSdk && declared.checkIn === 'always'
        ? { needsApproval: (input, asked) => governed.needsApproval(declared, input, asked) }
        : {}),
      execute: (input, execution) => governed.execute(declared, input, execution, viaSdk),
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

export function identityReader<C>(
  source: IdentitySource<C> | undefined,
): (context: C | undefined) => Identity | undefined {
  if (typeof source === 'function') return source;
  if (source !== undefined) return () => source;
  return (context) => {
    const identity = (context as ToolgateToolContext | undefined)?.identity;
    return typeof identity === 'object' && identity !== null ? identity : undefined;
  };
}
