// The secret guard: a model being used to exfiltrate. A call whose arguments carry a credential-
// shaped value (gitleaks-style rules, also inside percent, base64 and hex encodings) or a credential
// value this guard has seen resolved (in every form core's redactor knows) is refused; results are
// scanned with the same rules and the matches redacted before the model reads them.

import {
  isContentResult,
  redact,
  redactValue,
  refusalReason,
  type Middleware,
  type Tool,
  type ToolMiddlewareContext,
} from '@toolgate/core';
import {
  CREDENTIAL_RULES,
  findCredentials,
  mayHoldReversed,
  redactCredentials,
  type CredentialFinding,
  type CredentialRule,
} from './internal/credential-rules';
import { secretForms } from './internal/normalize';
import { mapStrings, someString } from './internal/values';

export interface SecretGuardOptions {
  /** Refuse calls whose arguments carry a credential; default true. */
  readonly args?: boolean;
  /** Redact credential-shaped values (and known credential values) from results; default true. */
  readonly results?: boolean;
  /** Also read arguments through their percent, base64 and hex encodings; default true. */
  readonly decode?: boolean;
  /** Credential values to refuse besides those resolved through this guard's chain (8 characters or more). */
  readonly values?: readonly string[];
  /** How many resolved credential values to remember, most recent first; default 1000. */
  readonly remember?: number;
  /** Rule ids to leave out everywhere (e.g. `'jwt'`). */
  readonly except?: readonly string[];
  /** Rule ids to leave out per tool: `{ verify_token: ['jwt'] }`. */
  readonly exceptFor?: Readonly<Record<string, readonly string[]>>;
}

/** The ids of the built-in credential rules, for `except`. */
export const SECRET_RULE_IDS: readonly string[] = Object.freeze(CREDENTIAL_RULES.map((rule) => rule.id));

/** Shorter values turn up by chance in ordinary text. */
const MIN_SECRET_CHARS = 8;

const PERCENT = /%[0-9A-Fa-f]{2}/;
const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const HEX_RUN = /(?:[0-9a-fA-F]{2}){16,}/g;
/** The shortest text either run above can match. */
const MIN_RUN_CHARS = 24;

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
}

/** What `text` says under the encodings a model might wrap a credential in (one layer each). */
function decodings(text: string): string[] {
  const out: string[] = [];
  if (PERCENT.test(text)) out.push(percentDecoded(text));
  // Shorter than a base64 run (24) or a hex run (32): no run to find, and no iterator made to look.
  if (text.length < MIN_RUN_CHARS) return out;
  for (const match of text.matchAll(BASE64_RUN)) {
    const run = match[0].replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
    // The encoding may start anywhere in a run glued to other text: read it at each alignment.
    for (let shift = 0; shift < 4; shift++) {
      // A tail of two or three characters still spells one or two bytes; a tail of one spells none.
      let part = run.slice(shift);
      const tail = part.length % 4;
      part = tail === 1 ? part.slice(0, -1) : tail === 0 ? part : `${part}${'='.repeat(4 - tail)}`;
      try {
        if (part.length >= 16) out.push(atob(part));
      } catch {
        // Not base64 at this alignment.
      }
    }
  }
  for (const match of text.matchAll(HEX_RUN)) {
    let decoded = '';
    for (let i = 0; i < match[0].length; i += 2)
      decoded += String.fromCharCode(parseInt(match[0].slice(i, i + 2), 16));
    out.push(decoded);
  }
  return out;
}

/** Longer than any credential shape: how much of each side of a seam between two strings is read. */
const SEAM_CHARS = 320;

/** Credentials that start in `first` and end in `second`, read where the two meet (bounded on each side). */
function seams(
  first: string,
  second: string,
  list: readonly CredentialRule[],
): { rule: CredentialRule; startInFirst: number; endInSecond: number }[] {
  const tail = first.slice(-SEAM_CHARS);
  const joined = `${tail}${second.slice(0, SEAM_CHARS)}`;
  return findCredentials(joined, list, false, true)
    .filter((finding) => finding.start < tail.length && finding.end > tail.length)
    .map((finding) => ({
      rule: finding.rule,
      startInFirst: first.length - tail.length + finding.start,
      endInSecond: finding.end - tail.length,
    }));
}

