// Result screening: a tool's result is the next thing the model reads, and whoever wrote a web page,
// an issue or an email can write in it. This gate looks for characters that hide or reorder text and
// for text addressed to the model (override instructions, role markers, tool-call-shaped JSON), and
// flags, withholds or strips what it finds. It stands just outside the result ceiling, so it reads
// only results the ceiling let through, and before every other after-half.

import { refusalReason, type Middleware, type ToolMiddlewareContext } from '@toolgate/core';
import {
  INSTRUCTION_RULES,
  INVISIBLE_IDS,
  INVISIBLE_RULES,
  mayHoldFindings,
  screen,
  stripInvisible,
} from './internal/screen-rules';
import { mapStrings, someString } from './internal/values';

/** `flag`: ledger row and event, the result passes. `withhold`: the model reads a refusal. `strip`: invisible characters are removed. */
export type ScreenMode = 'flag' | 'withhold' | 'strip';

export interface ResultScreenOptions {
  /** What invisible and control characters do; default `'flag'`. */
  readonly mode?: ScreenMode;
  /** What instruction-shaped text does (it cannot be stripped); default `'withhold'` when `mode` is, else `'flag'`. */
  readonly instructions?: 'flag' | 'withhold';
  /** Screen every tool's results, or only those of tools imported over MCP; default `'all'`. */
  readonly tools?: 'all' | 'mcp';
  /** Finding ids to ignore, e.g. `'control-character'` for a terminal tool whose output has colours. */
  readonly except?: readonly string[];
}

/** The ids a finding can have, for `except`. */
export const SCREEN_FINDING_IDS: readonly string[] = Object.freeze([
  ...new Set([...INVISIBLE_RULES, ...INSTRUCTION_RULES].map((rule) => rule.id)),
]);

const WORDS: Record<string, string> = {
  'tag-characters': 'invisible Unicode tag characters',
  'variation-selectors': 'runs of invisible variation selectors',
  'zero-width': 'zero-width or other invisible characters',
  'bidi-control': 'bidirectional control characters that reorder text',
  'control-character': 'terminal control characters',
  'override-instruction': 'an instruction to ignore earlier instructions',
  'addressed-to-model': 'text addressed to an AI assistant',
  'role-marker': 'chat role markers (a fake system or assistant turn)',
  'tool-call': 'text shaped like a tool call',
};

function listOf(ids: readonly string[]): string {
  const words = ids.map((id) => WORDS[id] ?? id);
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

/**
 * Screens each result for invisible or bidi control characters and instruction-shaped text.
 *
 * @example
 * resultScreen({ mode: 'strip', instructions: 'withhold', tools: 'mcp' })
 */
export function resultScreen(options: ResultScreenOptions = {}): Middleware {
  const mode = options.mode ?? 'flag';
  if (!['flag', 'withhold', 'strip'].includes(mode))
    throw new TypeError(`resultScreen: mode must be 'flag', 'withhold' or 'strip'.`);
  const instructions = options.instructions ?? (mode === 'withhold' ? 'withhold' : 'flag');
  if (!['flag', 'withhold'].includes(instructions))
    throw new TypeError(`resultScreen: instructions must be 'flag' or 'withhold'.`);
  const scope = options.tools ?? 'all';
  const except = new Set(options.except ?? []);
  const unknown = [...except].find((id) => !SCREEN_FINDING_IDS.includes(id));
  if (unknown !== undefined)
    throw new TypeError(
      `resultScreen: there is no finding '${unknown}'; the findings are ${SCREEN_FINDING_IDS.join(', ')}.`,
    );

  const findingsIn = (
    ctx: ToolMiddlewareContext,
    text: string,
  ): { value: unknown; ids: string[] } | undefined => {
    const isString = typeof ctx.result === 'string';
    if (!mayHoldFindings(text, !isString)) return undefined;
    let value: unknown = ctx.result;
    if (!isString) {
      try {
        value = JSON.parse(text) as unknown;
      } catch (error) {
        // An MCP tool's result reads as its blocks' text, not JSON: screen the blocks themselves.
        if (!(error instanceof SyntaxError)) throw error;
      }
    }
    const found = new Set<string>();
    someString(value, (s) => (screen(s, found), false));
    const ids = SCREEN_FINDING_IDS.filter((id) => found.has(id) && !except.has(id));
    return ids.length === 0 ? undefined : { value, ids };
  };

  const withhold = (ctx: ToolMiddlewareContext, ids: readonly string[], code: string): never => {
    ctx.emit({ type: 'result.flagged', findings: ids, action: 'withheld' });
    const why =
      ids.length === 0
        ? 'it is nested too deeply to be screened'
        : `it contains ${listOf(ids)}, which can carry instructions the user did not give`;
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' ran, but its result was withheld: ${why}`,
        'Calling it again for the same content will not help',
        'Tell the user the content was blocked, or use another source',
      ),
      { code, mentionsRun: true, detail: `result screen: ${ids.join(', ')}` },
    );
  };

  return {
    name: 'result-screen',
    after: ['check-in', 'credentials'],
    before: ['result-ceiling'],
    fingerprint: `${mode}, instructions ${instructions}, ${scope}${except.size > 0 ? `, except ${[...except].sort().join(',')}` : ''}`,
    passThrough: (tool) =>
      scope === 'mcp' && tool.source === undefined ? { why: 'not an MCP tool' } : undefined,
    run: async function resultScreenRun(ctx, next) {
      if (scope === 'mcp' && ctx.toolSource === undefined) {
        ctx.note('not an MCP tool');
        return next();
      }
      await next();
      const text = ctx.resultText;
      if (!ctx.ran || text === undefined) return;
      let found: { value: unknown; ids: string[] } | undefined;
      try {
        found = findingsIn(ctx, text);
      } catch {
        // Too deep to read: what cannot be screened does not pass.
        return withhold(ctx, [], 'RESULT_UNSCREENABLE');
      }
      if (found === undefined) return;
      const { value, ids } = found;
      const hidden = ids.filter((id) => INVISIBLE_IDS.has(id));
      const shaped = ids.filter((id) => !INVISIBLE_IDS.has(id));
      if ((hidden.length > 0 && mode === 'withhold') || (shaped.length > 0 && instructions === 'withhold'))
        return withhold(ctx, ids, 'RESULT_WITHHELD');
      if (hidden.length > 0 && mode === 'strip') {
        let clean: unknown;
        try {
          clean = mapStrings(value, stripInvisible);
        } catch {
          return withhold(ctx, hidden, 'RESULT_UNSCREENABLE');
        }
        ctx.emit({ type: 'result.flagged', findings: ids, action: 'stripped' });
        ctx.setResult(
          clean,
          `stripped ${hidden.join(', ')}${shaped.length > 0 ? `; flagged ${shaped.join(', ')}` : ''}`,
        );
        return;
      }
      ctx.emit({ type: 'result.flagged', findings: ids, action: 'flagged' });
      ctx.note(`flagged ${ids.join(', ')}`);
    },
  };
}
