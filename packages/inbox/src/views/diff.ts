// A tool definition that changed since it was pinned, as a line diff of its indented JSON: what the
// approver must see before trusting a call to a tool whose description or schema moved.

import { canonicalJson } from '@toolgate/core';
import { diffArrays } from 'diff';
import { html } from 'hono/html';
import type { Html } from './html';
import { visible } from './values';

/** A pinned tool definition and the one the server serves now; from the pinning layer. */
export interface PinDiff {
  readonly before: unknown;
  readonly after: unknown;
  /** When the pinned definition was accepted (ISO 8601). */
  readonly pinnedAt?: string;
}

/** One line of a definition diff: kept, removed (`-`) or added (`+`). */
export interface DiffLine {
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

// A definition comes from a remote server and may be large or built to be slow to diff: past this
// many edits the diff is everything removed, then everything added.
const MAX_EDIT_LENGTH = 2_000;

/** A definition as indented JSON with sorted keys, one array entry per line. */
export function definitionLines(value: unknown): string[] {
  try {
    return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2).split('\n');
  } catch {
    return ['[a definition that cannot be shown as JSON]'];
  }
}

/** A line diff (jsdiff's Myers diff) of two line lists. */
export function lineDiff(before: readonly string[], after: readonly string[]): DiffLine[] {
  const parts = diffArrays([...before], [...after], { maxEditLength: MAX_EDIT_LENGTH });
  if (parts === undefined)
    return [
      ...before.map((text) => ({ op: '-' as const, text })),
      ...after.map((text) => ({ op: '+' as const, text })),
    ];
  return parts.flatMap((part) =>
    part.value.map((text) => ({
      op: part.added ? ('+' as const) : part.removed ? ('-' as const) : (' ' as const),
      text,
    })),
  );
}

/** The diff of a pinned definition and the one served now, for the inbox page and the CLI alike. */
export function definitionDiff(before: unknown, after: unknown): DiffLine[] {
  return lineDiff(definitionLines(before), definitionLines(after));
}

const CLASS = { ' ': 'same', '-': 'removed', '+': 'added' } as const;

export function pinDiffView(diff: PinDiff): Html {
  const lines = definitionDiff(diff.before, diff.after);
  return html`<section class="pin-diff">
    <h2>This tool's definition changed since it was pinned</h2>
    <p class="warning">
      The server now describes this tool
      differently${diff.pinnedAt !== undefined ? html` than the definition pinned on ${diff.pinnedAt}` : ''}.
      Check what changed before you approve.
    </p>
    <pre class="diff" dir="ltr">
${lines.map((line) => html`<span class="${CLASS[line.op]}">${line.op} ${visible(line.text)}</span> `)}</pre>
  </section>`;
}
