// The conversation the scripted model plays: each step exercises one gate, and the model reacts to
// what it reads, as a real model would: it fixes its args, picks a ref the refusal offered, narrows.

import type { ScriptStep, TranscriptEntry } from '@toolgate/testing';
import { lastToolMessage } from '@toolgate/testing';

const REF = /art_[0-9A-Za-z]{22}/;

function refFromLastRefusal(transcript: readonly TranscriptEntry[]): string {
  const match = REF.exec(lastToolMessage(transcript) ?? '');
  if (match === null) throw new Error('the refusal offered no artifact ref');
  return match[0];
}

/** acme's agent: every gate gets to decide at least once. */
export function acmeScript(refs: { notes: string }): ScriptStep[] {
  return [
    // validate-args refuses a misnamed argument; the model reads the path and corrects it.
    { toolName: 'lookup_customer', args: '{"customer_id": 42}' },
    { toolName: 'lookup_customer', args: { customerId: 'c_42' } },
    // capabilities: acme keeps its data inside its network, so the MCP search is refused.
    { toolName: 'search_kb', args: { query: 'refund policy' } },
    // permission: tools from kb-server are read-only for this deployment.
    { toolName: 'delete_article', args: { id: 'kb-7' } },
    // wants: a ref of the wrong kind; the refusal lists live dataset refs and the model picks one.
    { toolName: 'export_report', args: { rows: refs.notes } },
    (transcript) => ({ toolName: 'export_report', args: { rows: refFromLastRefusal(transcript) } }),
    // result-ceiling: 300 rows are too many; the refusal names 'limit', so the model narrows.
    (transcript) => {
      const lastCall = [...transcript]
        .reverse()
        .find((entry) => entry.role === 'assistant' && 'call' in entry);
      const rows =
        lastCall !== undefined && 'call' in lastCall ? (lastCall.call.args as { rows: string }).rows : '';
      return { toolName: 'export_report', args: { rows, limit: 10 } };
    },
    // refund-cap, the custom policy, refuses a refund no approval could allow.
    { toolName: 'issue_refund', args: { customerId: 'c_42', amount: 5000 } },
    // check-in: over 100 EUR a person approves; credentials are fetched only after consent.
    { toolName: 'issue_refund', args: { customerId: 'c_42', amount: 250, reason: 'damaged on arrival' } },
    { say: 'Refunded 250 EUR to Ada Park and summarised the last 10 tickets.' },
  ];
}

/** globex's agent: the same MCP search acme was refused is allowed under globex's chain. */
export function globexScript(): ScriptStep[] {
  return [
    { toolName: 'search_kb', args: { query: 'refund policy' } },
    { say: 'Refunds over 100 EUR need a supervisor.' },
  ];
}
