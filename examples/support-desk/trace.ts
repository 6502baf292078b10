// What the demo prints: a compact, coloured trace (one line per gate decision, what the model read,
// timings) and a closing table; or, with --json, every event as one JSON line.

import type { AgentModel } from '@toolgate/testing';
import {
  formatCount,
  type Chain,
  type CheckInDecision,
  type CheckInRequest,
  type Dispatcher,
  type DispatchOutcome,
  type Identity,
} from '@toolgate/core';

interface TraceOptions {
  readonly json: boolean;
  readonly color: boolean;
  readonly write: (line: string) => void;
}

export interface Trace {
  onEvent(event: { type: string; at: number } & Record<string, unknown>): void;
  /** `tenants`: each tenant, its chain, and its rules in words. */
  intro(stores: string, dispatcher: Dispatcher, tenants: readonly (readonly [string, Chain, string])[]): void;
  conversation(identity: Identity, chain: Chain, prompt: string): void;
  watch<M extends AgentModel>(model: M): AgentModel;
  shown(dispatcher: Dispatcher): Dispatcher;
  pause(request: CheckInRequest): void;
  /** Nobody can answer the check-in: say that it is declined, and how to decide instead. */
  unanswered(): void;
  inbox(url: string, token: string): void;
  waitingInInbox(url: string, requestId: string): void;
  decided(decision: CheckInDecision): void;
  say(text: string): void;
  summary(outcomes: readonly (DispatchOutcome & { tenant: string })[]): void;
}

