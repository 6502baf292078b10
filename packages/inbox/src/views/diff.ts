// A tool definition that changed since it was pinned, as a line diff of its indented JSON: what the
// approver must see before trusting a call to a tool whose description or schema moved.

import { canonicalJson } from '@toolgate/core';
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

type Line = { readonly op: ' ' | '-' | '+'; readonly text: string };

const MAX_CELLS = 4_000_000;

function pretty(value: unknown): string[] {
  try {
    return JSON.stringify(JSON.parse(canonicalJson(value)), null, 2).split('\n');
  } catch {
    return ['[a definition that cannot be shown as JSON]'];
  }
}

/** Longest-common-subsequence line diff; past MAX_CELLS, everything removed then everything added. */
export function lineDiff(before: readonly string[], after: readonly string[]): Line[] {
  const n = before.length;
  const m = after.length;
  if (n * m > MAX_CELLS)
    return [
      ...before.map((text) => ({ op: '-' as const, text })),
      ...after.map((text) => ({ op: '+' as const, text })),
    ];
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] =
        before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: Line[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && before[i] === after[j]) {
      out.push({ op: ' ', text: before[i]! });
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push({ op: '+', text: after[j++]! });
    } else {
      out.push({ op: '-', text: before[i++]! });
    }
  }
  return out;
}

const CLASS = { ' ': 'same', '-': 'removed', '+': 'added' } as const;

export function pinDiffView(diff: PinDiff): Html {
  const lines = lineDiff(pretty(diff.before), pretty(diff.after));
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
