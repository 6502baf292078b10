// Reading the AI SDK's approval parts out of the message history the app sends back, the way the SDK
// itself reads them, so the adapter answers the approval the SDK is acting on and no other. The
// history is client data: nothing here is trusted to approve; it only says which request to look up.

import type { ModelMessage } from 'ai';

/** An approval response the SDK is executing a tool call on. */
export interface SdkApproval {
  readonly approvalId: string;
  readonly approved: boolean;
  /** How many approvals the SDK asked for the same tool call id before this one. */
  readonly ordinal: number;
}

// The SDK hands every call of one step the same messages array: read it once per step, not per call.
const read = new WeakMap<
  readonly ModelMessage[],
  { readonly length: number; readonly targets: Map<string, string> }
>();

/** Each approval id's tool call id, as the SDK maps them (a later part with the same id wins). */
function approvalTargets(messages: readonly ModelMessage[]): Map<string, string> {
  const known = read.get(messages);
  if (known !== undefined && known.length === messages.length) return known.targets;
  const targets = mapTargets(messages);
  read.set(messages, { length: messages.length, targets });
  return targets;
}

function mapTargets(messages: readonly ModelMessage[]): Map<string, string> {
  const targets = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const part of message.content)
      if (part.type === 'tool-approval-request') targets.set(part.approvalId, part.toolCallId);
  }
  return targets;
}

/** The approval ids asked for `toolCallId`, in the order they first appear. */
function approvalsAskedFor(targets: Map<string, string>, toolCallId: string): string[] {
  const ids: string[] = [];
  for (const [approvalId, target] of targets) if (target === toolCallId) ids.push(approvalId);
  return ids;
}

/** How many approvals the SDK already asked for `toolCallId` in `messages`: the next one's ordinal. */
export function approvalsBefore(messages: readonly ModelMessage[], toolCallId: string): number {
  return approvalsAskedFor(approvalTargets(messages), toolCallId).length;
}

/**
 * The approval response the SDK acts on for `toolCallId`: the first one for it in the last message,
 * which must be a tool message (the SDK collects approvals from there only).
 */
export function approvalFor(messages: readonly ModelMessage[], toolCallId: string): SdkApproval | undefined {
  const lastMessage = messages.at(-1);
  if (lastMessage?.role !== 'tool') return undefined;
  const targets = approvalTargets(messages);
  for (const part of lastMessage.content) {
    if (part.type !== 'tool-approval-response' || targets.get(part.approvalId) !== toolCallId) continue;
    const ordinal = approvalsAskedFor(targets, toolCallId).indexOf(part.approvalId);
    return { approvalId: part.approvalId, approved: part.approved === true, ordinal };
  }
  return undefined;
}

/**
 * The call id a check-in is raised under: the SDK's own, and for a tool call id the SDK asked about
 * before (providers that number calls per turn), which ask this is. Injective, so two asks never share one.
 */
export function askedCallId(toolCallId: string, ordinal: number): string {
  return ordinal === 0 && !toolCallId.includes('#') ? toolCallId : `${toolCallId}#${ordinal}`;
}

/** A short, printable form of an approval id for the receipt's `by`: the id is client data. */
export function approverOf(approvalId: string): string {
  return /^[A-Za-z0-9_.:-]{1,128}$/.test(approvalId) ? `ai-sdk approval ${approvalId}` : 'ai-sdk approval';
}
