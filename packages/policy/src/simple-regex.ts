// A linear-time matcher for the simple patterns policies mostly use (`^[a-z0-9._-]+@example\.com$`,
// `^BILL-[0-9]{4,8}$`, `^(cn|ru)-`): a sequence of literal characters, classes and `.`, each optionally
// quantified (`*`, `+`, `?`, `{m}`, `{m,n}`), between optional `^` and `$`, and alternatives of such
// (`a|b`, unquantified groups). It simulates each alternative's NFA over the input's code points, so
// its time is linear in the input like RE2's, at a fraction of RE2JS's cost per call. Any other
// pattern (quantified groups, flags, word boundaries, Unicode classes) is left to RE2.

/** Whether a code point is in one atom's set. */
type Test = (cp: number) => boolean;

interface Atom {
  readonly test: Test;
  /** The one character it matches, when it is a literal. */
  readonly literal?: string;
  readonly min: number;
  /** Infinity for `*` and `+`. */
  readonly max: number;
}

// States fit one 32-bit mask: state k is bit k, the accepting state bit n.
const MAX_STATES = 30;

const DIGIT: Test = (c) => c >= 48 && c <= 57;
const WORD: Test = (c) => DIGIT(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
// RE2's \s: [\t\n\f\r ].
const SPACE: Test = (c) => c === 9 || c === 10 || c === 12 || c === 13 || c === 32;
const not =
  (t: Test): Test =>
  (c) =>
    !t(c);

const ESCAPED_LITERALS = new Set('\\.+*?()|[]{}^$-/ '.split(''));

/** `\d`, `\w`, `\s` (and negations), or an escaped literal; undefined for anything else. */
function escapeTest(ch: string): Test | undefined {
  switch (ch) {
    case 'd':
      return DIGIT;
    case 'D':
      return not(DIGIT);
    case 'w':
      return WORD;
    case 'W':
      return not(WORD);
    case 's':
      return SPACE;
    case 'S':
      return not(SPACE);
    case 'n':
      return (c) => c === 10;
    case 't':
      return (c) => c === 9;
    default:
      if (!ESCAPED_LITERALS.has(ch)) return undefined;
      return literal(ch);
  }
}

function literal(ch: string): Test {
  const code = ch.codePointAt(0)!;
  return (c) => c === code;
}

/** A bracket class from `pattern[i]` (after `[`); answers the test and the index after `]`. */
function parseClass(pattern: string, start: number): { test: Test; next: number } | undefined {
  let i = start;
  const negated = pattern[i] === '^';
  if (negated) i++;
  const parts: Test[] = [];
  const ranges: [number, number][] = [];
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    let ch = pattern[i]!;
    let lo: number;
    if (ch === '\\') {
      const escaped = pattern[i + 1];
      if (escaped === undefined) return undefined;
      const test = escapeTest(escaped);
      if (test === undefined) return undefined;
      i += 2;
      if ('dDwWsS'.includes(escaped)) {
        if (pattern[i] === '-' && pattern[i + 1] !== ']') return undefined;
        parts.push(test);
        continue;
      }
      lo = escaped.codePointAt(0)!;
    } else if (ch === '[') {
      return undefined; // [[:alpha:]] and nested classes: RE2's.
    } else {
      lo = ch.codePointAt(0)!;
      i += ch.length;
    }
    if (pattern[i] === '-' && pattern[i + 1] !== undefined && pattern[i + 1] !== ']') {
      ch = pattern[i + 1]!;
      if (ch === '\\' || ch === '[') return undefined;
      const hi = ch.codePointAt(0)!;
      if (hi < lo) return undefined;
      ranges.push([lo, hi]);
      i += 2;
    } else ranges.push([lo, lo]);
  }
  if (pattern[i] !== ']') return undefined;
  const inSet: Test = (c) => {
    for (const [lo, hi] of ranges) if (c >= lo && c <= hi) return true;
    for (const part of parts) if (part(c)) return true;
    return false;
  };
  return { test: negated ? (c) => !inSet(c) : inSet, next: i + 1 };
}

