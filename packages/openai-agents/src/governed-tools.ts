// The dispatcher's tools as OpenAI Agents SDK function tools. The SDK keeps its own loop; each call
// the model makes runs through the toolgate chain, and the model reads the outcome's content.

import { tool, type FunctionTool, type RunContext } from '@openai/agents';
import type { Dispatcher, Tool } from '@toolgate/core';
import { governor, type GovernedToolsOptions } from './governed-call';

export type { GovernedToolsOptions, PausedCall } from './governed-call';

/** A JSON copy of the schema: the SDK serializes it for the model, and symbol keys mean nothing there. */
function parametersOf(schema: Tool['schema']): FunctionTool['parameters'] {
  const copy = JSON.parse(JSON.stringify(schema.inputSchema ?? {})) as Record<string, unknown>;
  return { ...copy, type: 'object', properties: copy.properties ?? {} } as FunctionTool['parameters'];
}

/**
 * One SDK function tool per dispatcher tool. A tool that declares `checkIn: 'always'` gets a
 * `needsApproval` that raises the check-in when the SDK asks, so the run stops with an interruption
 * the host approves or rejects through `RunState`; the approval answers that request once, bound to
 * the exact args, and leaves a signed receipt. Every other pause goes to `onPause`.
 *
 * @example
 * const agent = new Agent({ name: 'desk', tools: governedTools(dispatcher, { checkIns }) });
 * await run(agent, 'refund A-17', { context: { identity: { tenant: 'acme', principal: 'ada' } } });
 */
export function governedTools<TContext = unknown>(
  dispatcher: Dispatcher,
  options: GovernedToolsOptions<TContext> = {},
): FunctionTool<TContext>[] {
  const checkIns = options.checkIns;
  if (checkIns !== undefined && (typeof checkIns?.list !== 'function' || typeof checkIns.get !== 'function'))
    throw new TypeError(
      'governedTools: checkIns must be a CheckInStore (the one the chain keeps check-ins in).',
    );
  for (const [field, list] of [
    ['inputGuardrails', options.inputGuardrails],
    ['outputGuardrails', options.outputGuardrails],
  ] as const) {
    if (list !== undefined && (!Array.isArray(list) || list.some((g) => typeof g?.run !== 'function')))
      throw new TypeError(
        `governedTools: ${field} must be a list of the SDK's tool guardrails (defineTool${field === 'inputGuardrails' ? 'Input' : 'Output'}Guardrail).`,
      );
  }
  const guardrails = {
    ...(options.inputGuardrails !== undefined ? { inputGuardrails: [...options.inputGuardrails] } : {}),
    ...(options.outputGuardrails !== undefined ? { outputGuardrails: [...options.outputGuardrails] } : {}),
  };
  const governed = governor(dispatcher, options);
  const tools = dispatcher.schemas().map((schema) => {
    // Only a static check-in is known before the chain runs; a predicate's pause goes to onPause.
    const viaSdk = dispatcher.tools.get(schema.name)?.checkIn === 'always';
    const made: FunctionTool<TContext> = tool<undefined, TContext>({
      name: schema.name,
      description: schema.description,
      parameters: parametersOf(schema) as never,
      strict: false,
      ...guardrails,
      needsApproval: viaSdk
        ? (runContext: RunContext, input: unknown, callId?: string) =>
            governed.needsApproval(schema.name, made.name, runContext as RunContext<TContext>, input, callId)
        : false,
      execute: async (input: unknown, runContext?: RunContext<TContext>, details?) => {
        const callId = details?.toolCall?.callId;
        const approved =
          callId !== undefined && runContext?.isToolApproved({ toolName: made.name, callId }) === true;
        return governed.execute(schema.name, input, {
          context: runContext?.context as TContext,
          callId,
          approved,
          viaSdk,
          ...(details?.signal !== undefined ? { signal: details.signal } : {}),
        });
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