const CODES = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36 } as const;
type Color = keyof typeof CODES;

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function createTrace(options: TraceOptions): Trace {
  const { write } = options;
  const paint = (color: Color, text: string) =>
    options.color ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text;
  const durations = new Map<string, number>();
  // Calls whose tool has started: a gate decision after that is the gate's after-half.
  const started = new Set<string>();
  // What the result-ceiling measured, for its after-half's row.
  const measured = new Map<string, string>();
  let lastAt = 0;
  const quiet = options.json;

  const mark = (outcome: string) =>
    outcome === 'deny'
      ? paint('red', '✗')
      : outcome === 'ask'
        ? paint('yellow', '?')
        : outcome === 'transform'
          ? paint('cyan', '~')
          : paint('green', '✓');

  return {
    onEvent(event) {
      if (options.json) {
        write(JSON.stringify(event));
        return;
      }
      const callId = String(event['toolCallId']);
      if (event.type === 'dispatch.start') {
        lastAt = event.at;
        started.delete(callId);
      }
      if (event.type === 'tool.start') started.add(callId);
      if (event.type === 'result.refused')
        measured.set(
          callId,
          `${formatCount(Number(event['chars']))} > ${formatCount(Number(event['maxChars']))} characters`,
        );
      if (event.type === 'dispatch.end') durations.set(callId, Number(event['durationMs']));
      if (event.type !== 'gate.decision') return;
      const took = Math.max(0, event.at - lastAt);
      lastAt = event.at;
      const after = started.has(callId);
      const gate = `${String(event['gate'])}${after ? ' (after)' : ''}`;
      const why =
        event['outcome'] !== 'deny'
          ? typeof event['why'] === 'string'
            ? paint('dim', clip(event['why'], 60))
            : ''
          : after && event['gate'] === 'result-ceiling'
            ? `${measured.get(callId) ?? 'over the ceiling'}; the tool ran, its result is withheld`
            : '';
      write(
        `    ${mark(String(event['outcome']))} ${gate.padEnd(22)} ${String(event['outcome']).padEnd(9)} ${paint('dim', `${took.toFixed(2)} ms`.padStart(9))}  ${why}`.trimEnd(),
      );
    },
    intro(stores, dispatcher, tenants) {
      if (quiet) return;
      write(paint('bold', 'toolgate support-desk demo'));
      write(
        paint(
          'dim',
          `tools: ${dispatcher
            .schemas()
            .map((s) => s.name)
            .join(', ')}`,
        ),
      );
      // Each tenant runs under its own chain; the id is what every outcome of that tenant carries.
      for (const [tenant, chain, rules] of tenants) {
        write(paint('dim', `${tenant}'s chain ${chain.id}: ${chain.names().join(' → ')} → execute`));
        write(paint('dim', `  ${rules}`));
      }
      write(paint('dim', `check-ins and artifacts: ${stores}`));
    },
    conversation(identity, chain, prompt) {
      if (quiet) return;
      write('');
      write(paint('bold', `── tenant ${identity.tenant}, chain ${chain.id} ──────────────────────────`));
      write(`${paint('magenta', 'user')}  ${prompt}`);
    },
    watch(model) {
      return {
        async next(transcript, tools) {
          const turn = await model.next(transcript, tools);
          if (!quiet && turn !== undefined && 'toolName' in turn) {
            const args = typeof turn.args === 'string' ? turn.args : JSON.stringify(turn.args ?? {});
            write('');
            write(
              `${paint('blue', 'model')} calls ${paint('bold', turn.toolName)} ${paint('dim', clip(args, 70))}`,
            );
          }
          return turn;
        },
      };
    },
    shown(dispatcher) {
      const show = (outcome: DispatchOutcome): DispatchOutcome => {
        if (quiet) return outcome;
        const source =
          outcome.toolSource === undefined ? '' : paint('dim', ` (source: ${outcome.toolSource})`);
        const ms = durations.get(outcome.toolCallId);
        const took = ms === undefined ? '' : paint('dim', ` in ${ms.toFixed(2)} ms`);
        const color: Color =
          outcome.kind === 'result' ? 'green' : outcome.kind === 'paused' ? 'yellow' : 'red';
        const by = outcome.kind === 'refused' ? ` by ${outcome.gate}` : '';
        const ran = !outcome.ran
          ? paint('dim', ' · tool did not run')
          : outcome.kind === 'refused'
            ? paint('dim', ' · the tool ran, but its result was withheld from the model')
            : '';
        write(`  ${paint(color, `→ ${outcome.kind}${by}`)}${source}${took}${ran}`);
        if (outcome.kind !== 'paused')
          write(`  ${paint('dim', 'model reads:')} ${clip(outcome.content, 220)}`);
        return outcome;
      };
      return {
        ...dispatcher,
        dispatch: async (call, opts) => show(await dispatcher.dispatch(call, opts)),
        resume: async (request, decision, opts) => show(await dispatcher.resume(request, decision, opts)),
      };
    },
    pause(request) {
      if (quiet) return;
      write(`  ${paint('yellow', '⏸ check-in:')} ${request.question}`);
      write(`    ${paint('dim', 'reviewing:')} ${JSON.stringify(request.review)}`);
      if (request.evidence !== undefined)
        write(`    ${paint('dim', 'evidence:')}  ${JSON.stringify(request.evidence)}`);
      write(`    ${paint('dim', `request ${request.id}, signed, expires ${request.expiresAt}`)}`);
    },
    inbox(url, token) {
      if (quiet) return;
      write(`${paint('yellow', 'approval inbox:')} ${url}  ${paint('dim', `(sign in with token ${token})`)}`);
      write('');
    },
    waitingInInbox(url, requestId) {
      if (quiet) return;
      write(`  ${paint('yellow', 'waiting in the inbox:')} ${url}check-ins/${requestId}`);
      write(
        `    ${paint('dim', 'approve, approve with changes, or decline there; the demo carries your decision out.')}`,
      );
    },
    unanswered() {
      if (quiet) return;
      write(
        `  ${paint('red', 'nobody to ask:')} no terminal and no --yes/--no, so the refund is declined (never approved by default).`,
      );
      write(
        `  ${paint('dim', 'run it in a terminal to decide, or pass --yes to approve or --no to decline.')}`,
      );
    },
    decided(decision) {
      if (quiet) return;
      const what = decision.approved
        ? paint(
            'green',
            `approved${decision.args === undefined ? '' : ' with changes'} by ${decision.by}${decision.note === undefined ? '' : ` (note: ${decision.note})`}`,
          )
        : paint('red', `declined by ${decision.by}: ${decision.reason}`);
      write(`  ${what} → resuming the call from the top of the chain`);
    },
    say(text) {
      if (quiet) return;
      write('');
      write(`${paint('blue', 'model')} says: ${text}`);
    },
    summary(outcomes) {
      if (quiet) return;
      write('');
      write(paint('bold', 'outcomes'));
      const rows = outcomes.map((o, i) => [
        String(i + 1),
        o.tenant,
        o.toolName,
        o.toolSource ?? 'own',
        o.kind,
        o.kind === 'refused' ? o.gate : '',
        o.chainId,
        o.ran ? (o.kind === 'refused' ? 'yes, withheld' : 'yes') : 'no',
        `${(durations.get(o.toolCallId) ?? 0).toFixed(2)}`,
      ]);
      const header = ['#', 'tenant', 'tool', 'source', 'outcome', 'gate', 'chain', 'ran', 'ms'];
      const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
      const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ');
      write(paint('dim', line(header)));
      for (const row of rows) write(line(row));
    },
  };
}
