// How a value written by a model is shown: escaped by the template, every invisible or bidi control
// character drawn as a visible marker (so RTL overrides cannot disguise text), long values folded
// under a preview and never cut, and never turned into a link.

import { html } from 'hono/html';
import type { Html } from './html';

/** Characters that render as nothing or reorder text: C0/C1 controls (but tab and newline), bidi controls, zero-width. */
// Matching control and combining characters one by one is the point here.
/* eslint-disable no-control-regex, no-misleading-character-class */
const HIDDEN =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u115F\u1160\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFF9-\uFFFB]/g;

// `test` with a global regex moves its lastIndex, which matchAll would then start from: test with a copy.
const HIDDEN_ANY = new RegExp(HIDDEN.source);
/* eslint-enable no-control-regex, no-misleading-character-class */

const codePoint = (char: string) => `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** `text` with each hidden character as a marker; the text itself is escaped by the template. */
export function visible(text: string): Html | string {
  if (!HIDDEN_ANY.test(text)) return text;
  const parts: (Html | string)[] = [];
  let last = 0;
  for (const match of text.matchAll(HIDDEN)) {
    const at = match.index;
    if (at > last) parts.push(text.slice(last, at));
    const code = codePoint(match[0]);
    parts.push(html`<span class="hidden-char" title="invisible character ${code}">[${code}]</span>`);
    last = at + match[0].length;
  }
  if (last < text.length) parts.push(text.slice(last));
  return html`${parts}`;
}

/**
 * Indented JSON for an editing field, with every hidden character written as a `\\u` escape: the
 * same value once parsed, but nothing in the field can reorder or hide text.
 */
export function jsonForEditing(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    HIDDEN,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Whether `text` holds characters `visible` marks. */
export const hasHidden = (text: string): boolean => HIDDEN_ANY.test(text);

const FOLD_CHARS = 400;
const FOLD_LINES = 12;
const PREVIEW_CHARS = 120;

const grouped = (n: number) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** The text a value is shown as: strings as they are, everything else as indented JSON. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return '[a value that cannot be shown as JSON]';
  }
}

/** One value in full: a `<pre>`, folded under its first characters when long. */
export function fullValue(value: unknown): Html {
  const text = textOf(value);
  const kind = typeof value === 'string' ? 'string' : 'json';
  const warn = hasHidden(text)
    ? html`<p class="warning">
        This value contains invisible or direction-changing characters, shown as [U+…].
      </p>`
    : '';
  const body = html`<pre class="value ${kind}" dir="ltr">${visible(text)}</pre>`;
  const lines = text.split('\n').length;
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return html`${warn}${body}`;
  const preview = text.slice(0, PREVIEW_CHARS).replace(/\s+/g, ' ');
  return html`${warn}
    <details class="fold">
      <summary>
        <span class="preview" dir="ltr">${visible(preview)}…</span>
        <span class="size">${grouped(text.length)} characters, ${grouped(lines)} lines: show all</span>
      </summary>
      ${body}
    </details>`;
}

/** Every top-level argument with its value in full. */
export function argumentTable(args: Readonly<Record<string, unknown>>): Html {
  const keys = Object.keys(args);
  if (keys.length === 0) return html`<p class="muted">No arguments.</p>`;
  return html`<table class="args">
    <tbody>
      ${keys.map(
        (key) =>
          html`<tr>
            <th scope="row" dir="ltr">${visible(key)}</th>
            <td>${fullValue(args[key])}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

const SUMMARY_CHARS = 160;

/**
 * The arguments on one line for the list, `key: value, …` with values as compact JSON, shortened
 * to `SUMMARY_CHARS` with a marked ellipsis (the check-in's page shows every value in full).
 */
export function argsSummary(args: Readonly<Record<string, unknown>>): string {
  const parts = Object.keys(args).map((key) => {
    let value: string;
    try {
      value = JSON.stringify(args[key]) ?? String(args[key]);
    } catch {
      value = '[not JSON]';
    }
    return `${key}: ${value}`;
  });
  const text = parts.join(', ').replace(/\s+/g, ' ');
  return text.length <= SUMMARY_CHARS ? text : `${text.slice(0, SUMMARY_CHARS)}…`;
}
