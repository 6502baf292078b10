// The dispatcher's tools as OpenAI Agents SDK function tools. The SDK keeps its own loop; each call
// the model makes runs through the toolgate chain, and the model reads the outcome's content.

import { tool, type FunctionTool, type RunContext } from '@openai/agents';
import {
  checkInApproved,
  refusalReason,
  type CheckInRequest,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
  type Tool,
} from '@toolgate/core';

/** A pause the SDK's approval flow does not answer, handed to the host with the signed request. */
export interface PausedCall<TContext> {
  readonly toolName: string;
  readonly toolCallId: string;
  /** The run's context object (`run(agent, input, { context })`). */
  readonly context: TContext;
}

export interface GovernedToolsOptions<TContext> {
  /**
   * Who is calling, read from the run's own context object, never from the model's args. Default:
   * the context's `identity` property when it is an object.
   */
  readonly identity?: (context: TContext) => Identity | undefined;
  /** Who approved an SDK interruption, for the check-in receipt. Default: `'openai-agents-approval'`. */
  readonly approvedBy?: (context: TContext) => string;
  /**
   * A check-in the SDK did not approve beforehand (a policy middleware's `ask`, or a second question in
   * one call): the host gets the signed request and calls `dispatcher.resume` when a person decides.
   * The model reads that the call is waiting for approval.
   */
  readonly onPause?: (request: CheckInRequest, call: PausedCall<TContext>) => void | Promise<void>;
}

const DEFAULT_APPROVER = 'openai-agents-approval';

function contextIdentity(context: unknown): Identity | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const identity = (context as { identity?: unknown }).identity;
  return typeof identity === 'object' && identity !== null ? (identity as Identity) : undefined;
}

/** A JSON copy of the schema: the SDK serializes it for the model, and symbol keys mean nothing there. */
function parametersOf(schema: Tool['schema']): FunctionTool['parameters'] {
  const copy = JSON.parse(JSON.stringify(schema.inputSchema ?? {})) as Record<string, unknown>;
  return { ...copy, type: 'object', properties: copy.properties ?? {} } as FunctionTool['parameters'];
}

/**
 * One SDK function tool per dispatcher tool. Tools that declare `checkIn` set `needsApproval`, so the run
 * stops with an interruption the host approves or rejects through `RunState`; an approved call's check-in
 * is then answered with `checkInApproved` and leaves a signed receipt.
 *
 * @example
 * const agent = new Agent({ name: 'desk', tools: governedTools(dispatcher) });
 * await run(agent, 'refund A-17', { context: { identity: { tenant: 'acme', principal: 'ada' } } });
 */
export function governedTools<TContext = unknown>(
  dispatcher: Dispatcher,
  options: GovernedToolsOptions<TContext> = {},
): FunctionTool<TContext>[] {
  const identityOf = options.identity ?? contextIdentity;
  const approvedBy = options.approvedBy ?? (() => DEFAULT_APPROVER);

  async function settle(
    outcome: DispatchOutcome,
    approved: boolean,
    context: TContext,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    if (outcome.kind !== 'paused') return outcome.content;
    const request = outcome.checkIn;
    // The SDK's approval answers the check-in gate's question, the one `needsApproval` stood for; any
    // other asker's question goes to the host.
    if (approved && request.asker === 'check-in') {
      let by: string;
      try {
        by = approvedBy(context);
      } catch {
        by = DEFAULT_APPROVER;
      }
      const resumed = await dispatcher.resume(
        request,
        checkInApproved({ by }),
        signal === undefined ? {} : { signal },
      );
      return settle(resumed, false, context, signal);
    }
    try {
      await options.onPause?.(request, {
        toolName: request.toolName,
        toolCallId: request.toolCallId,
        context,
      });
    } catch {
      // The host's hook failing must not crash the run; the call stays paused and the model is told so.
    }
    return outcome.content;
  }

  const tools = dispatcher.schemas().map((schema) => {
    const declared = dispatcher.tools.get(schema.name);
    const made: FunctionTool<TContext> = tool<undefined, TContext>({
      name: schema.name,
      description: schema.description,
      parameters: parametersOf(schema) as never,
      strict: false,
      needsApproval: declared?.checkIn !== undefined,
      execute: async (input: unknown, runContext?: RunContext<TContext>, details?) => {
        const context = runContext?.context as TContext;
        const callId = details?.toolCall?.callId;
        let identity: Identity | undefined;
        try {
          identity = identityOf(context);
        } catch {
          return `[dispatch refused: ${refusalReason(`'${schema.name}' did not run because the caller's identity could not be read`, 'Retrying will not help')}]`;
        }
        const signal = details?.signal;
        const outcome = await dispatcher.dispatch(
          { toolName: schema.name, args: input, ...(callId === undefined ? {} : { toolCallId: callId }) },
          { ...(identity === undefined ? {} : { identity }), ...(signal === undefined ? {} : { signal }) },
        );
        if (outcome.kind !== 'paused') return outcome.content;
        const approved =
          callId !== undefined && runContext?.isToolApproved({ toolName: made.name, callId }) === true;
        return settle(outcome, approved, context, signal);
      },
    }) as FunctionTool<TContext>;
    return { made, toolgateName: schema.name };
  });
  // The SDK turns every character outside [A-Za-z0-9] into '_', so 'a-b' and 'a_b' would collide.
  const seen = new Map<string, string>();
  for (const { made: sdkTool, toolgateName } of tools) {
    const other = seen.get(sdkTool.name);
    if (other !== undefined) {
      throw new TypeError(
        `governedTools: tools '${other}' and '${toolgateName}' both become '${sdkTool.name}' in the OpenAI Agents SDK, which allows only letters, digits and '_'. Rename one.`,
      );
    }
    seen.set(sdkTool.name, toolgateName);
  }
  return tools.map((each) => each.made);
}
