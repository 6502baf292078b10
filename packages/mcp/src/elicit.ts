// Check-in over MCP elicitation: the paused call's question goes to the person at the client as a
// form (approve or decline, an optional note), and their answer becomes a check-in decision.

import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ElicitRequestFormParams } from '@modelcontextprotocol/sdk/types.js';
import { checkInApproved, checkInDeclined, type CheckInDecision, type CheckInRequest } from '@toolgate/core';

const MAX_SHOWN_CHARS = 2000;

/** Whether the connected client said it can show a form to its user. */
export function canElicitForm(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation;
  if (elicitation === undefined) return false;
  // An empty elicitation capability means form mode.
  return elicitation.form !== undefined || elicitation.url === undefined;
}

function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = '(not shown: it cannot be written as JSON)';
  }
  return text.length > MAX_SHOWN_CHARS
    ? `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length} characters)`
    : text;
}

/** The form the person sees: the question, the exact arguments, and the evidence summary. */
export function approvalForm(request: CheckInRequest): ElicitRequestFormParams {
  const from = request.toolSource === undefined ? '' : ` from MCP server '${request.toolSource}'`;
  const lines = [
    request.question,
    '',
    `Tool: '${request.toolName}'${from}`,
    `Arguments:\n${shown(request.review)}`,
    ...(request.evidence === undefined ? [] : [`Evidence:\n${shown(request.evidence)}`]),
  ];
  return {
    mode: 'form',
    message: lines.join('\n'),
    requestedSchema: {
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: `Approve or decline this call of '${request.toolName}'.`,
          enum: ['approve', 'decline'],
        },
        note: { type: 'string', title: 'Note', description: 'Optional: why, kept with the decision.' },
      },
      required: ['decision'],
    },
  };
}

/**
 * Asks the person at the client. Declining the form, or dismissing it, declines the call.
 * Rejects when no answer arrives (the client failed, went away, or took longer than `timeoutMs`).
 */
export async function askPerson(
  server: Server,
  request: CheckInRequest,
  by: string,
  options: { relatedRequestId: string | number; signal: AbortSignal; timeoutMs: number },
): Promise<CheckInDecision> {
  const answer = await server.elicitInput(approvalForm(request), {
    relatedRequestId: options.relatedRequestId,
    signal: options.signal,
    timeout: options.timeoutMs,
  });
  const note = typeof answer.content?.['note'] === 'string' ? answer.content['note'].trim() : '';
  if (answer.action === 'accept' && answer.content?.['decision'] === 'approve')
    return checkInApproved(note === '' ? { by } : { by, note });
  if (answer.action === 'cancel')
    return checkInDeclined({ by, reason: 'the approval request was dismissed without a decision' });
  return checkInDeclined({ by, reason: note === '' ? 'declined in the MCP client' : note });
}
