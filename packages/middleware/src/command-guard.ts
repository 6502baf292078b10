// The command guard: for tools that run a shell (they declare the `shell` capability, or the operator
// names them), string arguments may not carry shell metacharacters, command substitution or line
// breaks, nor start with '-' (an option smuggled in as an operand), unless the schema constrains the
// field: `enum`/`const`, a format of plain characters, or a `pattern` that admits none of them.

import {
  refusalReason,
  type JsonSchema,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import { isSafePattern, SHELL_METACHARACTERS } from './internal/safe-pattern';
import { isShellLine, stringValues } from './internal/value-shapes';

export interface CommandGuardOptions {
  /** Tools to guard besides those that declare the capability. */
  readonly tools?: readonly string[];
  /** The capability that marks a tool that runs a shell; default `'shell'`. */
  readonly capability?: string;
  /** Also refuse, in every other tool's arguments, a value shaped like a shell line that chains or substitutes a command; default true. */
  readonly values?: boolean;
}

type Problem = 'substitution' | 'newline' | 'metacharacter' | 'option' | 'shell-line';

const WORDS: Record<Problem, string> = {
  substitution: "contains shell command substitution ('$(', '${' or a backtick)",
  newline: 'contains a line break, which a shell reads as a second command',
  metacharacter: 'contains a shell metacharacter',
  option: "starts with '-', which the command would read as an option",
  'shell-line': 'is shaped like a shell command line that chains or substitutes a command',
};

const CODES: Record<Problem, string> = {
  substitution: 'COMMAND_SUBSTITUTION',
  newline: 'COMMAND_NEWLINE',
  metacharacter: 'COMMAND_METACHARACTER',
  option: 'COMMAND_OPTION',
  'shell-line': 'COMMAND_SHELL_LINE',
};

const LISTED = SHELL_METACHARACTERS.replace(/[\n\r]/g, '')
  .split('')
  .join(' ');
// One class, so a value is read once: metacharacters, line breaks and every other control character.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[;&|`$<>(){}[\]*?!~#'"\\\u0000-\u0008\u000a-\u001f\u007f]/;
const SUBSTITUTION = /`|\$[({]/;
const LINE_BREAK = /[\n\r]/;

/** Formats whose values are plain characters (digits, letters, '-', '.', ':', '+'). */
const PLAIN_FORMATS = new Set(['uuid', 'date', 'date-time', 'time', 'duration', 'ipv4', 'ipv6', 'hostname']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function problemIn(text: string, vouched: boolean): Problem | undefined {
  if (text.startsWith('-')) return 'option';
  if (vouched || !UNSAFE.test(text)) return undefined;
  if (SUBSTITUTION.test(text)) return 'substitution';
  if (LINE_BREAK.test(text)) return 'newline';
  return 'metacharacter';
}

/**
 * Refuses shell metacharacters (`; & | $ \` < > ( ) { } [ ] * ? ! ~ # ' " \`), command substitution,
 * line breaks and control characters in the string arguments of shell tools, and a leading '-'.
 *
 * @example
 * commandGuard({ tools: ['git_log'] })
 */
export function commandGuard(options: CommandGuardOptions = {}): Middleware {
  const capability = options.capability ?? 'shell';
  const named = new Set(options.tools ?? []);
  const guarded = (tool: Tool) =>
    named.has(tool.schema.name) || (tool.capabilities ?? []).includes(capability);
  // Per schema node: 'fixed' (enum/const: skip entirely), 'plain' (safe pattern or format: only the dash check), or open.
  const constraintOf = new WeakMap<object, 'fixed' | 'plain' | 'open'>();
  const constraint = (node: unknown): 'fixed' | 'plain' | 'open' => {
    if (!isRecord(node)) return 'open';
    let known = constraintOf.get(node);
    if (known === undefined) {
      const { pattern, format } = node;
      known =
        'enum' in node || 'const' in node
          ? 'fixed'
          : (typeof pattern === 'string' && isSafePattern(pattern)) ||
              (typeof format === 'string' && PLAIN_FORMATS.has(format))
            ? 'plain'
            : 'open';
      constraintOf.set(node, known);
    }
    return known;
  };

  const refuse = (ctx: ToolMiddlewareContext, at: string, problem: Problem, key = false): never => {
    const code = CODES[problem];
    ctx.emit({ type: 'command.refused', arg: at, code });
    // A key is the model's text: the refusal names where it stands, never the key itself.
    const where = key
      ? `a key ${at === '' ? 'of the arguments' : `in argument '${at}'`}`
      : `argument '${at}'`;
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' ${where} ${WORDS[problem]}`,
        'Retrying with the same text will not help',
        problem === 'option'
          ? 'Pass the operand without a leading dash (for a file, write ./-name)'
          : `Pass plain words and paths without ${LISTED}, line breaks or control characters`,
      ),
      { code, detail: `command guard: '${at}' ${problem}` },
    );
  };

  /** Walks args beside their schema, without recursion: args may be nested thousands deep. */
  const judge = (ctx: ToolMiddlewareContext, schema: JsonSchema): number => {
    let count = 0;
    const stack: { at: string; value: unknown; node: unknown }[] = [
      { at: '', value: ctx.args, node: schema },
    ];
    while (stack.length > 0) {
      const { at, value, node } = stack.pop()!;
      const kind = constraint(node);
      if (kind === 'fixed') continue;
      if (typeof value === 'string') {
        const problem = problemIn(value, kind === 'plain');
        if (problem !== undefined) refuse(ctx, at, problem);
        count++;
        continue;
      }
      if (typeof value !== 'object' || value === null) continue;
      const join = (key: string) => (at === '' ? key : `${at}.${key}`);
      const schemaNode = isRecord(node) ? node : {};
      if (Array.isArray(value)) {
        const items = schemaNode['items'];
        value.forEach((item, i) =>
          stack.push({ at: join(String(i)), value: item, node: Array.isArray(items) ? items[i] : items }),
        );
        continue;
      }
      const properties = isRecord(schemaNode['properties']) ? schemaNode['properties'] : {};
      for (const [key, item] of Object.entries(value)) {
        const declared = Object.hasOwn(properties, key);
        // A key the schema does not name is model-written text too (an env map, a header map).
        if (!declared) {
          const problem = problemIn(key, false);
          if (problem !== undefined) refuse(ctx, at, problem, true);
        }
        stack.push({
          at: join(key),
          value: item,
          node: declared ? properties[key] : schemaNode['additionalProperties'],
        });
      }
    }
    return count;
  };

  return {
    name: 'command-guard',
    after: ['validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    fingerprint: `capability ${capability}${named.size > 0 ? `, tools ${[...named].sort().join(',')}` : ''}${options.values === false ? ', declared only' : ''}`,
    passThrough: (tool) =>
      guarded(tool) || options.values !== false ? undefined : { why: 'not a shell tool' },
    run: function commandGuardRun(ctx, next) {
      if (!guarded(ctx.tool)) {
        // Values first: a tool that declares nothing may still hand a value to a shell.
        if (options.values !== false)
          for (const { at, value } of stringValues(ctx.args))
            if (isShellLine(value)) refuse(ctx, at, 'shell-line');
        ctx.note('not a shell tool');
        return next();
      }
      const count = judge(ctx, ctx.tool.schema.inputSchema);
      ctx.note(`${count} string argument${count === 1 ? '' : 's'} free of shell syntax`);
      return next();
    },
  };
}
