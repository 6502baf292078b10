// Whether a JSON Schema `pattern` admits only characters a shell reads literally. Decided from the
// pattern's syntax, conservatively: anchored at both ends, no top-level alternation, and every atom
// (literal, escape, class, range) free of shell metacharacters, control characters and `.`.
// A pattern this cannot read is not safe.

/** Characters a POSIX shell gives a meaning, plus quotes, backslash and line breaks. */
export const SHELL_METACHARACTERS = ';&|`$<>(){}[]*?!~#\'"\\\n\r';

const unsafeCode = (code: number) =>
  code < 0x20 || code === 0x7f || (code < 0x80 && SHELL_METACHARACTERS.includes(String.fromCharCode(code)));

/** Code points of the characters a shell treats specially, for range checks. */
const UNSAFE_CODES = [...Array(0x80).keys()].filter(unsafeCode);

const SAFE_CLASS_ESCAPES = new Set(['d', 'w']);
const LITERAL_ESCAPES = new Set(['.', '-', '_', '/', ':', '+', ',', '@', '%', '=', '^', ' ']);

/** Reads one escape at `i` (just past the backslash): the code point it stands for, 'class' for a safe class, or undefined. */
function readEscape(source: string, i: number): { code: number | 'class'; next: number } | undefined {
  const char = source[i];
  if (char === undefined) return undefined;
  if (SAFE_CLASS_ESCAPES.has(char)) return { code: 'class', next: i + 1 };
  if (LITERAL_ESCAPES.has(char)) return { code: char.charCodeAt(0), next: i + 1 };
  if (char === 'x' && /^[0-9a-fA-F]{2}$/.test(source.slice(i + 1, i + 3)))
    return { code: parseInt(source.slice(i + 1, i + 3), 16), next: i + 3 };
  if (char === 'u' && /^[0-9a-fA-F]{4}$/.test(source.slice(i + 1, i + 5)))
    return { code: parseInt(source.slice(i + 1, i + 5), 16), next: i + 5 };
  if (/[A-Za-z0-9]/.test(char)) return undefined;
  // Any other escaped punctuation is that character itself.
  return { code: char.charCodeAt(0), next: i + 1 };
}

/** Reads a class starting at `i` (just past '['); the index past its ']' when every member is safe. */
function readClass(source: string, i: number): number | undefined {
  if (source[i] === '^') return undefined;
  let previous: number | undefined;
  let j = i;
  while (j < source.length && source[j] !== ']') {
    let code: number | 'class';
    if (source[j] === '\\') {
      const read = readEscape(source, j + 1);
      if (read === undefined) return undefined;
      ({ code } = read);
      j = read.next;
    } else {
      code = source.codePointAt(j)!;
      j += code > 0xffff ? 2 : 1;
    }
    if (code === 'class') {
      previous = undefined;
      continue;
    }
    if (unsafeCode(code)) return undefined;
    if (code === 0x2d /* '-' */ && previous !== undefined && j < source.length && source[j] !== ']') {
      // A range: its end, and nothing unsafe between the two ends.
      let end: number;
      if (source[j] === '\\') {
        const read = readEscape(source, j + 1);
        if (read === undefined || read.code === 'class') return undefined;
        end = read.code;
        j = read.next;
      } else {
        end = source.codePointAt(j)!;
        j += end > 0xffff ? 2 : 1;
      }
      const start = previous;
      if (unsafeCode(end) || UNSAFE_CODES.some((c) => c >= start && c <= end)) return undefined;
      previous = undefined;
      continue;
    }
    previous = code;
  }
  return j < source.length ? j + 1 : undefined;
}

/** Whether every string `pattern` matches (as JSON Schema's unanchored search) is free of shell metacharacters. */
export function isSafePattern(pattern: string): boolean {
  if (pattern.length < 2 || !pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$'))
    return false;
  let depth = 0;
  let i = 1;
  const end = pattern.length - 1;
  while (i < end) {
    const char = pattern[i]!;
    if (char === '\\') {
      const read = readEscape(pattern, i + 1);
      if (read === undefined || (read.code !== 'class' && unsafeCode(read.code))) return false;
      i = read.next;
      continue;
    }
    if (char === '[') {
      const next = readClass(pattern, i + 1);
      if (next === undefined) return false;
      i = next;
      continue;
    }
    if (char === '{') {
      // A quantifier; a brace that is not one is a literal brace, which a shell expands.
      const quantifier = /^\{\d+(?:,\d*)?\}/.exec(pattern.slice(i, i + 24));
      if (quantifier === null) return false;
      i += quantifier[0].length;
      continue;
    }
    if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (char === '|') {
      if (depth === 0) return false;
    } else if (char === '.') return false;
    else if (!'?*+^$'.includes(char) && unsafeCode(char.charCodeAt(0))) return false;
    i++;
  }
  return depth === 0 && i === end;
}