/** The pattern's atoms and anchors, or undefined when it is not one this matcher runs exactly as RE2. */
function parse(pattern: string): { atoms: Atom[]; start: boolean; end: boolean } | undefined {
  if (/[\uD800-\uDFFF]/.test(pattern)) return undefined;
  let i = 0;
  const start = pattern.startsWith('^');
  if (start) i = 1;
  let end = false;
  const atoms: Atom[] = [];
  while (i < pattern.length) {
    const ch = pattern[i]!;
    let test: Test;
    let literalChar: string | undefined;
    if (ch === '$' && i === pattern.length - 1) {
      end = true;
      i++;
      break;
    }
    if ('()|^$*+?{}'.includes(ch)) return undefined;
    if (ch === '\\') {
      const escaped = pattern[i + 1];
      if (escaped === undefined) return undefined;
      const t = escapeTest(escaped);
      if (t === undefined) return undefined;
      test = t;
      if (ESCAPED_LITERALS.has(escaped)) literalChar = escaped;
      i += 2;
    } else if (ch === '[') {
      const parsed = parseClass(pattern, i + 1);
      if (parsed === undefined) return undefined;
      test = parsed.test;
      i = parsed.next;
    } else if (ch === '.') {
      test = (c) => c !== 10;
      i++;
    } else {
      const cp = pattern.codePointAt(i)!;
      test = (c) => c === cp;
      literalChar = String.fromCodePoint(cp);
      i += cp > 0xffff ? 2 : 1;
    }
    let min = 1;
    let max = 1;
    const q = pattern[i];
    if (q === '*' || q === '+' || q === '?') {
      min = q === '+' ? 1 : 0;
      max = q === '?' ? 1 : Infinity;
      i++;
    } else if (q === '{') {
      const m = /^\{(\d{1,3})(,(\d{0,3}))?\}/.exec(pattern.slice(i));
      if (m === null) return undefined;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (max < min) return undefined;
      i += m[0].length;
    }
    // Lazy and possessive forms change what RE2 reports only for submatches, which matches() ignores,
    // but keep to the plain forms.
    if (pattern[i] === '?' || pattern[i] === '+') return undefined;
    atoms.push({ test, min, max, ...(literalChar !== undefined ? { literal: literalChar } : {}) });
  }
  return { atoms, start, end };
}

const MAX_ALTERNATIVES = 16;

/**
 * The pattern as alternatives without groups or `|`, when it is one: top-level `a|b`, and groups
 * `(…)`/`(?:…)` without a quantifier, distributed (`^(cn|ru)-` is `^cn-` or `^ru-`). Undefined for a
 * quantified group, flags or anything else; matches() asks only whether some alternative matches.
 */
function alternativesOf(pattern: string): string[] | undefined {
  // Top-level branches, split where no class, group or escape holds the `|`.
  const branches: string[] = [];
  let depth = 0;
  let inClass = false;
  let classStart = -1;
  let from = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '\\') i++;
    else if (inClass) inClass = ch !== ']' || i === classStart;
    else if (ch === '[') {
      inClass = true;
      classStart = i + 1 + (pattern[i + 1] === '^' ? 1 : 0);
    } else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '|' && depth === 0) {
      branches.push(pattern.slice(from, i));
      from = i + 1;
    }
    if (depth < 0) return undefined;
  }
  if (depth !== 0 || inClass) return undefined;
  branches.push(pattern.slice(from));
  const out: string[] = [];
  for (const branch of branches) {
    const open = firstGroup(branch);
    if (open === undefined) {
      out.push(branch);
    } else if (open === null) {
      return undefined;
    } else {
      const { start, innerStart, end } = open;
      if (/^[*+?{]/.test(branch.slice(end + 1))) return undefined;
      const inner = alternativesOf(branch.slice(innerStart, end));
      if (inner === undefined) return undefined;
      for (const alternative of inner) {
        const expanded = alternativesOf(branch.slice(0, start) + alternative + branch.slice(end + 1));
        if (expanded === undefined) return undefined;
        out.push(...expanded);
      }
    }
    if (out.length > MAX_ALTERNATIVES) return undefined;
  }
  return out;
}

