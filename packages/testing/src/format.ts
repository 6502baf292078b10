// Readable text for outcomes and transcripts: what failing matchers print, and what a demo shows.

import type { DispatchOutcome, LedgerRow } from '@toolgate/core';
import type { TranscriptEntry } from './agent-loop';

const OUTCOME_KINDS = new Set(['result', 'refused', 'paused', 'failed']);

/** True when `value` has the shape of a DispatchOutcome. */
export function isDispatchOutcome(value: unknown): value is DispatchOutcome {
  if (typeof value !== 'object' || value === null) return false;
  const outcome = value as Partial<DispatchOutcome>;
  return (
    typeof outcome.kind === 'string' &&
    OUTCOME_KINDS.has(outcome.kind) &&
    Array.isArray(outcome.ledger) &&
    typeof outcome.content === 'string'
  );
}

function clip(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function headline(outcome: DispatchOutcome): string {
  const ran = outcome.ran ? 'the tool ran' : 'the tool did not run';
  switch (outcome.kind) {
    case 'result':
      return `result from '${outcome.toolName}'; ${ran}`;
    case 'refused':
      return `refused by '${outcome.gate}' (${outcome.code}${outcome.retryable ? ', retryable' : ''}); ${ran}`;
    case 'paused':
      return `paused by '${outcome.checkIn.asker}' for a human (request ${outcome.checkIn.id}); ${ran}`;
    case 'failed':
      return `failed with ${outcome.error.name}; ${ran}`;
  }
}

function ledgerLines(ledger: readonly LedgerRow[]): string[] {
  if (ledger.length === 0) return ['    (no rows)'];
  const width = Math.max(...ledger.map((row) => row.gate.length));
  return ledger.map((row, i) => {
    const why = row.why === undefined ? '' : `  ${clip(row.why, 160)}`;
    return `    ${i + 1}. ${row.gate.padEnd(width)}  ${row.outcome.padEnd(9)}${row.changed ? ' (changed)' : ''}${why}`.trimEnd();
  });
}

/**
 * An outcome in a few lines: kind and deciding gate, whether the tool ran, what the model read, the ledger.
 *
 * @example
 * console.log(formatOutcome(await dispatcher.dispatch({ toolName: 'search', args: { query: 'x' } })));
 */
export function formatOutcome(outcome: DispatchOutcome): string {
  if (!isDispatchOutcome(outcome)) return `not a DispatchOutcome: ${clip(String(JSON.stringify(outcome)))}`;
  const lines = [
    headline(outcome),
    `  tool: '${outcome.toolName}'${outcome.toolSource !== undefined ? ` from '${outcome.toolSource}'` : ''}, call ${outcome.toolCallId}, ${outcome.chainId || 'no chain'}`,
  ];
  if (outcome.kind === 'paused') lines.push(`  question: ${clip(outcome.checkIn.question)}`);
  lines.push(`  model read: ${clip(outcome.content)}`, '  ledger:', ...ledgerLines(outcome.ledger));
  return lines.join('\n');
}

function stringifyArgs(args: unknown): string {
  if (args === undefined) return '{}';
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args);
  } catch {
    return String(args);
  }
}

/** A transcript as a chat log, one line per entry. */
export function formatTranscript(transcript: readonly TranscriptEntry[]): string {
  return transcript
    .map((entry) => {
      switch (entry.role) {
        case 'user':
          return `user: ${entry.content}`;
        case 'assistant':
          return 'call' in entry
            ? `assistant → ${entry.call.toolName}(${clip(stringifyArgs(entry.call.args), 200)})  [${entry.call.toolCallId}]`
            : `assistant: ${entry.text}`;
        case 'check-in':
          return entry.decision.approved
            ? `check-in: approved by ${entry.decision.by} (${entry.request.asker})`
            : `check-in: declined by ${entry.decision.by}: ${entry.decision.reason}`;
        case 'tool':
          return `tool ${entry.toolName} [${entry.outcome.kind}]: ${clip(entry.content, 500)}`;
      }
    })
    .join('\n');
}
