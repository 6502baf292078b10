// What a span and a metric say about a call: the GenAI semantic-convention names for tool execution,
// and toolgate's own facts under `toolgate.*`. Facts only: names, ids, codes, kinds, never a value.

import type { Attributes } from '@opentelemetry/api';
import type { DispatchOutcome, LedgerRow } from '@toolgate/core';

export const OPERATION = 'execute_tool';

export const ATTR = {
  operation: 'gen_ai.operation.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  errorType: 'error.type',
  outcome: 'toolgate.outcome',
  ran: 'toolgate.ran',
  chainId: 'toolgate.chain.id',
  toolSource: 'toolgate.tool.source',
  tenant: 'toolgate.tenant',
  resumed: 'toolgate.resumed',
  refusalGate: 'toolgate.refusal.gate',
  refusalCode: 'toolgate.refusal.code',
  refusalRetryable: 'toolgate.refusal.retryable',
  checkInId: 'toolgate.checkin.id',
  checkInAsker: 'toolgate.checkin.asker',
  resumedCheckInId: 'toolgate.resume.checkin.id',
  resumeApproved: 'toolgate.resume.approved',
  receipts: 'toolgate.checkin.receipts',
  gateName: 'toolgate.gate.name',
  gateDecision: 'toolgate.gate.decision',
  gateChanged: 'toolgate.gate.changed',
  link: 'toolgate.link',
} as const;

export const GATE_EVENT = 'toolgate.gate.decision';

// Ids and names the wrapper copies must look like ids and names; anything else (a forged request's
// field, a model's made-up tool name) is left out rather than exported.
const ID = /^[A-Za-z0-9_.:-]{1,128}$/;
// A class name by convention (TypeError, UpstreamError): low-cardinality and free of message text.
const ERROR_CLASS = /^[A-Z][A-Za-z0-9]{0,62}(Error|Exception)$/;

const DECISIONS: readonly string[] = ['allow', 'deny', 'ask', 'transform'];

export const isId = (value: unknown): value is string => typeof value === 'string' && ID.test(value);

/** `error.type` for an outcome that did not give the model a result: the refusal code or the error class. */
export function errorTypeOf(outcome: DispatchOutcome): string | undefined {
  if (outcome.kind === 'refused') return isId(outcome.code) ? outcome.code : '_OTHER';
  if (outcome.kind === 'failed') return ERROR_CLASS.test(outcome.error.name) ? outcome.error.name : '_OTHER';
  return undefined;
}

/** The span attributes an outcome adds at the end of the call. */
export function outcomeAttributes(outcome: DispatchOutcome): Attributes {
  const attributes: Attributes = {
    [ATTR.outcome]: outcome.kind,
    [ATTR.ran]: outcome.ran === true,
  };
  if (isId(outcome.toolCallId)) attributes[ATTR.toolCallId] = outcome.toolCallId;
  if (isId(outcome.chainId)) attributes[ATTR.chainId] = outcome.chainId;
  if (isId(outcome.toolSource)) attributes[ATTR.toolSource] = outcome.toolSource;
  const errorType = errorTypeOf(outcome);
  if (errorType !== undefined) attributes[ATTR.errorType] = errorType;
  switch (outcome.kind) {
    case 'refused':
      if (isId(outcome.gate)) attributes[ATTR.refusalGate] = outcome.gate;
      if (isId(outcome.code)) attributes[ATTR.refusalCode] = outcome.code;
      attributes[ATTR.refusalRetryable] = outcome.retryable === true;
      break;
    case 'paused':
      if (isId(outcome.checkIn.id)) attributes[ATTR.checkInId] = outcome.checkIn.id;
      if (isId(outcome.checkIn.asker)) attributes[ATTR.checkInAsker] = outcome.checkIn.asker;
      break;
    case 'result':
      if (outcome.receipts !== undefined) attributes[ATTR.receipts] = outcome.receipts.length;
      break;
    case 'failed':
      break;
  }
  return attributes;
}

/** One span event's attributes per ledger row: the gate, what it decided, whether it changed anything. */
export function gateEventAttributes(
  row: LedgerRow,
  refusal: { gate: string; code: string } | undefined,
): Attributes {
  const attributes: Attributes = {
    [ATTR.gateName]: isId(row.gate) ? row.gate : '_OTHER',
    [ATTR.gateDecision]: DECISIONS.includes(row.outcome) ? row.outcome : '_OTHER',
    [ATTR.gateChanged]: row.changed === true,
  };
  if (refusal !== undefined && row.outcome === 'deny' && row.gate === refusal.gate && isId(refusal.code))
    attributes[ATTR.refusalCode] = refusal.code;
  return attributes;
}
