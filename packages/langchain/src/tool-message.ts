// An outcome as the ToolMessage the model reads: refusals and failures carry `status: 'error'`.

import { ToolMessage } from '@langchain/core/messages';
import type { DispatchOutcome } from '@toolgate/core';

export function toolMessageOf(
  outcome: DispatchOutcome | string,
  toolName: string,
  toolCallId: string,
): ToolMessage {
  const content = typeof outcome === 'string' ? outcome : outcome.content;
  const ok = typeof outcome !== 'string' && outcome.kind === 'result';
  return new ToolMessage({
    content,
    tool_call_id: toolCallId,
    name: toolName,
    status: ok ? 'success' : 'error',
  });
}
