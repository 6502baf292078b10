// One place that turns text into the forms a screen matches against, so the result screen, the
// description screen and the secret guard see through the same disguises: HTML entities, invisible
// and soft-hyphen characters, compatibility forms (NFKC), look-alike letters from other scripts
// (Unicode's confusables data), letter spacing, case, base64 and hex runs, and reversal. Every step
// reads its input once and the decoded forms are bounded, so normalizing is linear in the text.

import unhomoglyph from 'unhomoglyph';

/* eslint-disable no-control-regex, no-misleading-character-class -- these patterns exist to find control, joiner and invisible characters */

// Every invisible character, single zero-width ones and the soft hyphen included, so none can split a word.
const INVISIBLE =
  /[\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}\uFE00-\uFE0F\u200B-\u200F\u2060-\u2064\uFEFF\u00AD\u034F\u180E\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069]/gu;
const NON_ASCII = /[^\u0000-\u007F]/;
const NON_ASCII_CHAR = /[^\u0000-\u007F]/gu;
const UPPER_ASCII = /[A-Z]/g;

// Named entities an attacker reaches for to break a word; numeric ones cover the rest.
const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  shy: '\u00AD',
  zwj: '\u200D',
  zwnj: '\u200C',
  lrm: '\u200E',
  rlm: '\u200F',
  colon: ':',
  sol: '/',
  bsol: '\\',
  lowbar: '_',
  hyphen: '-',
  dash: '-',
  period: '.',
  comma: ',',
  excl: '!',
  quest: '?',
  lsqb: '[',
  rsqb: ']',
  lbrack: '[',
  rbrack: ']',
  vert: '|',
  verbar: '|',
  num: '#',
  newline: '\n',
  tab: '\t',
};
const ENTITY = /&(?:#[xX]([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([A-Za-z]{2,8}));?/g;

/** `text` with HTML character references replaced by the characters they name. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY, (whole, hex: string | undefined, dec: string | undefined, name?: string) => {
    if (name !== undefined) return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
    const code = parseInt(hex ?? dec!, hex !== undefined ? 16 : 10);
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
      ? String.fromCodePoint(code)
      : whole;
  });
}

/** `text` without invisible characters (zero-width, soft hyphen, tags, variation selectors, bidi controls). */
export function dropInvisible(text: string): string {
  return text.replace(INVISIBLE, '');
}

// Confusables map a few ASCII letters onto others ('m' to "rn"); only other scripts' letters are folded.
const confusableCache = new Map<string, string>();
function asciiLookAlike(char: string): string {
  let folded = confusableCache.get(char);
  if (folded === undefined) {
    const target = unhomoglyph(char);
    folded = NON_ASCII.test(target) ? char : target.toLowerCase();
    // The cache holds at most one entry per distinct character (bounded by Unicode).
    confusableCache.set(char, folded);
  }
  return folded;
}

/** `text` with letters of other scripts that look like ASCII letters (Cyrillic а, Greek ο) read as those letters. */
export function foldConfusables(text: string): string {
  return NON_ASCII.test(text) ? text.replace(NON_ASCII_CHAR, asciiLookAlike) : text;
}

/** ASCII case folded without changing the text's length, so positions still line up with the original. */
export function lowerAscii(text: string): string {
  return NON_ASCII.test(text)
    ? text.replace(UPPER_ASCII, (c) => String.fromCharCode(c.charCodeAt(0) + 32))
    : text.toLowerCase();
}

/**
 * The text a screen matches: entities decoded, invisible characters removed, NFKC, lower case,
 * look-alike letters folded to ASCII.
 */
export function fold(text: string): string {
  let out = dropInvisible(decodeEntities(text));
  if (NON_ASCII.test(out)) out = foldConfusables(out.normalize('NFKC').toLowerCase());
  return out.toLowerCase();
}

// Three or more single letters each followed by one separator ("i g n o r e", "i.g.n.o.r.e"): a word spelled out.
const SPACED_LETTERS = /(?:\p{L}[ ._*|~-]){2,}\p{L}(?![\p{L}\p{N}])/gu;
const SEPARATORS = /[ ._*|~-]/g;

/** `text` with letter-spaced runs written together ("i g n o r e" reads "ignore"); undefined when there are none. */
export function joinSpacedLetters(text: string): string | undefined {
  SPACED_LETTERS.lastIndex = 0;
  if (!SPACED_LETTERS.test(text)) return undefined;
  return text.replace(SPACED_LETTERS, (run) => run.replace(SEPARATORS, ''));
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** `text` read backwards, code point by code point. */
export function reversed(text: string): string {
  // Without a surrogate, each UTF-16 unit is a code point: the quicker split reads the same.
  return SURROGATE.test(text) ? Array.from(text).reverse().join('') : text.split('').reverse().join('');
}

const BASE64_RUN = /[A-Za-z0-9+/_-]{24,}={0,2}/g;
const HEX_RUN = /(?:[0-9a-fA-F]{2}){12,}/g;
/** Decoded text kept per input: enough for any instruction or credential, small enough to bound the work. */
export const MAX_DECODED_CHARS = 65_536;
const PRINTABLE = /^[\t\n\r\u0020-\u007E\u00A0-\uFFFF]*$/;

function base64Text(run: string): string | undefined {
  let part = run.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  const tail = part.length % 4;
  part = tail === 1 ? part.slice(0, -1) : tail === 0 ? part : `${part}${'='.repeat(4 - tail)}`;
  let bytes: string;
  try {
    bytes = atob(part);
  } catch {
    return undefined;
  }
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(
      Uint8Array.from(bytes, (c) => c.charCodeAt(0)),
    );
    return PRINTABLE.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

function hexText(run: string): string | undefined {
  let text = '';
  for (let i = 0; i < run.length; i += 2) text += String.fromCharCode(parseInt(run.slice(i, i + 2), 16));
  return PRINTABLE.test(text) ? text : undefined;
}

/**
 * The printable text that base64 and hex runs in `text` decode to, `layers` deep (base64 of base64),
 * at most `MAX_DECODED_CHARS` characters in all. Lines of wrapped base64 are read as one run.
 */
export function decodedRuns(text: string, layers = 2): string[] {
  const out: string[] = [];
  let budget = MAX_DECODED_CHARS;
  let level = [text];
  for (let layer = 0; layer < layers && level.length > 0 && budget > 0; layer++) {
    const next: string[] = [];
    for (const source of level) {
      // Wrapped base64 (76 characters a line) reads as one run once line breaks are gone.
      const joined = /[A-Za-z0-9+/=]\r?\n[A-Za-z0-9+/]/.test(source)
        ? source.replace(/([A-Za-z0-9+/=])\r?\n(?=[A-Za-z0-9+/])/g, '$1')
        : source;
      for (const match of joined.matchAll(BASE64_RUN)) {
        if (budget <= 0) break;
        const decoded = base64Text(match[0].slice(0, budget * 2));
        if (decoded === undefined || decoded.length < 8) continue;
        budget -= decoded.length;
        next.push(decoded);
      }
      for (const match of joined.matchAll(HEX_RUN)) {
        if (budget <= 0) break;
        const decoded = hexText(match[0].slice(0, budget * 2));
        if (decoded === undefined) continue;
        budget -= decoded.length;
        next.push(decoded);
      }
    }
    out.push(...next);
    level = next;
  }
  return out;
}

// Cheap tests that say a form is worth building.
const MAYBE_ENCODED = /[A-Za-z0-9+/_-]{24}|(?:[0-9a-fA-F]{2}){12}/;

/**
 * Every form of `text` a screen should match against: the text folded, with spaced letters joined,
 * what its base64 and hex runs say (folded), and all of that reversed. The first form is `fold(text)`.
 */
export function screenForms(text: string): string[] {
  const folded = fold(text);
  const forms = [folded];
  const joined = joinSpacedLetters(folded);
  if (joined !== undefined) forms.push(joined);
  if (MAYBE_ENCODED.test(text)) for (const decoded of decodedRuns(text)) forms.push(fold(decoded));
  const count = forms.length;
  for (let i = 0; i < count; i++) forms.push(reversed(forms[i]!));
  return forms;
}

/**
 * Forms of `text` a credential could hide in, case kept (credential shapes are case-sensitive; the
 * caller matches them in any case): entities, invisible characters and look-alikes undone, white
 * space squeezed out (spaced letters, wrapped lines), reversed, and base64 and hex decoded twice.
 */
export function secretForms(text: string): string[] {
  let plain = dropInvisible(decodeEntities(text));
  if (NON_ASCII.test(plain)) plain = foldConfusables(plain.normalize('NFKC'));
  const forms = plain === text ? [text] : [text, plain];
  const squeezed = plain.replace(/\s+/g, '');
  if (squeezed !== plain) forms.push(squeezed);
  const count = forms.length;
  for (let i = 0; i < count; i++) forms.push(reversed(forms[i]!));
  if (MAYBE_ENCODED.test(squeezed)) {
    for (const decoded of decodedRuns(squeezed)) forms.push(decoded, reversed(decoded));
    if (squeezed !== text && MAYBE_ENCODED.test(text)) forms.push(...decodedRuns(text));
  }
  return forms;
}