/** The first group of a branch: where it opens, where its content starts, its `)`; null when it is not a plain group. */
function firstGroup(branch: string): { start: number; innerStart: number; end: number } | null | undefined {
  let inClass = false;
  let classStart = -1;
  for (let i = 0; i < branch.length; i++) {
    const ch = branch[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (ch === ']' && i !== classStart) inClass = false;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      classStart = i + 1 + (branch[i + 1] === '^' ? 1 : 0);
      continue;
    }
    if (ch !== '(') continue;
    let innerStart = i + 1;
    if (branch[innerStart] === '?') {
      if (branch[innerStart + 1] !== ':') return null;
      innerStart += 2;
    }
    let depth = 1;
    let innerClass = false;
    let innerClassStart = -1;
    for (let j = innerStart; j < branch.length; j++) {
      const c = branch[j];
      if (c === '\\') {
        j++;
        continue;
      }
      if (innerClass) {
        if (c === ']' && j !== innerClassStart) innerClass = false;
        continue;
      }
      if (c === '[') {
        innerClass = true;
        innerClassStart = j + 1 + (branch[j + 1] === '^' ? 1 : 0);
      } else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return { start: i, innerStart, end: j };
    }
    return null;
  }
  return undefined;
}

/** A matcher with `matches()`'s semantics (found anywhere unless anchored), or undefined. */
export function simpleMatcher(pattern: string): ((text: string) => boolean) | undefined {
  const alternatives = alternativesOf(pattern);
  if (alternatives === undefined) return undefined;
  if (alternatives.length === 1) return sequenceMatcher(alternatives[0]!);
  const matchers = alternatives.map(sequenceMatcher);
  if (matchers.some((m) => m === undefined)) return undefined;
  const all = matchers as ((text: string) => boolean)[];
  return (text) => all.some((m) => m(text));
}

/** A matcher for a pattern without groups or alternation. */
function sequenceMatcher(pattern: string): ((text: string) => boolean) | undefined {
  const parsed = parse(pattern);
  if (parsed === undefined) return undefined;
  // Unrolled into single-character states: `x{2,4}` is x x x? x?; `x+` is x x*.
  const tests: Test[] = [];
  const optional: boolean[] = [];
  const loops: boolean[] = [];
  for (const atom of parsed.atoms) {
    const copies = atom.max === Infinity ? Math.max(atom.min, 1) : atom.max;
    if (tests.length + copies > MAX_STATES) return undefined;
    for (let k = 0; k < copies; k++) {
      tests.push(atom.test);
      optional.push(k >= atom.min);
      loops.push(atom.max === Infinity && k === copies - 1);
    }
  }
  const n = tests.length;
  const { start: anchoredStart, end: anchoredEnd } = parsed;
  // Only literal characters: a string comparison answers.
  if (parsed.atoms.every((a) => a.literal !== undefined && a.min === 1 && a.max === 1)) {
    const text = parsed.atoms.map((a) => a.literal).join('');
    if (anchoredStart && anchoredEnd) return (t) => t === text;
    if (anchoredStart) return (t) => t.startsWith(text);
    if (anchoredEnd) return (t) => t.endsWith(text);
    return (t) => t.includes(text);
  }
  let optionalMask = 0;
  let loopMask = 0;
  for (let k = 0; k < n; k++) {
    if (optional[k]) optionalMask |= 1 << k;
    if (loops[k]) loopMask |= 1 << k;
  }
  const accept = 1 << n;
  // Adds the states reached through optional ones without reading a character.
  const close = (set: number): number => {
    for (;;) {
      const grown = set | ((set & optionalMask) << 1);
      if (grown === set) return set;
      set = grown;
    }
  };
  const start = close(1);
  return (text) => {
    let current = start;
    if ((current & accept) !== 0 && !anchoredEnd) return true;
    for (let i = 0; i < text.length;) {
      const cp = text.codePointAt(i)!;
      i += cp > 0xffff ? 2 : 1;
      let next = 0;
      let pending = current & ~accept;
      while (pending !== 0) {
        const low = pending & -pending;
        pending ^= low;
        if (!tests[31 - Math.clz32(low)]!(cp)) continue;
        next |= (low << 1) | (low & loopMask);
      }
      if (!anchoredStart) next |= 1;
      if (next === 0) return false;
      next = close(next);
      if ((next & accept) !== 0 && !anchoredEnd) return true;
      current = next;
    }
    return (current & accept) !== 0;
  };
}
