// What the demo prints: a compact, coloured trace (one line per gate decision, what the model read,
// timings) and a closing table, fitted to the terminal's width; or, with --json, every event as one
// JSON line.

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
  /** Columns to fit (the terminal's); 80 when unknown, never under 60. */
  readonly width?: number;
  /** Print what the model reads in full instead of its first lines. */
  readonly verbose?: boolean;
  readonly write: (line: string) => void;
}

/**
 * `text` in lines broken between words: the first at most `first` characters, the others at most
 * `rest`. A word longer than a line is split.
 */
export function wrap(text: string, first: number, rest: number = first): string[] {
  const lines: string[] = [];
  let line = '';
  const room = () => (lines.length === 0 ? first : rest);
  for (let word of text.replace(/\s+/g, ' ').trim().split(' ')) {
    if (line !== '' && line.length + 1 + word.length <= room()) {
      line += ` ${word}`;
      continue;
    }
    if (line !== '') lines.push(line);
    while (word.length > room()) {
      // JSON has no spaces: break after a comma when one fits, else mid-word.
      const comma = word.lastIndexOf(',', room() - 1);
      lines.push(word.slice(0, comma > 0 ? comma + 1 : room()));
      word = word.slice(lines[lines.length - 1]!.length);
    }
    line = word;
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/** The first `max` lines of `wrap`; when more would follow, the last kept one ends at a word with ' …'. */
export function firstLines(text: string, max: number, first: number, rest: number = first): string[] {
  const lines = wrap(text, first, rest);
  if (lines.length <= max) return lines;
  const kept = lines.slice(0, max);
  const limit = max === 1 ? first : rest;
  let last = kept[max - 1]!;
  while (last.length + 2 > limit)
    last = last.includes(' ') ? last.slice(0, last.lastIndexOf(' ')) : last.slice(0, limit - 2);
  kept[max - 1] = `${last} …`;
  return kept;
}

const MIN_WIDTH = 60;
/** Wide enough for every canonical gate's name ('result-ceiling'). */
const GATE_COLUMN = 14;
/** How many lines of what the model reads are shown without --verbose. */
const READS_LINES = 3;

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

export function createTrace(options: TraceOptions): Trace {
  const { write } = options;
  const width = Math.max(MIN_WIDTH, Math.floor(options.width ?? 80));
  const paint = (color: Color, text: string) =>
    options.color ? `\u001b[${CODES[color]}m${text}\u001b[0m` : text;
  /**
   * Writes `head` (`headWidth` visible characters, maybe painted) and `text` wrapped after it, later
   * lines indented by `indent`; at most `max` lines, the last cut at a word.
   */
  const block = (
    head: string,
    headWidth: number,
    text: string,
    indent: number,
    max = Infinity,
    color?: Color,
  ) => {
    const lines = firstLines(text, max, width - headWidth, width - indent);
    lines.forEach((line, i) => {
      const shown = color === undefined ? line : paint(color, line);
      write(i === 0 ? `${head}${shown}`.trimEnd() : `${' '.repeat(indent)}${shown}`);
    });
  };
  const rule = (title: string) => `${title} ${'─'.repeat(Math.max(3, width - title.length - 1))}`;
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
      const denied = event['outcome'] === 'deny';
      const why = !denied
        ? typeof event['why'] === 'string'
          ? event['why']
          : ''
        : after && event['gate'] === 'result-ceiling'
          ? `${measured.get(callId) ?? 'over the ceiling'}; the tool ran, its result is withheld`
          : '';
      // `    ✓ gate                   outcome    0.00 ms  why`, the why wrapped under itself.
      // Only the after-half's longer label overflows the gate column.
      const label = gate.padEnd(GATE_COLUMN);
      const head = `    ${mark(String(event['outcome']))} ${label} ${String(event['outcome']).padEnd(9)} ${paint('dim', `${took.toFixed(2)} ms`.padStart(9))}  `;
      const headWidth = 4 + 1 + 1 + label.length + 1 + 9 + 1 + 9 + 2;
      const whyColumn = 4 + 1 + 1 + GATE_COLUMN + 1 + 9 + 1 + 9 + 2;
      block(head, headWidth, why, whyColumn, Infinity, denied ? undefined : 'dim');
    },
    intro(stores, dispatcher, tenants) {
      if (quiet) return;
      write(paint('bold', 'toolgate support-desk demo'));
      const tools = dispatcher
        .schemas()
        .map((s) => s.name)
        .join(', ');
      block(paint('dim', 'tools: '), 7, tools, 7, Infinity, 'dim');
      // Each tenant runs under its own chain; the id is what every outcome of that tenant carries.
      for (const [tenant, chain, rules] of tenants) {
        const head = `${tenant}'s chain ${chain.id}: `;
        block(paint('dim', head), head.length, `${chain.names().join(' → ')} → execute`, 2, Infinity, 'dim');
        block('  ', 2, rules, 2, Infinity, 'dim');
      }
      block(paint('dim', 'check-ins and artifacts: '), 25, stores, 2, Infinity, 'dim');
    },
    conversation(identity, chain, prompt) {
      if (quiet) return;
      write('');
      write(paint('bold', rule(`── tenant ${identity.tenant}, chain ${chain.id}`)));
      block(`${paint('magenta', 'user')}  `, 6, prompt, 6);
    },
    watch(model) {
      return {
        async next(transcript, tools) {
          const turn = await model.next(transcript, tools);
          if (!quiet && turn !== undefined && 'toolName' in turn) {
            const args = typeof turn.args === 'string' ? turn.args : JSON.stringify(turn.args ?? {});
            write('');
            const head = `${paint('blue', 'model')} calls ${paint('bold', turn.toolName)} `;
            block(head, 13 + turn.toolName.length, args, 4, READS_LINES, 'dim');
          }
          return turn;
        },
      };
    },
    shown(dispatcher) {
      const show = (outcome: DispatchOutcome): DispatchOutcome => {
        if (quiet) return outcome;
        const sourceText = outcome.toolSource === undefined ? '' : ` (source: ${outcome.toolSource})`;
        const source = paint('dim', sourceText);
        const ms = durations.get(outcome.toolCallId);
        const tookText = ms === undefined ? '' : ` in ${ms.toFixed(2)} ms`;
        const took = paint('dim', tookText);
        const color: Color =
          outcome.kind === 'result' ? 'green' : outcome.kind === 'paused' ? 'yellow' : 'red';
        const by = outcome.kind === 'refused' ? ` by ${outcome.gate}` : '';
        const ranText = !outcome.ran
          ? ' · tool did not run'
          : outcome.kind === 'refused'
            ? ' · the tool ran, but its result was withheld from the model'
            : '';
        const ran = ranText === '' ? '' : paint('dim', ranText);
        const said = `  → ${outcome.kind}${by}${sourceText}${tookText}`;
        // On one line when it fits; otherwise whether the tool ran goes on its own.
        if (said.length + ranText.length <= width)
          write(`  ${paint(color, `→ ${outcome.kind}${by}`)}${source}${took}${ran}`);
        else {
          write(`  ${paint(color, `→ ${outcome.kind}${by}`)}${source}${took}`);
          block('    ', 4, ranText.replace(/^ · /, ''), 4, Infinity, 'dim');
        }
        if (outcome.kind !== 'paused') {
          const max = options.verbose === true ? Infinity : READS_LINES;
          block(`  ${paint('dim', 'model reads:')} `, 15, outcome.content, 4, max);
        }
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
      block(`  ${paint('yellow', '⏸ check-in:')} `, 14, request.question, 4);
      // What the person approves is shown whole, never cut.
      block(`    ${paint('dim', 'reviewing:')} `, 15, JSON.stringify(request.review), 15);
      if (request.evidence !== undefined)
        block(`    ${paint('dim', 'evidence:')}  `, 15, JSON.stringify(request.evidence), 15);
      block('    ', 4, `request ${request.id}, signed, expires ${request.expiresAt}`, 4, Infinity, 'dim');
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
      block(
        `  ${paint('red', 'nobody to ask:')} `,
        17,
        'no terminal and no --yes/--no, so the refund is declined (never approved by default).',
        4,
      );
      block(
        '    ',
        4,
        'Run it in a terminal to decide, or pass --yes to approve or --no to decline.',
        4,
        Infinity,
        'dim',
      );
    },
    decided(decision) {
      if (quiet) return;
      const what = decision.approved
        ? `approved${decision.args === undefined ? '' : ' with changes'} by ${decision.by}${decision.note === undefined ? '' : `, note: ${decision.note}`}`
        : `declined by ${decision.by}: ${decision.reason}`;
      block(
        '  ',
        2,
        `${what}; resuming the call from the top of the chain`,
        4,
        Infinity,
        decision.approved ? 'green' : 'red',
      );
    },
    say(text) {
      if (quiet) return;
      write('');
      block(`${paint('blue', 'model')} says: `, 12, text, 4);
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
        o.ran ? (o.kind === 'refused' ? 'withheld' : 'yes') : 'no',
        `${(durations.get(o.toolCallId) ?? 0).toFixed(2)}`,
      ]);
      const header = ['#', 'tenant', 'tool', 'source', 'outcome', 'gate', 'ran', 'ms'];
      // Columns dropped, last first, while the table is wider than the terminal.
      const optional = [7, 3];
      let shown = header.map((_, c) => c);
      const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
      const total = () => shown.reduce((sum, c) => sum + widths[c]!, 0) + 2 * (shown.length - 1);
      for (const c of optional) if (total() > width) shown = shown.filter((k) => k !== c);
      const gap = total() > width ? ' ' : '  ';
      const line = (cells: string[]) =>
        shown
          .map((c) => cells[c]!.padEnd(widths[c]!))
          .join(gap)
          .trimEnd();
      write(paint('dim', line(header)));
      for (const row of rows) write(line(row));
      // Who decided each paused call: a receipt for an approval, the check-in refusal for a decline.
      const decided = outcomes.flatMap((o, i) => {
        if (o.kind === 'result' && o.receipts !== undefined && o.receipts.length > 0) {
          const by = o.receipts
            .map((r) => `${r.by}${r.note === undefined ? '' : `, note: ${r.note}`}`)
            .join('; ');
          return [`#${i + 1} ${o.toolName} paused for a check-in; approved by ${by}, then ran`];
        }
        if (o.kind === 'refused' && o.code === 'CHECKIN_DECLINED')
          return [`#${i + 1} ${o.toolName} paused for a check-in; declined, did not run`];
        return [];
      });
      if (decided.length > 0) write('');
      for (const text of decided) block('', 0, text, 4);
    },
  };
}
