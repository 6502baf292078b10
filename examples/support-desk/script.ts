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

/** What a refusal says happened, in the model's words: its first sentence, without the gate's brackets. */
function gist(refusal: string): string {
  const inner = refusal.replace(/^\[[a-z0-9-]+ refused: /, '').replace(/\]$/, '');
  const sentence = /^(.*?)\.(?:\s|$)/.exec(inner);
  return sentence === null ? inner : sentence[1]!;
}

/** The model's last word on a refund: it says what the outcome it read says, never what it hoped for. */
function reportRefund(who: string, amount: number, also: string) {
  return (transcript: readonly TranscriptEntry[]): string => {
    const read = lastToolMessage(transcript) ?? '';
    if (read.startsWith('{') && read.includes('"refundId"')) {
      // A person may have approved a smaller amount than asked: say what was refunded.
      const refunded = (JSON.parse(read) as { amount?: unknown }).amount;
      return `Refunded ${typeof refunded === 'number' ? refunded : amount} EUR to ${who}. ${also}`;
    }
    if (read.startsWith('[')) return `I did not refund ${who}: ${gist(read)}. No money was sent. ${also}`;
    return `I could not tell whether the refund to ${who} went through; please check billing. ${also}`;
  };
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
    // the refund cap (a policy rule), refuses a refund no approval could allow.
    { toolName: 'issue_refund', args: { customerId: 'c_42', amount: 5000 } },
    // check-in: over 100 EUR a person approves; credentials are fetched only after consent.
    { toolName: 'issue_refund', args: { customerId: 'c_42', amount: 250, reason: 'damaged on arrival' } },
    reportRefund('Ada Park', 250, 'I summarised the last 10 tickets.'),
  ];
}

/**
 * globex's agent, under globex's own chain: the MCP search acme was refused is allowed once (a second
 * search in the same minute is over globex's limit), and the refund acme's chain paused for is
 * refused by globex's stricter cap before anyone is asked.
 */
export function globexScript(): ScriptStep[] {
  return [
    { toolName: 'search_kb', args: { query: 'refund policy' } },
    // globex may search the knowledge base once a minute: the limits gate refuses the second search.
    { toolName: 'search_kb', args: { query: 'late delivery refunds' } },
    { toolName: 'issue_refund', args: { customerId: 'c_77', amount: 250, reason: 'late delivery' } },
    reportRefund('Lin Osei', 250, 'Our policy: refunds over 100 EUR need a supervisor.'),
  ];
}
