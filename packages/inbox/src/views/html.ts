// The one type every view returns: what hono/html's template builds (escaped by default).

import type { HtmlEscapedString } from 'hono/utils/html';

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** Whether a component's answer came from an escaping template (`html`), not a bare string. */
export function isHtml(value: unknown): value is HtmlEscapedString {
  return value instanceof String && (value as { isEscaped?: unknown }).isEscaped === true;
}