/**
 * `value` (JSON data already walked by mapStrings, so no deeper than it allows) with `map` applied to
 * every string value in document order, keys left alone.
 */
function valueStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) {
    const items = value.map((item: unknown) => valueStrings(item, map));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  let changed = false;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    const next = valueStrings(item, map);
    changed ||= next !== item;
    // Defined, not assigned: a '__proto__' key stays a key.
    Object.defineProperty(copy, key, { value: next, enumerable: true, writable: true, configurable: true });
  }
  return changed ? copy : value;
}

function assertValues(values: unknown): readonly string[] {
  if (values === undefined) return [];
  if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || v.length < MIN_SECRET_CHARS))
    throw new TypeError(`secretGuard: values must be strings of at least ${MIN_SECRET_CHARS} characters.`);
  // A frozen copy: the caller's array changing later changes nothing, and redaction finds its
  // redactor by the list (a list it has not seen is joined and looked up on every call).
  return Object.freeze([...(values as string[])]);
}

/**
 * Refuses calls whose arguments carry credentials, and redacts credentials from results
 * (`[redacted: aws-access-key]`; values it knows by value read `[redacted]`).
 *
 * @example
 * secretGuard({ except: ['jwt'], values: [env.DATABASE_PASSWORD] })
 */
export function secretGuard(options: SecretGuardOptions = {}): Middleware {
  const { args: scanArgs = true, results: scanResults = true, decode = true, remember = 1000 } = options;
  if (!scanArgs && !scanResults)
    throw new TypeError('secretGuard: with args and results both off there is nothing to guard.');
  if (!Number.isInteger(remember) || remember < 0)
    throw new TypeError('secretGuard: remember must be a whole number.');
  const unknownRule = [...(options.except ?? []), ...Object.values(options.exceptFor ?? {}).flat()].find(
    (id) => !SECRET_RULE_IDS.includes(id),
  );
  if (unknownRule !== undefined)
    throw new TypeError(
      `secretGuard: there is no rule '${unknownRule}'; the rules are ${SECRET_RULE_IDS.join(', ')}.`,
    );
  const fixed = assertValues(options.values);
  // Resolved credential values, oldest first; kept in this closure only, never logged or serialized.
  const resolved = new Set<string>();
  // One frozen list until a value is learned or forgotten, for the same reason as `fixed`.
  let knownList = fixed;
  const known = (): readonly string[] => knownList;
  const learn = (ctx: ToolMiddlewareContext) => {
    let changed = false;
    for (const secret of ctx.credential?.secrets() ?? []) {
      if (secret.length < MIN_SECRET_CHARS || remember === 0) continue;
      changed ||= !resolved.has(secret);
      resolved.delete(secret);
      resolved.add(secret);
      if (resolved.size > remember) resolved.delete(resolved.values().next().value as string);
    }
    if (changed) knownList = Object.freeze([...fixed, ...resolved]);
  };
  const everywhereExcept = new Set(options.except ?? []);
  const rulesFor = new WeakMap<Tool, readonly CredentialRule[]>();
  const rules = (tool: Tool) => {
    let list = rulesFor.get(tool);
    if (list === undefined) {
      const except = new Set([...everywhereExcept, ...(options.exceptFor?.[tool.schema.name] ?? [])]);
      list = CREDENTIAL_RULES.filter((rule) => !except.has(rule.id));
      rulesFor.set(tool, list);
    }
    return list;
  };

  const refuse = (ctx: ToolMiddlewareContext, at: string, what: string, rule: string): never => {
    ctx.emit({ type: 'secret.refused', arg: at, rule });
    return ctx.deny(
      refusalReason(
        `'${ctx.toolName}' argument '${at || '(the arguments)'}' contains ${what}, and credentials may not leave through tool arguments`,
        'Retrying with the same value will not help',
        'Leave credentials out of tool arguments; if the user asked you to send one, tell them it was blocked',
      ),
      { code: 'SECRET_IN_ARGS', detail: `secret guard: '${at}' ${rule}` },
    );
  };

  // Every form a credential could be disguised in: the text, what its encodings say, and the text
  // with spacing, invisible characters, look-alikes and reversal undone (internal/normalize.ts).
  const formsOf = (text: string): string[] => (decode ? [...secretForms(text), ...decodings(text)] : [text]);

  const judgeArgs = (ctx: ToolMiddlewareContext): void => {
    const list = rules(ctx.tool);
    const secrets = known();
    // Every string with its decoded forms, for the one pass that looks for known values below.
    const all: string[] = [];
    const values: string[] = [];
    someString(ctx.args, (text, at) => {
      for (const form of formsOf(text)) {
        const [finding] = findCredentials(form, list, true, decode);
        if (finding !== undefined) refuse(ctx, at, finding.rule.label, finding.rule.id);
        if (secrets.length > 0) all.push(form);
      }
      return false;
    });
    // A credential split over two arguments reads whole in their concatenation.
    someString(ctx.args, (text) => (values.push(text), false), { keys: false });
    if (decode && values.length > 1) {
      // Walk order is not the fields' order for every shape: read the parts both ways round.
      const joined = `${values.join('')}\n${values.reverse().join('')}`;
      for (const form of formsOf(joined)) {
        const [finding] = findCredentials(form, list, true, true);
        if (finding !== undefined)
          refuse(ctx, '', `${finding.rule.label} split across arguments`, finding.rule.id);
        if (secrets.length > 0) all.push(form);
      }
    }
    if (secrets.length === 0) return;
    // One pass over every form finds whether any holds a known value; only then is it located.
    const joined = all.join('\n');
    if (redact(joined, secrets) === joined) return;
    const holds = (form: string) => redact(form, secrets) !== form;
    someString(
      ctx.args,
      (text, at) =>
        (holds(text) || (decode && formsOf(text).some(holds))) &&
        refuse(ctx, at, 'a credential value this deployment holds', 'resolved-credential'),
    );
    refuse(
      ctx,
      '',
      'a credential value this deployment holds, split across arguments',
      'resolved-credential',
    );
  };

  // Credentials in one string of a result, in any case and written backwards too, by position.
  const credentialsIn = (text: string, list: readonly CredentialRule[]): CredentialFinding[] => {
    const found = findCredentials(text, list, false, true);
    if (!mayHoldReversed(text, list)) return found;
    // Reversed by UTF-16 unit, so a position maps straight back; credential shapes are ASCII.
    const backwards = text.split('').reverse().join('');
    for (const finding of findCredentials(backwards, list, false, true))
      found.push({ rule: finding.rule, start: text.length - finding.end, end: text.length - finding.start });
    return found.sort((a, b) => a.start - b.start);
  };

  /**
   * `value` with every credential that spans two or more of its strings (in walk order) redacted in
   * each string it touches: the first part reads `[redacted: <rule>]`, the others `[redacted]`.
   */
  const splitRedaction = (
    value: unknown,
    list: readonly CredentialRule[],
  ): { value: unknown; count: number; ids: string[] } => {
    const pieces: string[] = [];
    valueStrings(value, (piece) => (pieces.push(piece), piece));
    const cuts = new Map<number, { start: number; end: number; label: string }[]>();
    const cutAt = (k: number, start: number, end: number, label: string) =>
      cuts.set(k, [...(cuts.get(k) ?? []), { start, end, label }]);
    const ids: string[] = [];
    for (let k = 1; k < pieces.length; k++) {
      const [a, b] = [pieces[k - 1]!, pieces[k]!];
      for (const seam of seams(a, b, list)) {
        ids.push(seam.rule.id);
        cutAt(k - 1, seam.startInFirst, a.length, `[redacted: ${seam.rule.id}]`);
        cutAt(k, 0, seam.endInSecond, '[redacted]');
      }
    }
    if (ids.length === 0) return { value, count: 0, ids };
    let k = -1;
    const cut = valueStrings(value, (piece) => {
      k++;
      const here = cuts.get(k);
      if (here === undefined) return piece;
      let out = '';
      let at = 0;
      for (const { start, end, label } of here.sort((x, y) => x.start - y.start)) {
        if (start < at) continue;
        out += `${piece.slice(at, start)}${label}`;
        at = end;
      }
      return out + piece.slice(at);
    });
    return { value: cut, count: ids.length, ids };
  };

  const screenResult = (ctx: ToolMiddlewareContext): void => {
    const text = ctx.resultText;
    if (!ctx.ran || text === undefined) return;
    const list = rules(ctx.tool);
    const secrets = known();
    // Most results hold nothing: one look at what the model reads (and at structuredContent, which
    // an MCP result's text leaves out) clears them before any walk.
    const structured =
      isContentResult(ctx.result) && ctx.result.structuredContent !== undefined
        ? JSON.stringify(ctx.result.structuredContent)
        : '';
    const seen = `${text}\n${structured}`;
    // A credential split across two neighbouring fields reads whole where they meet (either order:
    // a walk does not keep every shape's order).
    const pieces: string[] = [];
    if (typeof ctx.result !== 'string')
      someString(ctx.result, (piece) => (pieces.push(piece), false), { keys: false });
    const split = pieces.some(
      (piece, i) =>
        i > 0 &&
        (seams(pieces[i - 1]!, piece, list).length > 0 || seams(piece, pieces[i - 1]!, list).length > 0),
    );
    if (
      !split &&
      credentialsIn(seen, list).length === 0 &&
      (secrets.length === 0 || redact(seen, secrets) === seen)
    )
      return;
    const ids = new Set<string>();
    let count = 0;
    let holdsKnown = false;
    let value: unknown;
    try {
      // An MCP result is redacted block by block (text, resources, structuredContent, JSON inside a
      // text), so what is not a credential still reaches the model.
      value =
        typeof ctx.result === 'string' || isContentResult(ctx.result)
          ? ctx.result
          : (JSON.parse(text) as unknown);
      holdsKnown = secrets.length > 0 && redact(text, secrets) !== text;
      if (holdsKnown) value = redactValue(value, secrets);
      value = mapStrings(value, (s) => {
        const findings = credentialsIn(s, list);
        if (findings.length === 0) return s;
        count += findings.length;
        for (const finding of findings) ids.add(finding.rule.id);
        return redactCredentials(s, findings);
      });
      if (split) {
        const across = splitRedaction(value, list);
        value = across.value;
        count += across.count;
        for (const id of across.ids) ids.add(id);
      }
    } catch {
      ctx.emit({ type: 'secret.withheld', rules: [...ids] });
      return ctx.deny(
        refusalReason(
          `'${ctx.toolName}' returned credentials that could not be removed from its result`,
          'Retrying will not help',
          'Ask for less, or for a part without credentials',
        ),
        { code: 'SECRET_IN_RESULT', mentionsRun: true },
      );
    }
    if (count === 0 && !holdsKnown) return;
    const rulesFound = [...ids];
    ctx.emit({
      type: 'secret.redacted',
      rules: holdsKnown ? [...rulesFound, 'resolved-credential'] : rulesFound,
      count,
    });
    ctx.setResult(
      value,
      `redacted ${[...rulesFound, ...(holdsKnown ? ['known credential values'] : [])].join(', ')}`,
    );
  };

  return {
    name: 'secret-guard',
    after: ['validate-args', 'wants'],
    before: ['check-in', 'credentials'],
    fingerprint: `${scanArgs ? 'args' : ''}${scanArgs && scanResults ? '+' : ''}${scanResults ? 'results' : ''}${decode ? ', decoded' : ''}, ${fixed.length} values${everywhereExcept.size > 0 ? `, except ${[...everywhereExcept].sort().join(',')}` : ''}`,
    run: async function secretGuardRun(ctx, next) {
      if (scanArgs) judgeArgs(ctx);
      ctx.note(scanArgs ? 'no credential in the arguments' : 'arguments not scanned');
      try {
        await next();
      } finally {
        learn(ctx);
      }
      if (scanResults) screenResult(ctx);
    },
  };
}
